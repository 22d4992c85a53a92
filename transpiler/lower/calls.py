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
import types
from typing import Any, Optional

import libcst as cst
import numpy as np

from ...graph import ops as _ops
from ...graph.diagnostics import LoweringError, UnsupportedSyntaxError
from ...graph.ir import Node
from ...graph.literals import is_literal
from ...graph.paths import Path
from ..rules import rule
from ..values import MethodVal, Seq, SeqMethod, SourceFunc, Static, describe_value, freeze, is_static, static_value
from .callables import (IMMUTABLE, MUTATING_METHODS, callable_name, holds_array, is_cell, library_function,
                        out_by_keyword, qualified_name, rule_of_builtin)

# Ops that build or draw arrays: never computed at compile time (that would bake data in).
ARRAY_MAKERS = {"zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like",
                "arange", "linspace", "eye", "asarray", "array"}
REDUCTIONS = {"sum", "mean", "max", "min", "prod", "any", "all", "std", "var", "argmax", "argmin",
              "nansum", "nanmean", "nanmax", "nanmin", "median", "amax", "amin", "cumsum", "cumprod"}
# Builtins that are pure and may run at compile time on compile-time arguments.
PURE_BUILTINS = {id(f) for f in (len, range, int, float, bool, str, tuple, list, dict, min, max, abs, sum,
                                 round, isinstance, issubclass, hasattr, getattr, zip, enumerate, reversed,
                                 sorted, any, all, map, filter, divmod, pow, type, repr, slice, complex,
                                 callable, chr, ord, hash)}


