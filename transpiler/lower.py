"""Lowering a Python function into an SSA graph: the entry point and the shared state.

`lower_function(fn, args, kwargs)` binds the call's arguments (arrays become graph arguments,
everything else a compile-time value), walks the function's LibCST tree, inlines helpers and
sub-cells, and returns the graph with what the backend needs to run it.
"""

from __future__ import annotations

import builtins
import hashlib
import inspect
import sys
import warnings
from dataclasses import dataclass, field
from typing import Any, Optional

import libcst as cst
import numpy as np

from ..graph.diagnostics import GraphjitError, GraphSyntaxError, LoweringError, UnsupportedSyntaxError
from ..graph.guards import GuardRecorder, GuardSet
from ..graph.ir import Graph, Node
from ..graph.literals import is_literal
from ..graph.paths import Path, default_slot
from ..graph.shape_rules import after_metadata_write
from ..graph.spans import SourceSpan
from ..graph.types import TupleType, type_of_value
from .budget import BudgetLowering, CompileBudget
from .calls import CallLowering
from .expressions import ExpressionLowering
from .fallback import FallbackLowering
from .rules import LAX
from .scope import Scope
from .source import ParsedFile, function_source, unwrap
from .statements import StatementLowering
from .values import UNBOUND, MaybeUnbound, Seq, Static, Undefined, describe_value, is_static


@dataclass
class Frame:
    """One activation of a function being inlined: its names and where they resolve."""

    parsed: ParsedFile
    qualname: str
    env: dict
    globals: dict
    closure: dict                 # free variable name -> cell
    loops: list = field(default_factory=list)   # spans of the enclosing loops (see NOTE [loop control])
    ret_span: Optional[SourceSpan] = None
    declared_globals: set = field(default_factory=set)   # names of `global` statements

    def fork(self) -> "Frame":
        """A copy for one branch or loop body: its own names, the same function."""
        return Frame(self.parsed, self.qualname, dict(self.env), self.globals, self.closure, list(self.loops),
                     self.ret_span, self.declared_globals)


@dataclass
class Lowered:
    """A lowered function: its graph and the run-time roots its access paths start from."""

    graph: Graph
    globals: dict
    closure: dict
    consts: list
    sources: list = field(default_factory=list)   # (qualname, filename) of everything inlined
    arg_names: list = field(default_factory=list)
    signature: Optional[inspect.Signature] = None
    recipes: dict = field(default_factory=dict)    # const index -> (class, args, kwargs)
    diagnostics: list = field(default_factory=list)
    fallbacks: int = 0
    eager: bool = False                            # nothing compilable: run the function as it is
    # (qualname, filename, first line, last line, sha256 of those lines) of the function and of every
    # function, method and Cell construct it inlined: the cache checks them before reusing an entry
    inlined: list = field(default_factory=list)
    guards: GuardSet = field(default_factory=GuardSet)  # the compile-time reads the graph depends on


@dataclass(frozen=True)
class AbstractArray:
    """An argument known only by its type (`graphjit transpile` without example inputs)."""

    type: Any


def is_runtime_arg(value: Any) -> bool:
    """Arrays (and NumPy scalars) are run-time values; Python scalars and objects compile-time."""
    if isinstance(value, (np.ndarray, np.generic, AbstractArray)):
        return True
    if isinstance(value, (tuple, list)):
        return any(is_runtime_arg(v) for v in value)
    return False


