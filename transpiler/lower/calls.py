"""Lowering calls: NumPy functions to table ops, helpers and sub-cells inlined, the rest decided.

What a call becomes, in order:
- a function in the op table (`np.exp`, builtin `abs`) with run-time arguments: that op;
  with compile-time arguments, computed now (unless it makes an array or draws random numbers);
- another NumPy/math function: an opaque `call` node (still compiled, not optimized through);
- a method of a run-time array (`x.sum(axis=1)`): the matching op;
- a Python function, a `def`/`lambda` in the compiled code, a jitted function, a Cell: inlined;
- a class (a Cell's constructor) or a pure builtin with compile-time arguments: run at compile time.
"""

from __future__ import annotations

import builtins
import contextlib
import types
from typing import Any

import libcst as cst
import numpy as np

from ...graph import ops as _ops
from ...graph.diagnostics import LoweringError, UnknownValueError, UnsupportedSyntaxError
from ...graph.ir import Node
from ...graph.paths import Path
from ..rules import rule
from ..static_pure import budget_of, building_library_objects, is_library_class, not_computed, refusal
from ..values import MethodVal, Seq, SeqMethod, SourceFunc, Static, describe_value, is_static, static_value
from .access import subscript
from .assign import refresh_array
from .gradient_calls import gradient_call
from .expansions import EXPANSIONS
from .builtin_calls import (dict_call, fold_builtin, introspection, keyed_builtin, map_filter, range_call,
                            static_iterator)
from .call_nodes import static_call, try_static_call
from .callables import (IMMUTABLE, MUTATING_METHODS, callable_name, holds_array, is_cell, library_function,
                        qualified_name, rule_of_builtin)
from .expressions import contents_read, iterate
from .inline import inline, inline_cell, inline_source
from .methods import array_method, dict_method, seq_method

# Ops that build or draw arrays: never computed at compile time (that would bake data in).
ARRAY_MAKERS = frozenset(name for name, op in _ops.OPS.items() if op.creates)


# Builtins that are pure and may run at compile time on compile-time arguments.
PURE_BUILTINS = {id(f) for f in (len, range, int, float, bool, str, tuple, list, dict, min, max, abs, sum,
                                 round, isinstance, issubclass, hasattr, getattr, zip, enumerate, reversed,
                                 sorted, any, all, map, filter, divmod, pow, type, repr, slice, complex,
                                 callable, chr, ord, hash)}

# Builtins that read their argument's items (not just the object): a container reached from outside
# the function is read item by item (`contents_read`), so that its arrays stay run-time values and
# what is folded is guarded.
CONTENT_READERS = {id(f) for f in (tuple, list, dict, sum, min, max, sorted, any, all, zip, enumerate, reversed,
                                   map, filter)}


def lower_call(state, node: cst.Call, frame) -> Any:
    span = state.span(node, frame)
    callee = state.lower_expr(node.func, frame)
    if isinstance(callee, Static):
        check_builtin(state, callee.value, span)  # before the arguments: `next(it)` is reported too
    args, kwargs = [], {}
    for arg in node.args:
        value = state.lower_expr(arg.value, frame)
        if arg.star == "*":
            if not isinstance(value, (Seq, Static)):
                try:
                    items = iterate(state, value, span)
                except LoweringError:
                    raise UnsupportedSyntaxError(rule("starred_call").message, state.span(arg, frame),
                                                 rule=rule("starred_call")) from None
            else:
                items = iterate(state, value, span)
            args.extend(items)
        elif arg.star == "**":
            if not (isinstance(value, Static) and isinstance(value.value, dict)):
                raise UnsupportedSyntaxError(rule("starred_call").message, state.span(arg, frame),
                                             rule=rule("starred_call"))
            for key in iterate(state, value, span):   # its keys guarded, each item read as `d[key]` is
                kwargs[static_value(key)] = subscript(state, value, key, span)
        elif arg.keyword is not None:
            kwargs[arg.keyword.value] = value
        else:
            args.append(value)
    result = state.call(callee, args, kwargs, span)
    if isinstance(callee, MethodVal) and callee.name in _ops.RETYPING:  # `a.resize(shape)`
        shape = args[0] if len(args) == 1 else Seq(list(args), "tuple") if args else None
        refresh_array(state, callee.obj, callee.name, shape, frame, span)
    return result


