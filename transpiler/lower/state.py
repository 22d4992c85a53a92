"""The lowering state: one object per compile holding the graph being built, its values, diagnostics and options.

Construct modules are functions of this state (`lower_assign(state, stmt, frame)`); they reach each
other's constructs through it: `state.lower_stmt` and `state.lower_expr` look the node's class up in
the tables of dispatch.py, and the few operations every construct needs and the graph checker's
evaluator replaces (`statements`, `call`, `lookup`, `attribute`, `assign_target`...) go through the
`Constructs` record it was made with. Its own methods make graph values: nodes, operands, parameters
read through access paths, constants.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Callable, Optional

import libcst as cst
import numpy as np

from ...graph.diagnostics import LoweringError, UnsupportedSyntaxError
from ...graph.array_like import is_foreign_array
from ...graph.guards import GuardRecorder
from ...graph.ir import Graph, Node
from ...graph.literals import is_literal
from ...graph.paths import Path
from ...graph.shape_rules import after_metadata_write
from ...graph.spans import SourceSpan
from ...graph.types import type_of_value
from ..budget import CompileBudget
from ..rules import BY_KEY, EXPRESSION_RULES, LAX, STATEMENT_RULES, rule
from ..scope import Scope
from ..static_pure import is_sealed
from ..values import (MaybeUnbound, MethodVal, RangeVal, Seq, SourceFunc, Static, UNBOUND, Undefined, describe_value,
                      freeze, is_static)
from .control import NeedsStatic, Poisoned
from .frame import closure_of


@dataclass(frozen=True)
class Constructs:
    """How each construct is lowered: the node tables and the operations constructs call across modules."""

    statements: dict          # LibCST statement class -> fn(state, stmt, frame)
    expressions: dict         # LibCST expression class -> fn(state, node, frame) -> value
    run_statements: Callable  # blocks.statements
    run_block: Callable       # blocks.block
    call: Callable            # calls.call
    lookup: Callable          # names.lookup
    attribute: Callable       # access.attribute
    op_call: Callable         # call_nodes.op_call
    assign_target: Callable   # assign.assign_target
    bind_params: Callable     # inline.bind_params


class LoweringState:
    """What one compile's lowering shares: the graph and scope being built, names read and written, diagnostics."""

    def __init__(self, root_fn, graph: Graph, constructs: Constructs, level: str = LAX, quiet: bool = False,
                 over_budget=None):
        self.constructs = constructs   # how each construct is lowered (dispatch.py)
        self.graph = graph
        self.level = level
        self.quiet = quiet          # collect diagnostics without warnings (graphjit check)
        self.diagnostics: list = []
        self.fallbacks = 0
        self.scope = Scope(graph)
        self.params: dict[str, Node] = {}
        self.consts: list = []
        self.recipes: dict = {}
        self.sources: list = []
        self.inlined: dict = {}
        self.guards = GuardRecorder()
        self.depth = 0
        self.budget = CompileBudget(over=dict(over_budget or {}))   # transpiler/budget.py
        self.function_sources: dict = {}      # code object -> (parsed file, FunctionDef), for this compile
        self.attribute_writes_noted: set = set()  # function nodes `note_attribute_writes` has visited
        self.mutated_attrs: set = set()   # attribute names this compile assigns (read at call time)
        self.unrollable = 0   # > 0 while lowering a range loop that could still be unrolled
        self.return_span = None
        self.root_fn = root_fn
        self.root_globals = getattr(root_fn, "__globals__", {})
        self.sealed = is_sealed(self.root_globals)   # a file read by check/transpile: static_pure decides calls
        self.root_closure = closure_of(root_fn)
        self.pending_warnings: list = []      # (message, category, file, line), issued once lowering is final
        # Python containers (by id) and module globals ((id of the module dict, name)) this compile
        # changes, and those read at call time because an earlier lowering found them changed
        self.container_writes: set = set()
        self.attr_writes: set = set()         # attribute names this compile assigns (setattr nodes)
        # access path of each array read through one (node id -> path), and the paths whose array a
        # metadata write inside a loop or branch retypes (path -> attribute names): the next lowering
        # types every read of them as unknown in what the write may change (`unstable_paths`)
        self.path_of: dict = {}
        self.retyped_paths: dict = {}
        self.unstable_paths: dict = {}
        self.refreshed: dict = {}             # node id -> the `refresh` made after a write to its shape/dtype
        self.written_globals: set = set()
        self.runtime_objects: set = set()
        self.runtime_globals: set = set()
        self.param_objects: dict = {}         # node id of an object parameter -> the object
        self.param_arrays: dict = {}          # access path of an array parameter -> the array it read
        self.param_paths: dict = {}           # ... and that path

    # --- dispatch ------------------------------------------------------------------------
    def lower_stmt(self, stmt, frame) -> None:
        """Lower one statement through the statement table (each small statement of a line in turn)."""
        # (no recursion for a line: inlining nests these frames 64 deep within Python's recursion limit)
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else (stmt,):
            lower = self.constructs.statements.get(type(small))
            if lower is None:
                self.unsupported_node(small, frame, STATEMENT_RULES)
            lower(self, small, frame)

    def lower_expr(self, node: cst.BaseExpression, frame) -> Any:
        """Lower one expression through the expression table: a compile-time value or a node."""
        lower = self.constructs.expressions.get(type(node))
        if lower is None:
            key = EXPRESSION_RULES.get(type(node).__name__)
            r = BY_KEY.get(key) if key else None
            raise UnsupportedSyntaxError(r.message if r else f"{_construct_name(node)} is not supported in a graph",
                                         frame.parsed.span(node), rule=r)
        value = lower(self, node, frame)
        return self.latest_version(value) if isinstance(value, Node) and self.refreshed else value

    def unsupported_node(self, node, frame, table: dict):
        key = table.get(type(node).__name__)
        r = BY_KEY.get(key) if key else None
        message = r.message if r else f"{statement_name(node)} is not supported in a graph"
        raise UnsupportedSyntaxError(message, self.span(node, frame), rule=r)

    def span(self, node, frame):
        return frame.parsed.span(node)

    def statements(self, stmts: list, frame) -> None:
        """Lower a block (blocks.statements)."""
        self.constructs.run_statements(self, stmts, frame)

    def block(self, stmts: list, frame) -> Optional[Any]:
        """Lower a block; the value it returns, if it returns (blocks.block)."""
        return self.constructs.run_block(self, stmts, frame)

    def call(self, callee, args: list, kwargs: dict, span) -> Any:
        """A call of a lowered value (calls.call)."""
        return self.constructs.call(self, callee, args, kwargs, span)

    def lookup(self, name: str, frame, span) -> Any:
        """The value of a name (names.lookup)."""
        return self.constructs.lookup(self, name, frame, span)

    def attribute(self, value, name: str, span):
        """`value.name` (access.attribute)."""
        return self.constructs.attribute(self, value, name, span)

    def op_call(self, op_name: str, args: list, kwargs: dict, span, extra: Optional[dict] = None) -> Node:
        """A call node of a table op (call_nodes.op_call)."""
        return self.constructs.op_call(self, op_name, args, kwargs, span, extra)

    def assign_target(self, target, value, frame) -> None:
        """Bind `value` to an assignment target (assign.assign_target)."""
        self.constructs.assign_target(self, target, value, frame)

    def bind_params(self, params: cst.Parameters, frame, args: list, kwargs: dict, fn, span) -> None:
        """Bind call arguments to a function's parameters (inline.bind_params)."""
        self.constructs.bind_params(self, params, frame, args, kwargs, fn, span)

    # --- rules -----------------------------------------------------------------------------
    def require_or_unroll(self, key: str, span) -> None:
        """As `require`, but inside a compile-time range loop first ask it to unroll (the value may
        become compile-time: `f"{i}"` in `for i in range(3)`)."""
        r = rule(key)
        if self.unrollable and (r.level == LAX or not r.accepted_at(self.level)):
            raise NeedsStatic(r.message, span, instead=UnsupportedSyntaxError(r.message, span, rule=r))
        self.require(key, span)

    def require(self, key: str, span, message: Optional[str] = None) -> None:
        """Raise the rule's diagnostic unless the chosen level accepts the construct."""
        r = rule(key)
        if r.level == LAX or not r.accepted_at(self.level):  # LAX rows never lower into the graph
            raise UnsupportedSyntaxError(message or r.message, span, rule=r)

    # --- graph values ----------------------------------------------------------------------
    def emit(self, op: str, operands=(), attrs=None, span=None, name: str = "", regions=(), type=None) -> Node:
        if op == "setattr":
            self.attr_writes.add(attrs["name"])  # reads of it must be made at call time (see lower_function)
        nodes = [self.operand(v, span) for v in operands]
        self.budget.made += 1
        return self.scope.graph.add(op, nodes, attrs, type, span, name, regions)

    def operand(self, value: Any, span: Optional[SourceSpan]) -> Node:
        """Any value as a node of the current graph (constants made here, outer values captured)."""
        if isinstance(value, MaybeUnbound):  # flows on as is (into a loop, a branch); reads test it
            value = value.value
        if isinstance(value, Node):
            if value.op == "const" and value.graph is not self.scope.graph:
                return self.scope.graph.const(value.value, value.span)
            return self.scope.local(value)
        if isinstance(value, Static):
            v = value.value
            if isinstance(v, np.ndarray):
                return self.scope.local(self.latest_version(self.array_value(value, span)))
            if isinstance(v, (list, dict)) and value.path is not None and _is_static_data(v):
                # a container held outside the function: the very object, read at each call
                return self.scope.local(self.object_param(value))
            if isinstance(v, (list, tuple)) and any(isinstance(i, np.ndarray) for i in v):
                return self.operand(Seq([self.static_item(value, k) for k in range(len(v))],
                                        "tuple" if isinstance(v, tuple) else "list"), span)
            if isinstance(v, dict):
                return self.dict_value(v, span)
            if isinstance(v, list) or isinstance(v, tuple) and _has_mutable(v):
                # built at compile time, but a new list (dict) at each call, as Python builds it
                return self.operand(Seq([Static(i) for i in v], "list" if isinstance(v, list) else "tuple"), span)
            if isinstance(v, np.dtype) and is_literal(v):
                return self.emit("call", [Static(v.name)], {"fn": "numpy.dtype"}, span)
            if not is_literal(freeze(value.value)) and value.path is not None:
                return self.scope.local(self.object_param(value))
            self.budget.made += 1
            return self.scope.graph.const(freeze(value.value), span)
        if isinstance(value, Seq):
            return self.emit("tuple" if value.kind == "tuple" else "list", value.items, span=span)
        if isinstance(value, Undefined):
            error = Poisoned if value.poisoned else LoweringError
            raise error(f"`{value.name}` may be unbound here: {value.reason}", span)
        raise LoweringError(f"{describe_value(value)} cannot be used as a value here", span)

    def maybe_operand(self, value, span) -> Node:
        """A value flowing into a phi; at LAX a maybe-unbound name flows as its value-or-UNBOUND."""
        if isinstance(value, Undefined) and not value.poisoned and self.level == LAX:
            return self.operand(value.maybe, span) if value.maybe is not None else \
                self.scope.graph.const(UNBOUND, span)
        if value is None and self.level == LAX:
            return self.scope.graph.const(UNBOUND, span)
        return self.operand(value, span)

    def dict_value(self, items: dict, span) -> Node:
        """A dict built at each call (returned, or passed to a Python function): COMPATIBLE."""
        if not all(is_literal(k) for k in items):
            raise LoweringError("dict keys must be literals to build the dict at run time", span)
        values = [v if isinstance(v, (Node, Static, Seq)) else Static(v) for v in items.values()]
        if any(not is_static(v) or isinstance(v, Static) and isinstance(v.value, np.ndarray) for v in values):
            self.require("return_dict", span)
        return self.emit("dict", [self.operand(v, span) for v in values], {"keys": tuple(items)}, span)

    def object_param(self, value: Static) -> Node:
        """A compile-time object read through its path at each call (to call it or set attributes)."""
        key = str(value.path)
        if key not in self.params:
            self.params[key] = self.graph.add_param(key, type_of_value(value.value), value.path.flat_name())
            self.param_objects[self.params[key].id] = value.value
        return self.params[key]

    def runtime_container(self, value: Static):
        """A list/dict/set this compile changes, as a run-time value (read at call time), else `value`."""
        if value.path is not None and isinstance(value.value, (list, dict, set)) \
                and id(value.value) in self.runtime_objects:
            node = self.scope.local(self.object_param(value))
            self.param_objects[node.id] = value.value  # also the region argument that captures it
            return node
        return value

    def note_container_write(self, obj) -> None:
        if isinstance(obj, (list, dict, set)):
            self.container_writes.add(id(obj))

    def flush_warnings(self) -> None:
        seen = set()
        for message, category, file, line in self.pending_warnings:
            if (message, file, line) not in seen:
                seen.add((message, file, line))
                warnings.warn_explicit(message, category, file, line)

    def object_operand(self, value, span) -> Node:
        if isinstance(value, Static) and not isinstance(value.value, np.ndarray):
            if value.path is not None:
                return self.scope.local(self.object_param(value))
            self.consts.append(value.value)
            return self.scope.local(self.object_param(Static(value.value, Path("const", len(self.consts) - 1))))
        return self.operand(value, span)

    def array_value(self, value: Static, span) -> Node:
        """An array as a run-time value: read through its path at each call, or a fresh copy.

        An array reached from a compile-time object (a weight, a global, a dict argument's item)
        is a parameter read through its access path at every call. An array the compiler built
        itself (`np.mgrid[0:n, 0:m]` of compile-time ints) has no path: it is kept as a constant
        and each call works on its own copy of it, so a call that writes it never changes the next.
        """
        if value.path is None:
            self.consts.append(value.value)
            const = Static(value.value, Path("const", len(self.consts) - 1))
            return self.emit("copy", [self.array_value(const, span)], span=span)
        key = str(value.path)
        if key not in self.params:
            self.params[key] = self.graph.add_param(key, type_of_value(value.value), value.path.flat_name())
            self.param_arrays[key] = value.value
            self.param_paths[key] = value.path
        if key in self.unstable_paths:
            # a loop or branch changes this array's shape or dtype: each read is typed as it may be then
            param, wide = self.params[key], self.params[key].type
            for name in sorted(self.unstable_paths[key]):
                wide = after_metadata_write(wide, name, None)
            return self.emit("refresh", [param], span=span, name=param.name, type=wide)
        return self.params[key]

    def reached(self, value: Any, span) -> Any:
        """A value found at compile time (a global, an attribute, an item): arrays become run-time.

        The rule (docs/architecture.md): arrays are mutable, so they are never compile-time values,
        whichever path they arrive by; only immutable values are folded, each under a guard.
        """
        if isinstance(value, Static) and (isinstance(value.value, np.ndarray) or
                                          value.path is not None and is_foreign_array(value.value)):
            node = self.scope.local(self.array_value(value, span))
            if value.path is not None:
                self.path_of[node.id] = str(value.path)
            return node
        return value

    def static_item(self, value: Static, key) -> Static:
        return Static(value.value[key], value.path.item(key) if value.path else None)

    def const_object(self, obj: Any, recipe: Optional[tuple] = None) -> Static:
        """An object built at compile time (a Cell made inside the function): reachable as `const[k]`.

        `recipe` (class, args, kwargs) says how it was built, for code that must rebuild it.
        """
        self.consts.append(obj)
        if recipe is not None:
            self.recipes[len(self.consts) - 1] = recipe
        return Static(obj, Path("const", len(self.consts) - 1))

    def latest_version(self, value: Node) -> Node:
        """`value`, or the `refresh` of it a metadata write made (`a.shape = s` in an inlined helper,
        `d["a"].shape = s`), when that node is visible from the graph being built."""
        while value.id in self.refreshed and _visible(self.refreshed[value.id], self.scope.graph):
            value = self.refreshed[value.id]
        return value

    def mark(self) -> tuple:
        return (self.scope, len(self.scope.graph.nodes))

    def rollback(self, mark: tuple) -> None:
        """Drop the nodes a failed statement added (its region graphs were never attached)."""
        scope, count = mark
        self.scope = scope
        graph = scope.graph
        for node in reversed(graph.nodes[count:]):
            graph.nodes.remove(node)
            graph._edges.remove_node(node)