class Lowerer(StatementLowering, ExpressionLowering, CallLowering, FallbackLowering, BudgetLowering):
    def __init__(self, root_fn, graph: Graph, level: str = LAX, quiet: bool = False, over_budget=None):
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
        self.root_closure = _closure_of(root_fn)
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

    # --- nodes -----------------------------------------------------------------------------
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
            if not is_literal(_freeze(value.value)) and value.path is not None:
                return self.scope.local(self.object_param(value))
            self.budget.made += 1
            return self.scope.graph.const(_freeze(value.value), span)
        if isinstance(value, Seq):
            return self.emit("tuple" if value.kind == "tuple" else "list", value.items, span=span)
        if isinstance(value, Undefined):
            from .fallback import Poisoned
            error = Poisoned if value.poisoned else LoweringError
            raise error(f"`{value.name}` may be unbound here: {value.reason}", span)
        raise LoweringError(f"{_describe(value)} cannot be used as a value here", span)

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
        if isinstance(value, Static) and isinstance(value.value, np.ndarray):
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

    # --- functions -------------------------------------------------------------------------
    def inline(self, fn, args: list, kwargs: dict, span, self_value=None) -> Any:
        """Lower a call of a Python function by lowering its body here."""
        fn = unwrap(fn)
        return self.budgeted_call(getattr(fn, "__code__", fn), getattr(fn, "__qualname__", str(fn)), span,
                                  lambda: self.inline_body(fn, args, kwargs, span, self_value))

    def inline_body(self, fn, args: list, kwargs: dict, span, self_value=None) -> Any:
        code = getattr(fn, "__code__", None)
        found = self.function_sources.get(code) if code is not None else None
        if found is None:  # once per function and compile: a helper may be inlined thousands of times
            found = self.function_sources[code] = function_source(fn)
        parsed, node = found
        frame = Frame(parsed, fn.__qualname__, {}, fn.__globals__, _closure_of(fn))
        if self_value is not None:
            args = [self_value] + list(args)
        self.bind_params(node.params, frame, args, kwargs, fn, span)
        self.sources.append((fn.__qualname__, parsed.filename))
        self.note_attribute_writes(node)
        self.note_source(fn.__qualname__, parsed, node)
        return self.run_body(node, frame)

    def note_source(self, qualname: str, parsed: ParsedFile, node) -> None:
        """Remember the text of an inlined function: editing it must invalidate cached entries."""
        pos = parsed.positions.get(node)
        if pos is None:
            return
        key = (parsed.filename, pos.start.line)
        if key not in self.inlined:
            lines = parsed.lines[pos.start.line - 1:pos.end.line]
            digest = hashlib.sha256("".join(lines).encode()).hexdigest()[:20]
            self.inlined[key] = (qualname, parsed.filename, pos.start.line, pos.end.line, digest)

    def note_attribute_writes(self, node) -> None:
        """Attribute names assigned in this function body (COMPATIBLE): reads of them stay run-time."""
        if self.level == "STRICT" or node in self.attribute_writes_noted:
            return
        self.attribute_writes_noted.add(node)

        class Writes(cst.CSTVisitor):
            def visit_AssignTarget(inner, n) -> None:
                if isinstance(n.target, cst.Attribute):
                    self.mutated_attrs.add(n.target.attr.value)

            def visit_AugAssign(inner, n) -> None:
                if isinstance(n.target, cst.Attribute):
                    self.mutated_attrs.add(n.target.attr.value)

        node.visit(Writes())

    def default_path(self, fn, name: str, value) -> Optional[Path]:
        """The access path of a helper's default value, for mutable defaults (shared between calls)."""
        if is_literal(value) or not hasattr(fn, "__code__"):
            return None
        where = default_slot(fn, name)
        if where is None:
            return None
        module = sys.modules.get(getattr(fn, "__module__", None) or "")
        if module is not None and getattr(module, fn.__name__, None) is fn:
            owner = self.const_object(module).path.attr(fn.__name__)
        else:
            owner = self.const_object(fn).path
        path = owner.attr(where[0]).item(where[1])
        self.guards.read(path, value, getattr(fn, where[0]))
        return path

    def run_body(self, node, frame: Frame) -> Any:
        self.depth += 1
        try:
            if isinstance(node, cst.Lambda):
                return self.expr(node.body, frame)
            body = node.body.body  # an IndentedBlock, or the small statements of `def f(): return x`
            result = self.block(list(body), frame)
            return Static(None) if result is None else result
        except GraphjitError as e:
            if not e.context or e.context[-1] != f"while inlining {frame.qualname}":
                e.add_context(f"while inlining {frame.qualname}") if self.depth > 1 else None
            raise
        finally:
            self.depth -= 1

    def bind_params(self, params: cst.Parameters, frame: Frame, args: list, kwargs: dict, fn, span) -> None:
        """Bind call arguments to parameter names, Python's way (defaults, *args, **kwargs)."""
        try:
            sig = inspect.signature(fn) if fn is not None else None
        except (TypeError, ValueError):
            sig = None
        if sig is not None:
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError as e:
                raise LoweringError(f"bad call of {fn.__qualname__}: {e}", span) from None
            given = set(bound.arguments)
            bound.apply_defaults()
            for name, value in bound.arguments.items():
                kind = sig.parameters[name].kind
                if kind is inspect.Parameter.VAR_POSITIONAL:
                    value = Seq(list(value), "tuple")
                elif kind is inspect.Parameter.VAR_KEYWORD:
                    value = Static(dict(value))  # a compile-time dict; its values may be run-time
                elif name not in given:
                    value = self.reached(Static(value, self.default_path(fn, name, value)), span)
                frame.env[name] = value if not _is_plain_default(value) else Static(value)
            return
        raise LoweringError("cannot bind arguments", span)


