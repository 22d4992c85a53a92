"""Lowering calls of Python functions by inlining their bodies: helpers, nested defs and lambdas, methods, Cells."""

from __future__ import annotations

import hashlib
import inspect
import sys
from typing import Any, Optional

import libcst as cst

from ...graph.diagnostics import GraphjitError, LoweringError
from ...graph.ir import Node
from ...graph.literals import is_literal
from ...graph.paths import Path, default_slot
from ..source import ParsedFile, function_source, unwrap
from ..values import MaybeUnbound, MethodVal, RangeVal, Seq, SourceFunc, Static, is_static
from .blocks import block
from .budget import budgeted_call
from .frame import Frame, closure_of


def inline(state, fn, args: list, kwargs: dict, span, self_value=None) -> Any:
    """Lower a call of a Python function by lowering its body here."""
    fn = unwrap(fn)
    return budgeted_call(state, getattr(fn, "__code__", fn), getattr(fn, "__qualname__", str(fn)), span,
                              lambda: inline_body(state, fn, args, kwargs, span, self_value))


def inline_body(state, fn, args: list, kwargs: dict, span, self_value=None) -> Any:
    code = getattr(fn, "__code__", None)
    found = state.function_sources.get(code) if code is not None else None
    if found is None:  # once per function and compile: a helper may be inlined thousands of times
        found = state.function_sources[code] = function_source(fn)
    parsed, node = found
    frame = Frame(parsed, fn.__qualname__, {}, fn.__globals__, closure_of(fn))
    if self_value is not None:
        args = [self_value] + list(args)
    state.bind_params(node.params, frame, args, kwargs, fn, span)
    state.sources.append((fn.__qualname__, parsed.filename))
    note_attribute_writes(state, node)
    note_source(state, fn.__qualname__, parsed, node)
    return run_body(state, node, frame)


def note_source(state, qualname: str, parsed: ParsedFile, node) -> None:
    """Remember the text of an inlined function: editing it must invalidate cached entries."""
    pos = parsed.positions.get(node)
    if pos is None:
        return
    key = (parsed.filename, pos.start.line)
    if key not in state.inlined:
        lines = parsed.lines[pos.start.line - 1:pos.end.line]
        digest = hashlib.sha256("".join(lines).encode()).hexdigest()[:20]
        state.inlined[key] = (qualname, parsed.filename, pos.start.line, pos.end.line, digest)


def note_attribute_writes(state, node) -> None:
    """Attribute names assigned in this function body (COMPATIBLE): reads of them stay run-time."""
    if state.level == "STRICT" or node in state.attribute_writes_noted:
        return
    state.attribute_writes_noted.add(node)

    class Writes(cst.CSTVisitor):
        def visit_AssignTarget(inner, n) -> None:
            if isinstance(n.target, cst.Attribute):
                state.mutated_attrs.add(n.target.attr.value)

        def visit_AugAssign(inner, n) -> None:
            if isinstance(n.target, cst.Attribute):
                state.mutated_attrs.add(n.target.attr.value)

    node.visit(Writes())


def default_path(state, fn, name: str, value) -> Optional[Path]:
    """The access path of a helper's default value, for mutable defaults (shared between calls)."""
    if is_literal(value) or not hasattr(fn, "__code__"):
        return None
    where = default_slot(fn, name)
    if where is None:
        return None
    module = sys.modules.get(getattr(fn, "__module__", None) or "")
    if module is not None and getattr(module, fn.__name__, None) is fn:
        owner = state.const_object(module).path.attr(fn.__name__)
    else:
        owner = state.const_object(fn).path
    path = owner.attr(where[0]).item(where[1])
    state.guards.read(path, value, getattr(fn, where[0]))
    return path


def run_body(state, node, frame: Frame) -> Any:
    state.depth += 1
    try:
        if isinstance(node, cst.Lambda):
            return state.lower_expr(node.body, frame)
        body = node.body.body  # an IndentedBlock, or the small statements of `def f(): return x`
        result = block(state, list(body), frame)
        return Static(None) if result is None else result
    except GraphjitError as e:
        if not e.context or e.context[-1] != f"while inlining {frame.qualname}":
            e.add_context(f"while inlining {frame.qualname}") if state.depth > 1 else None
        raise
    finally:
        state.depth -= 1


def bind_params(state, params: cst.Parameters, frame: Frame, args: list, kwargs: dict, fn, span) -> None:
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
                value = state.reached(Static(value, default_path(state, fn, name, value)), span)
            frame.env[name] = value if not _is_plain_default(value) else Static(value)
        return
    raise LoweringError("cannot bind arguments", span)


def _is_plain_default(value) -> bool:
    return not isinstance(value, (Node, Static, Seq, RangeVal, MethodVal, SourceFunc))


def inline_cell(state, callee: Static, args, kwargs, span):
    cell = callee.value
    construct = type(cell).construct
    return inline(state, construct, args, kwargs, span, self_value=callee)


def inline_source(state, fn: SourceFunc, args, kwargs, span):
    frame = type(fn.frame)(fn.frame.parsed, fn.name, dict(fn.frame.env), fn.frame.globals, fn.frame.closure)
    for name, value in frame.env.items():  # the enclosing function's names are free variables here
        if isinstance(value, MaybeUnbound):
            frame.env[name] = MaybeUnbound(value.value, value.vtype, free=True)
    bind_source_params(state, fn, frame, args, kwargs, span)
    return budgeted_call(state, fn.node, fn.name, span, lambda: run_body(state, fn.node, frame))


def bind_source_params(state, fn: SourceFunc, frame, args, kwargs, span) -> None:
    params = fn.node.params
    positional = list(params.posonly_params) + list(params.params)
    args = list(args)
    for p in positional:
        name = p.name.value
        if args:
            frame.env[name] = args.pop(0)
        elif name in kwargs:
            frame.env[name] = kwargs.pop(name)
        elif name in fn.defaults:
            frame.env[name] = fn.defaults[name]
        else:
            raise LoweringError(f"{fn.name}() missing argument `{name}`", span)
    if isinstance(params.star_arg, cst.Param):
        frame.env[params.star_arg.name.value] = Seq(args, "tuple")
        args = []
    for p in params.kwonly_params:
        name = p.name.value
        if name in kwargs:
            frame.env[name] = kwargs.pop(name)
        elif name in fn.defaults:
            frame.env[name] = fn.defaults[name]
        else:
            raise LoweringError(f"{fn.name}() missing keyword argument `{name}`", span)
    if isinstance(params.star_kwarg, cst.Param):
        frame.env[params.star_kwarg.name.value] = Static(dict(kwargs)) if all(
            is_static(v) for v in kwargs.values()) else Static(kwargs)
        kwargs = {}
    if args or kwargs:
        raise LoweringError(f"{fn.name}() got unexpected arguments", span)
