"""Lowering a Python function into an SSA graph: the entry point and the shared state.

`lower_function(fn, args, kwargs)` binds the call's arguments (arrays become graph arguments,
everything else a compile-time value), walks the function's LibCST tree, inlines helpers and
sub-cells, and returns the graph with what the backend needs to run it.
"""

from __future__ import annotations

import builtins
import hashlib
import inspect
from dataclasses import dataclass, field
from typing import Any, Optional

import libcst as cst
import numpy as np

from ..graph.diagnostics import GraphjitError, LoweringError, UnsupportedSyntaxError
from ..graph.guards import GuardRecorder, GuardSet
from ..graph.ir import Graph, Node
from ..graph.paths import Path
from ..graph.spans import SourceSpan
from ..graph.types import TupleType, type_of_value
from .calls import CallLowering
from .expressions import ExpressionLowering
from .scope import Scope
from .source import ParsedFile, function_source, unwrap
from .statements import StatementLowering
from .values import Seq, Static

MAX_INLINE_DEPTH = 64


@dataclass
class Frame:
    """One activation of a function being inlined: its names and where they resolve."""

    parsed: ParsedFile
    qualname: str
    env: dict
    globals: dict
    closure: dict                 # free variable name -> cell
    fn_globals_path: bool = True   # globals reachable as `globals[...]` from the generated code


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


class Lowerer(StatementLowering, ExpressionLowering, CallLowering):
    def __init__(self, root_fn, graph: Graph):
        self.graph = graph
        self.scope = Scope(graph)
        self.params: dict[str, Node] = {}
        self.consts: list = []
        self.recipes: dict = {}
        self.sources: list = []
        self.inlined: dict = {}
        self.guards = GuardRecorder()
        self.depth = 0
        self.return_span = None
        self.root_fn = root_fn
        self.root_globals = getattr(root_fn, "__globals__", {})
        self.root_closure = _closure_of(root_fn)

    # --- nodes -----------------------------------------------------------------------------
    def emit(self, op: str, operands=(), attrs=None, span=None, name: str = "", regions=(), type=None) -> Node:
        nodes = [self.operand(v, span) for v in operands]
        return self.scope.graph.add(op, nodes, attrs, type, span, name, regions)

    def operand(self, value: Any, span: Optional[SourceSpan]) -> Node:
        """Any value as a node of the current graph (constants made here, outer values captured)."""
        if isinstance(value, Node):
            if value.op == "const" and value.graph is not self.scope.graph:
                return self.scope.graph.const(value.value, value.span)
            return self.scope.local(value)
        if isinstance(value, Static):
            if isinstance(value.value, np.ndarray):
                return self.scope.local(self.array_value(value, span))
            if isinstance(value.value, (list, tuple)) and any(isinstance(v, np.ndarray) for v in value.value):
                return self.operand(Seq([self.static_item(value, k) for k in range(len(value.value))],
                                        "tuple"), span)
            return self.scope.graph.const(_freeze(value.value), span)
        if isinstance(value, Seq):
            return self.emit("tuple", value.items, span=span)
        raise LoweringError(f"{_describe(value)} cannot be used as a value here", span)

    def array_value(self, value: Static, span) -> Node:
        """An array reached from a compile-time object: a parameter read through its path."""
        if value.path is None:
            self.consts.append(value.value)
            value = Static(value.value, Path("const", len(self.consts) - 1))
        key = str(value.path)
        if key not in self.params:
            self.params[key] = self.graph.add_param(key, type_of_value(value.value), value.path.flat_name())
        return self.params[key]

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
        if self.depth >= MAX_INLINE_DEPTH:
            raise LoweringError(f"inlining {getattr(fn, '__qualname__', fn)} exceeds depth {MAX_INLINE_DEPTH}"
                                " (recursion without a compile-time base case?)", span)
        parsed, node = function_source(fn)
        frame = Frame(parsed, fn.__qualname__, {}, fn.__globals__, _closure_of(fn))
        if self_value is not None:
            args = [self_value] + list(args)
        self.bind_params(node.params, frame, args, kwargs, fn, span)
        self.sources.append((fn.__qualname__, parsed.filename))
        self.note_source(fn.__qualname__, parsed, node)
        return self.run_body(node, frame)

    def note_source(self, qualname: str, parsed: ParsedFile, node) -> None:
        """Remember the text of an inlined function: editing it must invalidate cached entries."""
        pos = parsed.positions.get(node)
        if pos is None:
            return
        key = (parsed.filename, pos.start.line)
        if key not in self.inlined:
            lines = parsed.text.splitlines(True)[pos.start.line - 1:pos.end.line]
            digest = hashlib.sha256("".join(lines).encode()).hexdigest()[:20]
            self.inlined[key] = (qualname, parsed.filename, pos.start.line, pos.end.line, digest)

    def run_body(self, node, frame: Frame) -> Any:
        self.depth += 1
        try:
            if isinstance(node, cst.Lambda):
                return self.expr(node.body, frame)
            body = node.body.body if isinstance(node.body, cst.IndentedBlock) else [node.body]
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
            bound.apply_defaults()
            for name, value in bound.arguments.items():
                kind = sig.parameters[name].kind
                if kind is inspect.Parameter.VAR_POSITIONAL:
                    value = Seq(list(value), "tuple")
                elif kind is inspect.Parameter.VAR_KEYWORD:
                    value = Static(dict(value)) if all(isinstance(v, Static) for v in value.values()) else \
                        _fail(LoweringError("**kwargs with run-time values are not supported", span))
                frame.env[name] = value if not _is_plain_default(value) else Static(value)
            return
        raise LoweringError("cannot bind arguments", span)


def _is_plain_default(value) -> bool:
    from .values import MethodVal, RangeVal, SourceFunc
    return not isinstance(value, (Node, Static, Seq, RangeVal, MethodVal, SourceFunc))


def _fail(error):
    raise error


def _freeze(value):
    return tuple(_freeze(v) for v in value) if isinstance(value, list) else value


def _closure_of(fn) -> dict:
    code = getattr(fn, "__code__", None)
    cells = getattr(fn, "__closure__", None) or ()
    return dict(zip(code.co_freevars, cells)) if code is not None else {}


def _describe(value) -> str:
    if isinstance(value, Static):
        return f"compile-time value {type(value.value).__name__}"
    return type(value).__name__


def lower_function(fn, args: tuple, kwargs: dict, name: Optional[str] = None, static: tuple = ()) -> Lowered:
    """Lower `fn` called with these arguments into a graph (specialized to their signature).

    `static` names parameters that are compile-time values whatever their type (`static_argnums`).
    """
    fn = unwrap(fn)
    parsed, node = function_source(fn)
    graph = Graph(name or fn.__qualname__)
    graph.span = parsed.span(node)
    lowerer = Lowerer(fn, graph)
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
    lowerer.note_source(fn.__qualname__, parsed, node)
    result = lowerer.run_body(node, frame)
    out = lowerer.operand(result, lowerer.return_span or graph.span)
    graph.set_outputs([out])
    return Lowered(graph, fn.__globals__, lowerer.root_closure, lowerer.consts, lowerer.sources, arg_names, sig,
                   lowerer.recipes, list(lowerer.inlined.values()), lowerer.guards.result())


def _all_params(params: cst.Parameters) -> list:
    out = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            out.append(star)
    return out


__all__ = ["lower_function", "Lowered", "Lowerer", "Frame", "is_runtime_arg", "builtins",
           "UnsupportedSyntaxError"]