def _is_plain_default(value) -> bool:
    from .values import MethodVal, RangeVal, SourceFunc
    return not isinstance(value, (Node, Static, Seq, RangeVal, MethodVal, SourceFunc))


def _fail(error):
    raise error


def _has_mutable(value) -> bool:
    """Does a compile-time tuple hold a list, dict or dtype (values a literal cannot carry)?"""
    if isinstance(value, (list, dict, np.dtype)):
        return True
    return isinstance(value, tuple) and any(_has_mutable(v) for v in value)


def _is_static_data(value) -> bool:
    """A plain container of compile-time data (not one holding graph values built by this compile)."""
    from .values import MethodVal, RangeVal, SourceFunc
    items = value.values() if isinstance(value, dict) else value
    return not any(isinstance(v, (Node, Seq, Static, RangeVal, MethodVal, SourceFunc)) for v in items)


def _freeze(value):
    return tuple(_freeze(v) for v in value) if isinstance(value, list) else value


def _closure_of(fn) -> dict:
    code = getattr(fn, "__code__", None)
    cells = getattr(fn, "__closure__", None) or ()
    return dict(zip(code.co_freevars, cells)) if code is not None else {}


def _describe(value) -> str:
    return describe_value(value)


def lower_function(fn, args: tuple, kwargs: dict, name: Optional[str] = None, level: str = LAX,
                   collect: bool = False, static: tuple = ()) -> Lowered:
    """Lower `fn` called with these arguments into a graph (specialized to their signature).

    At STRICT and COMPATIBLE every construct the level rejects is reported at once, in one
    `GraphSyntaxError`; at LAX they become fallback blocks. With `collect`, nothing is raised
    for them: `Lowered.diagnostics` lists them (what `graphjit check` prints). `static` names
    parameters that are compile-time values whatever their type (`static_argnums`).

    A Python container or module global the compiled code changes (`LOG.append(v)`, a helper's
    `global n`) must be read at call time everywhere in the function, also before the change: when
    lowering finds such a write, it lowers the function again with those reads made at run time.
    """
    fn = unwrap(fn)
    runtime_objects: set = set()
    runtime_globals: set = set()
    runtime_attrs: set = set()
    over_budget: dict = {}   # loops and calls found over the compile budget: the next attempt skips them at once
    retyped: dict = {}       # access paths whose array a loop or branch reshapes (see Lowerer.retyped_paths)
    for _attempt in range(4):
        lowered, lowerer = _lower_once(fn, args, kwargs, name, level, collect, runtime_objects, runtime_globals,
                                       runtime_attrs, static, over_budget, retyped)
        over_budget.update(lowerer.budget.found)
        new_objects = lowerer.container_writes - runtime_objects
        new_globals = lowerer.written_globals - runtime_globals
        new_attrs = lowerer.attr_writes - lowerer.mutated_attrs
        new_retyped = {k: v for k, v in lowerer.retyped_paths.items() if not v <= retyped.get(k, set())}
        for key, names in new_retyped.items():
            retyped[key] = retyped.get(key, set()) | names
        if not new_objects and not new_globals and not new_attrs and not new_retyped:
            break
        runtime_objects |= new_objects
        runtime_globals |= new_globals
        runtime_attrs |= new_attrs
    lowerer.flush_warnings()
    errors = [d for d in lowered.diagnostics if d.severity == "error"]
    if errors and not collect:
        raise GraphSyntaxError(errors)
    return lowered