def _has_mutable(value) -> bool:
    """Does a compile-time tuple hold a list, dict or dtype (values a literal cannot carry)?"""
    if isinstance(value, (list, dict, np.dtype)):
        return True
    return isinstance(value, tuple) and any(_has_mutable(v) for v in value)


def _is_static_data(value) -> bool:
    """A plain container of compile-time data (not one holding graph values built by this compile)."""
    items = value.values() if isinstance(value, dict) else value
    return not any(isinstance(v, (Node, Seq, Static, RangeVal, MethodVal, SourceFunc)) for v in items)


def _visible(node: Node, graph) -> bool:
    """Is `node` defined in `graph` or in a graph enclosing it?"""
    while graph is not None:
        if node.graph is graph:
            return True
        graph = graph.parent.graph if graph.parent is not None else None
    return False


def _construct_name(node) -> str:
    names = {"NamedExpr": "assignment expression `:=`", "Await": "`await`", "Yield": "`yield`",
             "SetComp": "set comprehension", "Set": "set display", "DictComp": "dict comprehension",
             "StarredElement": "starred expression"}
    return names.get(type(node).__name__, f"`{type(node).__name__}` expression")


def statement_name(stmt) -> str:
    names = {"Try": "`try`", "TryStar": "`try`", "With": "`with`", "Del": "`del`", "Global": "`global`",
             "Nonlocal": "`nonlocal`", "ClassDef": "a class definition", "Import": "`import`",
             "ImportFrom": "`import`", "Raise": "`raise`", "Assert": "`assert`", "Match": "`match`",
             "Break": "`break`", "Continue": "`continue`"}
    return names.get(type(stmt).__name__, f"`{type(stmt).__name__}` statement")