def call(state, callee, args: list, kwargs: dict, span) -> Any:
    if isinstance(callee, MethodVal):
        return array_method(state, callee, args, kwargs, span)
    if isinstance(callee, SeqMethod):
        return seq_method(state, callee, args, kwargs, span)
    if isinstance(callee, SourceFunc):
        return inline_source(state, callee, args, kwargs, span)
    if not isinstance(callee, Static):
        raise LoweringError(f"cannot call {describe_value(callee)}", span)
    fn = callee.value
    all_static = all(is_static(a) for a in args) and all(is_static(v) for v in kwargs.values())

    if isinstance(fn, types.BuiltinMethodType) and isinstance(getattr(fn, "__self__", None), dict) \
            and callee.path is None:
        return dict_method(state, fn, args, span)
    if getattr(fn, "__graphjit_op__", None):  # graphjit.Tensor and friends
        reason = _effect_of(fn, args, kwargs)
        if reason is not None:   # `Tensor(shape=..., init=Normal())` draws random numbers: run it, in order
            state.require("call_opaque", span, f"{reason}, which needs the Python interpreter")
            return state.op_call("pycall", [state.object_operand(callee, span)] + list(args), kwargs, span)
        return state.op_call(fn.__graphjit_op__, args, kwargs, span)
    if not isinstance(fn, type) and getattr(fn, "__graphjit_grad__", None) is not None:  # grad(f)(x): f inlined, its backward after
        return gradient_call(state, fn.__graphjit_grad__, args, kwargs, span)
    if getattr(fn, "__graphjit_fn__", None) is not None:  # a jitted function: inline its source
        return inline(state, fn.__graphjit_fn__, args, kwargs, span)
    if fn is range:
        return range_call(state, args, span)
    if fn in (isinstance, len, type) or fn is builtins.getattr or fn is hasattr:
        special = introspection(state, fn, args, span)
        if special is not None:
            return special
    if id(fn) in CONTENT_READERS:
        args = [contents_read(state, a, span, values=fn is dict) for a in args]
        all_static = all(is_static(a) for a in args) and all(is_static(v) for v in kwargs.values())
    if fn in (tuple, list) and len(args) == 1 and not all_static:
        return Seq(iterate(state, args[0], span), "tuple" if fn is tuple else "list")
    if fn in (zip, enumerate, reversed) and not all_static:
        return static_iterator(state, fn, args, kwargs, span)
    if fn in (sorted, min, max) and "key" in kwargs and not is_static(kwargs["key"]):
        return keyed_builtin(state, fn, args, kwargs, span)
    if fn is dict and not all_static:
        return dict_call(state, args, kwargs, span)
    if fn in (sum, min, max) and not all_static:
        return fold_builtin(state, fn, args, kwargs, span)
    if fn is print:  # an ordered effect, never run at compile time
        return state.op_call("call", args, kwargs, span, extra={"fn": "builtins.print"})
    builtin_rule = rule_of_builtin(fn)
    if builtin_rule is not None:
        state.require(builtin_rule, span)
        if builtin_rule == "builtin_setattr" and len(args) == 3 and is_static(args[1]):
            state.emit("setattr", [state.object_operand(args[0], span), args[2]], {"name": static_value(args[1])},
                      span)
            return Static(None)
        return state.emit("pycall", [state.object_operand(callee, span)] + list(args), {}, span)
    owner = getattr(fn, "__self__", None)
    if isinstance(fn, types.BuiltinMethodType) and isinstance(owner, IMMUTABLE) and all_static:
        return static_call(state, fn, args, kwargs, span)  # "relu".upper(), (1, 2).index(2)
    if fn in (any, all, sorted) and not all_static:
        items = iterate(state, args[0], span) if isinstance(args[0], Seq) else None
        operand = Seq(items, "tuple") if items is not None else args[0]
        return state.op_call("call", [operand] + list(args[1:]), kwargs, span,
                            extra={"fn": f"builtins.{fn.__name__}"})
    if fn in (map, filter) and len(args) >= 2:
        return map_filter(state, fn, args, span)
    if fn in (str, repr, format, ascii) and not all_static:
        state.require_or_unroll("fstring_runtime", span)
        return state.op_call("call", args, kwargs, span, extra={"fn": f"builtins.{fn.__name__}"})

    expansion = EXPANSIONS.get(id(fn))   # np.histogram, np.reshape: table ops, or None to keep the call
    result = expansion(state, args, kwargs, span) if expansion is not None and not all_static else None
    if result is not None:
        return result
    op_name = _ops.OP_BY_CALLABLE.get(id(fn))
    if op_name is not None:
        if all_static and op_name not in ARRAY_MAKERS \
                and not _ops.OPS[op_name].writes.may_write(len(args), kwargs):  # never write data now
            result = try_static_call(state, fn, args, kwargs)
            if result is not None:
                return result
        opdef = _ops.OPS[op_name]
        if opdef.emit in ("infix", "prefix") and (len(args) > (opdef.arity or 0) or "out" in kwargs):
            # `np.matmul(a, b, o)`: an operator cannot say `out`; the NumPy call can
            return state.op_call("call", args, kwargs, span, extra={"fn": f"numpy.{fn.__name__}"})
        return state.op_call(op_name, args, kwargs, span)

    if is_cell(fn):
        return inline_cell(state, callee, args, kwargs, span)
    name = qualified_name(fn)
    if name is None and library_function(fn):
        return opaque_call(state, callee, args, kwargs, span)  # json.dumps, copy.deepcopy: never inlined
    if name is None and (isinstance(fn, (types.FunctionType, types.MethodType)) and hasattr(fn, "__code__")
                         or isinstance(fn, types.MethodType)):
        if isinstance(fn, types.MethodType):
            owner = Static(fn.__self__, _owner_path(callee))
            return inline(state, fn.__func__, args, kwargs, span, self_value=owner)
        module = getattr(fn, "__module__", "") or ""
        if not module.startswith("numpy"):
            return inline(state, fn, args, kwargs, span)

    if name is not None:
        if all_static and not name.startswith("numpy.random") and not holds_array(args, kwargs):
            result = try_static_call(state, fn, args, kwargs)
            if result is not None:
                return result
        return state.op_call("call", args, kwargs, span, extra={"fn": name})
    if isinstance(fn, type) and issubclass(fn, np.generic) and not all_static:
        return state.op_call("call", args, kwargs, span, extra={"fn": f"numpy.{fn.__name__}"})  # np.float32(s)
    if isinstance(fn, type) or id(fn) in PURE_BUILTINS:
        if not all_static:
            raise LoweringError(f"{callable_name(fn)}() with run-time arguments cannot run at compile time", span)
        if isinstance(fn, type) and not issubclass(fn, (int, float, str, bool, tuple, list, dict, complex,
                                                          slice, range)):
            if state.sealed and not may_build(fn, args, kwargs):
                raise not_computed(f"the {callable_name(fn)} built here", "graphjit builds only the file's own "
                                   "classes, graphjit's library classes and NumPy scalar types while it reads "
                                   "a file", span)
            try:
                with building_library_objects(span, budget_of(state.root_globals)) if state.sealed else \
                        contextlib.nullcontext():
                    result = fn(*[static_value(a) for a in args],
                                **{k: static_value(v) for k, v in kwargs.items()})
            except UnknownValueError:   # a value of a file read without running it (NotComputed too)
                raise
            except Exception as e:
                raise LoweringError(f"{callable_name(fn)}() failed at compile time: {type(e).__name__}: {e}", span) \
                    from None
            return state.const_object(result, (fn, [static_value(a) for a in args],
                                              {k: static_value(v) for k, v in kwargs.items()}))
        return static_call(state, fn, args, kwargs, span)
    return opaque_call(state, callee, args, kwargs, span)