class CallLowering:
    """Calls: what a callee is decides what the call becomes (an op, a call node, an inlined body, a value)."""

    def lower_call(self, node: cst.Call, frame) -> Any:
        span = self.span(node, frame)
        callee = self.expr(node.func, frame)
        if isinstance(callee, Static):
            self.check_builtin(callee.value, span)  # before the arguments: `next(it)` is reported too
        args, kwargs = [], {}
        for arg in node.args:
            value = self.expr(arg.value, frame)
            if arg.star == "*":
                if not isinstance(value, (Seq, Static)):
                    try:
                        items = self.iterate(value, span)
                    except LoweringError:
                        raise UnsupportedSyntaxError(rule("starred_call").message, self.span(arg, frame),
                                                     rule=rule("starred_call")) from None
                else:
                    items = self.iterate(value, span)
                args.extend(items)
            elif arg.star == "**":
                if not (isinstance(value, Static) and isinstance(value.value, dict)):
                    raise UnsupportedSyntaxError(rule("starred_call").message, self.span(arg, frame),
                                                 rule=rule("starred_call"))
                kwargs.update({k: v if isinstance(v, (Node, Static, Seq)) else Static(v)
                               for k, v in value.value.items()})
            elif arg.keyword is not None:
                kwargs[arg.keyword.value] = value
            else:
                args.append(value)
        result = self.call(callee, args, kwargs, span)
        if isinstance(callee, MethodVal) and callee.name in _ops.RETYPING:  # `a.resize(shape)`
            shape = args[0] if len(args) == 1 else Seq(list(args), "tuple") if args else None
            self.refresh_array(callee.obj, callee.name, shape, frame, span)
        return result

    def call(self, callee, args: list, kwargs: dict, span) -> Any:
        if isinstance(callee, MethodVal):
            return self.array_method(callee, args, kwargs, span)
        if isinstance(callee, SeqMethod):
            return self.seq_method(callee, args, kwargs, span)
        if isinstance(callee, SourceFunc):
            return self.inline_source(callee, args, kwargs, span)
        if not isinstance(callee, Static):
            raise LoweringError(f"cannot call {describe_value(callee)}", span)
        fn = callee.value
        all_static = all(is_static(a) for a in args) and all(is_static(v) for v in kwargs.values())

        if isinstance(fn, types.BuiltinMethodType) and isinstance(getattr(fn, "__self__", None), dict) \
                and callee.path is None:
            return self.dict_method(fn, args, span)
        if getattr(fn, "__graphjit_op__", None):  # graphjit.Tensor and friends
            return self.op_call(fn.__graphjit_op__, args, kwargs, span)
        if getattr(fn, "__graphjit_fn__", None) is not None:  # a jitted function: inline its source
            return self.inline(fn.__graphjit_fn__, args, kwargs, span)
        if fn is range:
            return self.range_call(args, span)
        if fn in (isinstance, len, type) or fn is builtins.getattr or fn is hasattr:
            special = self.introspection(fn, args, span)
            if special is not None:
                return special
        if fn in (tuple, list) and len(args) == 1 and not all_static:
            return Seq(self.iterate(args[0], span), "tuple" if fn is tuple else "list")
        if fn in (zip, enumerate, reversed) and not all_static:
            return self.static_iterator(fn, args, kwargs, span)
        if fn in (sorted, min, max) and "key" in kwargs and not is_static(kwargs["key"]):
            return self.keyed_builtin(fn, args, kwargs, span)
        if fn is dict and not all_static:
            return self.dict_call(args, kwargs, span)
        if fn in (sum, min, max) and not all_static:
            return self.fold_builtin(fn, args, kwargs, span)
        if fn is print:  # an ordered effect, never run at compile time
            return self.op_call("call", args, kwargs, span, extra={"fn": "builtins.print"})
        builtin_rule = rule_of_builtin(fn)
        if builtin_rule is not None:
            self.require(builtin_rule, span)
            if builtin_rule == "builtin_setattr" and len(args) == 3 and is_static(args[1]):
                self.emit("setattr", [self.object_operand(args[0], span), args[2]], {"name": static_value(args[1])},
                          span)
                return Static(None)
            return self.emit("pycall", [self.object_operand(callee, span)] + list(args), {}, span)
        owner = getattr(fn, "__self__", None)
        if isinstance(fn, types.BuiltinMethodType) and isinstance(owner, IMMUTABLE) and all_static:
            return self.static_call(fn, args, kwargs, span)  # "relu".upper(), (1, 2).index(2)
        if fn in (any, all, sorted) and not all_static:
            items = self.iterate(args[0], span) if isinstance(args[0], Seq) else None
            operand = Seq(items, "tuple") if items is not None else args[0]
            return self.op_call("call", [operand] + list(args[1:]), kwargs, span,
                                extra={"fn": f"builtins.{fn.__name__}"})
        if fn in (map, filter) and len(args) >= 2:
            return self.map_filter(fn, args, span)
        if fn in (str, repr, format, ascii) and not all_static:
            self.require_or_unroll("fstring_runtime", span)
            return self.op_call("call", args, kwargs, span, extra={"fn": f"builtins.{fn.__name__}"})

        op_name = _ops.OP_BY_CALLABLE.get(id(fn))
        if op_name is not None:
            if all_static and op_name not in ARRAY_MAKERS \
                    and not _ops.OPS[op_name].writes.may_write(len(args), kwargs):  # never write data now
                result = self.try_static_call(fn, args, kwargs)
                if result is not None:
                    return result
            opdef = _ops.OPS[op_name]
            if opdef.emit in ("infix", "prefix") and (len(args) > (opdef.arity or 0) or "out" in kwargs):
                # `np.matmul(a, b, o)`: an operator cannot say `out`; the NumPy call can
                return self.op_call("call", args, kwargs, span, extra={"fn": f"numpy.{fn.__name__}"})
            return self.op_call(op_name, args, kwargs, span)

        if is_cell(fn):
            return self.inline_cell(callee, args, kwargs, span)
        name = qualified_name(fn)
        if name is None and library_function(fn):
            return self.opaque_call(callee, args, kwargs, span)  # json.dumps, copy.deepcopy: never inlined
        if name is None and (isinstance(fn, (types.FunctionType, types.MethodType)) and hasattr(fn, "__code__")
                             or isinstance(fn, types.MethodType)):
            if isinstance(fn, types.MethodType):
                owner = Static(fn.__self__, _owner_path(callee))
                return self.inline(fn.__func__, args, kwargs, span, self_value=owner)
            module = getattr(fn, "__module__", "") or ""
            if not module.startswith("numpy"):
                return self.inline(fn, args, kwargs, span)

        if name is not None:
            if all_static and not name.startswith("numpy.random") and not holds_array(args, kwargs):
                result = self.try_static_call(fn, args, kwargs)
                if result is not None:
                    return result
            return self.op_call("call", args, kwargs, span, extra={"fn": name})
        if isinstance(fn, type) and issubclass(fn, np.generic) and not all_static:
            return self.op_call("call", args, kwargs, span, extra={"fn": f"numpy.{fn.__name__}"})  # np.float32(s)
        if isinstance(fn, type) or id(fn) in PURE_BUILTINS:
            if not all_static:
                raise LoweringError(f"{callable_name(fn)}() with run-time arguments cannot run at compile time", span)
            if isinstance(fn, type) and not issubclass(fn, (int, float, str, bool, tuple, list, dict, complex,
                                                              slice, range)):
                try:
                    result = fn(*[static_value(a) for a in args],
                                **{k: static_value(v) for k, v in kwargs.items()})
                except Exception as e:
                    raise LoweringError(f"{callable_name(fn)}() failed at compile time: {type(e).__name__}: {e}", span) \
                        from None
                return self.const_object(result, (fn, [static_value(a) for a in args],
                                                  {k: static_value(v) for k, v in kwargs.items()}))
            return self.static_call(fn, args, kwargs, span)
        return self.opaque_call(callee, args, kwargs, span)

    def static_call(self, fn, args, kwargs, span):
        """A pure call on compile-time values, made now; an exception it raises is raised at run time."""
        try:
            return Static(fn(*[static_value(a) for a in args], **{k: static_value(v) for k, v in kwargs.items()}))
        except Exception as e:  # noqa: BLE001 - eager Python raises it when the call runs
            return self.raise_later(e, span)

    def raise_later(self, error: Exception, span):
        """Raise `error` (a builtin exception with literal arguments) where the call runs."""
        cls = type(error)
        if getattr(builtins, cls.__name__, None) is not cls or not all(is_literal(a) for a in error.args):
            raise LoweringError(f"this call fails at compile time: {cls.__name__}: {error}", span) from None
        self.emit("raise", [Static(f"builtins.{cls.__name__}")] + [Static(a) for a in error.args], span=span)
        return Static(None)

    def check_builtin(self, fn, span) -> None:
        """Builtins a level rejects are reported at the call, whatever their arguments are."""
        key = rule_of_builtin(fn)
        if key is not None:
            self.require(key, span)

    def opaque_call(self, callee: Static, args, kwargs, span):
        """A Python callable without source: an ordered opaque call at COMPATIBLE (never run now)."""
        fn = callee.value
        owner = getattr(fn, "__self__", None)
        if isinstance(owner, (list, dict, set)) and callee.path is not None:
            if getattr(fn, "__name__", "") in MUTATING_METHODS:
                self.note_container_write(owner)
            self.require("mutate_object", span, f"`{callable_name(fn)}` mutates a container held outside the function")
        else:
            self.require("call_opaque", span, f"calling {callable_name(fn)} on run-time values needs the Python "
                                              "interpreter")
        return self.op_call("pycall", [self.object_operand(callee, span)] + list(args), kwargs, span)

    def try_static_call(self, fn, args, kwargs):
        """Compute a call on compile-time values now; None when the result is an array."""
        try:
            result = fn(*[static_value(a) for a in args], **{k: static_value(v) for k, v in kwargs.items()})
        except Exception:
            return None  # raise it at run time, where eager Python raises it
        if isinstance(result, np.ndarray):
            return None
        return Static(result)

    def op_call(self, op_name: str, args: list, kwargs: dict, span, extra: Optional[dict] = None) -> Node:
        """Positional arguments become operands; compile-time keywords become attributes."""
        attrs = dict(extra or {})
        args, kwargs = out_by_keyword(_ops.OPS[op_name].fn, args, kwargs, op_name in REDUCTIONS)
        python_call = op_name == "pycall" or str(attrs.get("fn", "")).startswith("builtins.")
        operands = list(args) if python_call else [self.numpy_operand(a) for a in args]
        if op_name in REDUCTIONS and len(operands) >= 2 and is_static(args[1]):
            attrs["axis"] = freeze(static_value(args[1]))
            operands = operands[:1] + operands[2:]
        if op_name == "astype" and operands and is_static(operands[-1]):
            attrs["dtype"] = np.dtype(static_value(operands.pop())).type
        runtime_kw = []
        for key, value in kwargs.items():
            if is_static(value) and (key == "dtype" or is_literal(freeze(static_value(value)))):
                v = static_value(value)
                attrs[key] = np.dtype(v).type if key == "dtype" and v is not None else freeze(v)
            else:
                runtime_kw.append(key)
                operands.append(value)
        if runtime_kw:
            attrs["kw"] = tuple(runtime_kw)
        return self.emit(op_name, operands, attrs, span)

    def numpy_operand(self, value):
        """NumPy accepts tuples wherever it accepts lists; tuples print as literals."""
        if isinstance(value, Seq) and value.kind == "list":
            return Seq(value.items, "tuple")
        if isinstance(value, Static) and isinstance(value.value, list):
            return Static(freeze(value.value), value.path)
        return value


def _owner_path(callee: Static):
    path = callee.path
    if path is not None and path.steps and path.steps[-1][0] == "attr":
        return Path(path.root_kind, path.root, path.steps[:-1])
    return None