def _lower_once(fn, args, kwargs, name, level, collect, runtime_objects, runtime_globals, runtime_attrs=(),
                static=(), over_budget=None, retyped=None):
    parsed, node = function_source(fn)
    graph = Graph(name or fn.__qualname__)
    graph.span = parsed.span(node)
    lowerer = Lowerer(fn, graph, level, quiet=collect, over_budget=over_budget)
    lowerer.runtime_objects = set(runtime_objects)
    lowerer.runtime_globals = set(runtime_globals)
    lowerer.mutated_attrs |= set(runtime_attrs)   # written by setattr(obj, "name", v) found last time
    lowerer.unstable_paths = {k: set(v) for k, v in (retyped or {}).items()}
    sig = inspect.signature(fn)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise LoweringError(f"{fn.__qualname__}(): {e}", graph.span) from None
    bound.apply_defaults()
    # the lowerer's own closure dict: `lookup` recognises the root's closure by identity, so that
    # closure variables are read through `closure['name']` at run time instead of being baked in
    frame = Frame(parsed, fn.__qualname__, {}, fn.__globals__, lowerer.root_closure)
    spans = {p.name.value: parsed.span(p) for p in _all_params(node.params)}
    arg_names = []
    for pname, value in bound.arguments.items():
        arg_names.append(pname)
        if pname not in static and is_runtime_arg(value):
            arg_type = value.type if isinstance(value, AbstractArray) else \
                type_of_value(tuple(value) if isinstance(value, list) else value)
            arg = graph.add_arg(pname, arg_type, spans.get(pname))
            if isinstance(value, (tuple, list)):
                frame.env[pname] = Seq([lowerer.emit("tuple_get", [arg], {"index": k}, spans.get(pname),
                                                     name=f"{pname}{k}") for k in range(len(value))],
                                       "tuple" if isinstance(value, tuple) else "list")
            else:
                frame.env[pname] = arg
        else:
            graph.add_arg(pname, type_of_value(value) if not isinstance(value, tuple) else TupleType(()),
                          spans.get(pname))
            frame.env[pname] = Static(value, Path("arg", pname))
    lowerer.sources.append((fn.__qualname__, parsed.filename))
    lowerer.note_attribute_writes(node)
    lowerer.note_source(fn.__qualname__, parsed, node)
    whole = lowerer.whole_function_problem(node, parsed)
    if whole is not None:
        lowerer.diagnostics.append(whole)
        result = Static(None)
    else:
        result = lowerer.run_body(node, frame)
    out = None
    if whole is None:
        try:
            out = lowerer.operand(result, lowerer.return_span or graph.span)
        except GraphjitError as error:  # the returned value cannot be built by the graph
            whole = lowerer.return_problem(error, fn.__qualname__)
            if whole is not None:
                lowerer.diagnostics.append(whole)
    if out is None:
        out = graph.const(None, graph.span)
    graph.set_outputs([out])
    lowered = Lowered(graph, fn.__globals__, lowerer.root_closure, lowerer.consts, lowerer.sources, arg_names, sig,
                      lowerer.recipes, _unique(lowerer.diagnostics), lowerer.fallbacks, whole is not None,
                      list(lowerer.inlined.values()), lowerer.guards.result())
    return lowered, lowerer


def _unique(diagnostics: list) -> list:
    """Each problem once (a helper inlined twice reports its problems once), hints fit for its level."""
    import dataclasses

    from .rules import hint_at
    seen, out = set(), []
    for d in diagnostics:
        key = (d.code, d.severity, d.message, d.span)
        if key not in seen:
            seen.add(key)
            hint = hint_at(d.level, d.hint)
            out.append(d if hint == d.hint else dataclasses.replace(d, hint=hint))
    return out


def _all_params(params: cst.Parameters) -> list:
    out = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            out.append(star)
    return out


__all__ = ["lower_function", "Lowered", "Lowerer", "Frame", "is_runtime_arg", "builtins",
           "UnsupportedSyntaxError"]