def may_build(cls, args, kwargs) -> bool:
    """Whether class `cls` may be built now while a file is read (static_pure decides)."""
    if getattr(cls, "__graphjit_static_class__", False) or is_library_class(cls):
        return True
    return refusal(cls, [static_value(a) for a in args], {k: static_value(v) for k, v in kwargs.items()}) is None


def check_builtin(state, fn, span) -> None:
    """Builtins a level rejects are reported at the call, whatever their arguments are."""
    key = rule_of_builtin(fn)
    if key is not None:
        state.require(key, span)


def _effect_of(fn, args: list, kwargs: dict):
    """Why a call of a class with a table op must run as Python instead (its `__graphjit_effect__` asked
    with the compile-time arguments, None for the others), or None."""
    effect = getattr(fn, "__graphjit_effect__", None)
    if effect is None:
        return None
    known = lambda v: static_value(v) if is_static(v) else None  # noqa: E731
    return effect(*[known(a) for a in args], **{k: known(v) for k, v in kwargs.items()})


def opaque_call(state, callee: Static, args, kwargs, span):
    """A Python callable without source: an ordered opaque call at COMPATIBLE (never run now)."""
    fn = callee.value
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, (list, dict, set)) and callee.path is not None:
        if getattr(fn, "__name__", "") in MUTATING_METHODS:
            state.note_container_write(owner)
        state.require("mutate_object", span, f"`{callable_name(fn)}` mutates a container held outside the function")
    else:
        state.require("call_opaque", span, f"calling {callable_name(fn)} on run-time values needs the Python "
                                          "interpreter")
    return state.op_call("pycall", [state.object_operand(callee, span)] + list(args), kwargs, span)


def _owner_path(callee: Static):
    path = callee.path
    if path is not None and path.steps and path.steps[-1][0] == "attr":
        return Path(path.root_kind, path.root, path.steps[:-1])
    return None
