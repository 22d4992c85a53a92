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

from ..graph import ops as _ops
from ..graph.diagnostics import LoweringError, UnsupportedSyntaxError
from ..graph.ir import Node
from ..graph.literals import is_literal
from .rules import BUILTIN_RULES, rule
from ..graph.types import ArrayType, TupleType
from .values import MaybeUnbound, MethodVal, RangeVal, Seq, SourceFunc, Static, describe_value, is_static, static_value

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
SAFE_MODULES = ("numpy", "math", "builtins", "operator")


class NeedsStatic(LoweringError):
    """A run-time value was used where the compiler needs a compile-time one (e.g. a list index).

    `instead`: the error to report when no enclosing loop can unroll to make the value compile-time.
    """

    code = "GJ001"  # a lowering error, as LoweringError itself reports

    def __init__(self, message, span=None, hint="", instead=None):
        super().__init__(message, span, hint)
        self.instead = instead


_PUBLIC_MODULES = ("numpy", "numpy.linalg", "numpy.fft", "numpy.random", "math")
_QUALNAMES: dict = {}


def qualified_name(fn) -> Optional[str]:
    """`numpy.linalg.norm` for a callable in a module we may call from generated code."""
    key = id(fn)
    if key in _QUALNAMES:
        return _QUALNAMES[key]
    name = _lookup_qualified(fn)
    _QUALNAMES[key] = name
    return name


def _lookup_qualified(fn) -> Optional[str]:
    """Ask the callable where it lives first (cheap); walk the public modules only if needed.

    Walking them all costs ~0.4 s once (it loads NumPy's lazy submodules), so it is the last resort.
    """
    import sys
    attr = getattr(fn, "__name__", None)
    if not isinstance(attr, str) or attr.startswith("_") or isinstance(fn, type):
        return None
    home = getattr(fn, "__module__", None) or ""
    if isinstance(getattr(fn, "__self__", None), np.random.RandomState):
        home = "numpy.random"
    candidates = [m for m in _PUBLIC_MODULES if home == m or home.startswith(m + ".")]
    candidates.sort(key=len, reverse=True)
    for mod_name in candidates + [m for m in _PUBLIC_MODULES if m not in candidates]:
        module = sys.modules.get(mod_name)
        if module is None and mod_name not in candidates:
            continue  # never load a module just to look a function up in it
        if module is None:
            import importlib
            module = importlib.import_module(mod_name)
        if getattr(module, attr, None) is fn:
            return f"{mod_name}.{attr}"
    return None


class CallLowering:
    def expr_Call(self, node: cst.Call, frame) -> Any:
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
        from .expressions import SeqMethod
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
        builtin_rule = _builtin_rule(fn)
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

        if _is_cell(fn):
            return self.inline_cell(callee, args, kwargs, span)
        name = qualified_name(fn)
        if name is None and _library_function(fn):
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
            if all_static and not name.startswith("numpy.random") and not _holds_array(args, kwargs):
                result = self.try_static_call(fn, args, kwargs)
                if result is not None:
                    return result
            return self.op_call("call", args, kwargs, span, extra={"fn": name})
        if isinstance(fn, type) and issubclass(fn, np.generic) and not all_static:
            return self.op_call("call", args, kwargs, span, extra={"fn": f"numpy.{fn.__name__}"})  # np.float32(s)
        if isinstance(fn, type) or id(fn) in PURE_BUILTINS:
            if not all_static:
                raise LoweringError(f"{_name(fn)}() with run-time arguments cannot run at compile time", span)
            if isinstance(fn, type) and not issubclass(fn, (int, float, str, bool, tuple, list, dict, complex,
                                                              slice, range)):
                try:
                    result = fn(*[static_value(a) for a in args],
                                **{k: static_value(v) for k, v in kwargs.items()})
                except Exception as e:
                    raise LoweringError(f"{_name(fn)}() failed at compile time: {type(e).__name__}: {e}", span) \
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
        key = _builtin_rule(fn)
        if key is not None:
            self.require(key, span)

    def dict_call(self, args, kwargs, span):
        """`dict(pairs, **kw)` with run-time values: a compile-time dict of them (keys compile-time)."""
        out = {}
        if len(args) > 1:
            raise LoweringError("dict() takes at most one positional argument", span)
        if args:
            source = args[0]
            if isinstance(source, Static) and isinstance(source.value, dict):
                out.update(source.value)
            else:
                for pair in self.iterate(source, span):
                    items = self.iterate(pair, span)
                    if len(items) != 2 or not is_static(items[0]):
                        raise NeedsStatic("dict() of run-time values needs compile-time keys", span)
                    out[static_value(items[0])] = items[1]
        out.update(kwargs)
        return Static(out)

    def keyed_builtin(self, fn, args, kwargs, span):
        """`sorted`/`min`/`max` with a `key` function: keys computed now, so they must be compile-time."""
        items = self.iterate(args[0], span) if len(args) == 1 else list(args)
        key = kwargs["key"]
        keys = [self.call(key, [item], {}, span) for item in items]
        reverse = kwargs.get("reverse", Static(False))
        if not all(is_static(k) for k in keys) or not is_static(reverse) or set(kwargs) - {"key", "reverse"}:
            raise NeedsStatic(f"{fn.__name__}() with a key function needs compile-time keys", span)
        values = [static_value(k) for k in keys]
        order = list(range(len(items)))
        if fn is sorted:
            order = sorted(order, key=values.__getitem__, reverse=bool(static_value(reverse)))
            return Seq([items[k] for k in order], "list")
        if not items:
            return self.raise_later(ValueError(f"{fn.__name__}() iterable argument is empty"), span)
        return items[fn(order, key=values.__getitem__)]

    def opaque_call(self, callee: Static, args, kwargs, span):
        """A Python callable without source: an ordered opaque call at COMPATIBLE (never run now)."""
        fn = callee.value
        owner = getattr(fn, "__self__", None)
        if isinstance(owner, (list, dict, set)) and callee.path is not None:
            if getattr(fn, "__name__", "") in MUTATING_METHODS:
                self.note_container_write(owner)
            self.require("mutate_object", span, f"`{_name(fn)}` mutates a container held outside the function")
        else:
            self.require("call_opaque", span, f"calling {_name(fn)} on run-time values needs the Python "
                                              "interpreter")
        return self.op_call("pycall", [self.object_operand(callee, span)] + list(args), kwargs, span)

    def dict_method(self, fn, args, span):
        """Methods of a dict built by the compiled code (its values may be run-time): compile time."""
        d, name = fn.__self__, fn.__name__
        keys = [static_value(a) if is_static(a) else None for a in args[:1]]
        wrap = (lambda v: v if isinstance(v, (Node, Static, Seq)) else Static(v))
        if name == "get":
            return wrap(d.get(keys[0], args[1] if len(args) > 1 else Static(None)))
        if name in ("keys", "values", "items"):
            if name == "keys":
                return Seq([Static(k) for k in d], "list")
            if name == "values":
                return Seq([wrap(v) for v in d.values()], "list")
            return Seq([Seq([Static(k), wrap(v)], "tuple") for k, v in d.items()], "list")
        if name == "update":
            other = args[0]
            d.update(other.value if isinstance(other, Static) else {})
            return Static(None)
        if name == "pop":
            return wrap(d.pop(keys[0], *(args[1:2])))
        if name == "setdefault":
            return wrap(d.setdefault(keys[0], args[1] if len(args) > 1 else Static(None)))
        if name == "copy":
            return Static(dict(d))
        if name == "clear":
            d.clear()
            return Static(None)
        if name == "popitem":
            if not d:
                return self.raise_later(KeyError("popitem(): dictionary is empty"), span)
            key, value = d.popitem()
            return Seq([Static(key), wrap(value)], "tuple")
        raise UnsupportedSyntaxError(f"dict.{name}() is not supported in a graph", span)

    def seq_method(self, method, args, kwargs, span):
        """List methods on a compile-time list of values: computed now, as the loop would."""
        seq, name = method.seq, method.name
        items = seq.items
        if name == "append":
            items.append(args[0])
        elif name == "extend":
            items.extend(self.iterate(args[0], span))
        elif name == "insert":
            items.insert(static_value(args[0]), args[1])
        elif name == "pop":
            return items.pop(static_value(args[0]) if args else -1)
        elif name == "reverse":
            items.reverse()
        elif name == "sort":
            ordered = self.keyed_builtin(sorted, [seq], dict(kwargs, key=kwargs.get("key", Static(None))), span) \
                if kwargs.get("key") is not None and not is_static(kwargs["key"]) else None
            if ordered is None:
                if not all(is_static(i) for i in items) or not all(is_static(v) for v in kwargs.values()):
                    raise NeedsStatic("list.sort() needs compile-time items (or a key giving compile-time keys)",
                                      span)
                order = sorted(range(len(items)), key=[static_value(i) for i in items].__getitem__,
                               reverse=bool(static_value(kwargs.get("reverse", Static(False)))))
                ordered = Seq([items[k] for k in order], "list")
            items[:] = ordered.items
        elif name == "clear":
            items.clear()
        elif name == "copy":
            return Seq(list(items), seq.kind)
        elif name in ("index", "count", "remove"):
            if not all(is_static(i) for i in items) or not is_static(args[0]):
                raise LoweringError(f"list.{name}() needs compile-time items", span)
            values = [static_value(i) for i in items]
            if name == "remove":
                del items[values.index(static_value(args[0]))]
            else:
                return Static(getattr(values, name)(static_value(args[0])))
        return Static(None)

    def map_filter(self, fn, args, span):
        """`map(f, xs)` / `filter(f, xs)` over compile-time sequences: unrolled calls."""
        func = args[0]
        seqs = [self.iterate(a, span) for a in args[1:]]
        if fn is map:
            return Seq([self.call(func, list(items), {}, span) for items in zip(*seqs)], "list")
        kept = []
        for item in seqs[0]:
            keep = item if isinstance(func, Static) and func.value is None else self.call(func, [item], {}, span)
            if not is_static(keep):
                raise NeedsStatic("`filter` needs a predicate known at compile time", span)
            if static_value(keep):
                kept.append(item)
        return Seq(kept, "list")

    # --- the kinds of call -------------------------------------------------------------------
    def fold_builtin(self, fn, args, kwargs, span):
        """`sum`/`min`/`max` over a compile-time sequence of run-time values, Python's way."""
        items = args
        if len(args) == 1 and isinstance(args[0], Seq) or fn is sum:
            items = self.iterate(args[0], span) if isinstance(args[0], Seq) else None
        if items is None:  # sum(array): Python iterates the first axis
            return self.op_call("call", args, kwargs, span, extra={"fn": "builtins.sum"})
        if fn is sum:
            import operator
            acc = args[1] if len(args) > 1 else kwargs.get("start", Static(0))
            for item in items:
                acc = self.binary("add", operator.add, acc, item, span)
            return acc
        return self.op_call("py_min" if fn is min else "py_max", list(items), kwargs, span)

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
        args, kwargs = _out_by_keyword(_ops.OPS[op_name].fn, args, kwargs, op_name in REDUCTIONS)
        python_call = op_name == "pycall" or str(attrs.get("fn", "")).startswith("builtins.")
        operands = list(args) if python_call else [self.numpy_operand(a) for a in args]
        if op_name in REDUCTIONS and len(operands) >= 2 and is_static(args[1]):
            attrs["axis"] = _freeze(static_value(args[1]))
            operands = operands[:1] + operands[2:]
        if op_name == "astype" and operands and is_static(operands[-1]):
            attrs["dtype"] = np.dtype(static_value(operands.pop())).type
        runtime_kw = []
        for key, value in kwargs.items():
            if is_static(value) and (key == "dtype" or is_literal(_freeze(static_value(value)))):
                v = static_value(value)
                attrs[key] = np.dtype(v).type if key == "dtype" and v is not None else _freeze(v)
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
            return Static(_freeze(value.value), value.path)
        return value

    def array_method(self, method: MethodVal, args: list, kwargs: dict, span) -> Node:
        name = method.name
        op_name = _ops.METHOD_OPS.get(name)
        if op_name is None and not isinstance(method.obj.type, ArrayType) and not _from_numpy(method.obj):
            return self.object_method(method, args, kwargs, span)
        if op_name is None:
            if isinstance(method.obj.type, ArrayType) and not callable(getattr(np.ndarray, name, None)):
                raise LoweringError(f"arrays have no method `.{name}()`", span)
            # another method of an array (or of an object NumPy made, e.g. a Generator): an ordered call
            self.require("call_numpy", span)
            bound = self.emit("getattr", [method.obj], {"name": name}, span)
            return self.op_call("pycall", [bound] + list(args), kwargs, span)
        if name == "reshape":
            shape = args[0] if len(args) == 1 else Seq(list(args), "tuple")
            return self.emit("reshape", [method.obj, self.numpy_operand(shape)], span=span)
        if name == "transpose":
            axes = args[0] if len(args) == 1 else Seq(list(args), "tuple") if args else None
            attrs = {"axes": _freeze(static_value(axes))} if axes is not None else {}
            return self.emit("transpose", [method.obj], attrs, span)
        if name == "astype":
            return self.emit("astype", [method.obj], {"dtype": np.dtype(static_value(args[0])).type}, span)
        return self.op_call(op_name, [method.obj] + list(args), kwargs, span)

    def object_method(self, method: MethodVal, args: list, kwargs: dict, span) -> Node:
        """A method of a run-time Python object (a container read at call time): an ordered opaque call."""
        obj = self.param_objects.get(method.obj.id)
        if isinstance(obj, (list, dict, set)):
            if method.name in MUTATING_METHODS:
                self.note_container_write(obj)
            self.require("mutate_object", span, f"`{type(obj).__name__}.{method.name}` on a container held outside "
                                                "the function")
        else:
            self.require("call_opaque", span, f"calling `.{method.name}()` of a run-time Python object needs the "
                                              "Python interpreter")
        bound = self.emit("getattr", [method.obj], {"name": method.name}, span)
        return self.op_call("pycall", [bound] + list(args), kwargs, span)

    def range_call(self, args: list, span):
        if all(is_static(a) for a in args):
            return Static(range(*[static_value(a) for a in args]))
        if len(args) == 1:
            return RangeVal(Static(0), args[0], Static(1))
        if len(args) == 2:
            return RangeVal(args[0], args[1], Static(1))
        return RangeVal(*args)

    def introspection(self, fn, args, span):
        target = args[0] if args else None
        if fn is len and isinstance(target, Seq):
            return Static(len(target.items))
        if fn is len and isinstance(target, Node):
            t = target.type
            if isinstance(t, ArrayType) and t.shape and t.shape[0] is not None:
                return Static(t.shape[0])
            if isinstance(t, TupleType):
                return Static(len(t.items))
            return self.emit("len", [target], span=span)
        if fn is isinstance and isinstance(target, (Node, Seq)) and is_static(args[1]):
            classes = static_value(args[1])
            if isinstance(target, Seq):
                return Static(isinstance((), classes) if target.kind == "tuple" else isinstance([], classes))
            probes = _probes_for(target.type)
            answers = {isinstance(p, classes) for p in probes}
            if len(answers) == 1:
                return Static(answers.pop())
            # the type does not decide it (a NumPy scalar or a 0-d array, an object): ask at run time
            names = _class_names(classes)
            if names is None:
                raise LoweringError("isinstance() of this run-time value needs NumPy or builtin classes", span)
            return self.emit("isinstance", [target], {"classes": names}, span)
        if fn is type and len(args) == 1 and isinstance(target, Node):
            kinds = {type(p) for p in _probes_for(target.type)}
            if len(kinds) == 1:
                return Static(kinds.pop())
            raise LoweringError("type() of this run-time value is not known at compile time", span,
                                hint="use isinstance()")
        if fn is len and isinstance(target, Static):
            self.guards.length(target.path, target.value)
            return None  # computed as any pure builtin
        if fn in (builtins.getattr, hasattr) and len(args) >= 2 and is_static(args[1]):
            if fn is hasattr:
                if isinstance(target, Static):
                    result = hasattr(target.value, static_value(args[1]))
                    self.guards.has(target.path, static_value(args[1]), result, target.value)
                    return Static(result)
                probe = _probe_for(target.type) if isinstance(target, Node) else None
                if isinstance(probe, np.ndarray):  # every array has the same attributes
                    return Static(hasattr(probe, static_value(args[1])))
                return None
            try:
                return self.attribute(target, static_value(args[1]), span)
            except LoweringError:
                if len(args) == 3:
                    if isinstance(target, Static):
                        self.guards.has(target.path, static_value(args[1]), False, target.value)
                    return args[2]
                raise
        return None

    def static_iterator(self, fn, args, kwargs, span):
        if fn is zip:
            seqs = [self.iterate(a, span) for a in args]
            return Seq([Seq(list(items), "tuple") for items in zip(*seqs)], "list")
        if fn is enumerate:
            start = args[1] if len(args) > 1 else kwargs.get("start", Static(0))
            if not is_static(start):
                raise NeedsStatic("enumerate() needs a compile-time start", span)
            start = static_value(start)
            return Seq([Seq([Static(start + k), v], "tuple") for k, v in enumerate(self.iterate(args[0], span))],
                       "list")
        return Seq(list(reversed(self.iterate(args[0], span))), "list")

    def inline_cell(self, callee: Static, args, kwargs, span):
        cell = callee.value
        construct = type(cell).construct
        return self.inline(construct, args, kwargs, span, self_value=callee)

    def inline_source(self, fn: SourceFunc, args, kwargs, span):
        frame = type(fn.frame)(fn.frame.parsed, fn.name, dict(fn.frame.env), fn.frame.globals, fn.frame.closure)
        for name, value in frame.env.items():  # the enclosing function's names are free variables here
            if isinstance(value, MaybeUnbound):
                frame.env[name] = MaybeUnbound(value.value, value.vtype, free=True)
        self.bind_source_params(fn, frame, args, kwargs, span)
        return self.budgeted_call(fn.node, fn.name, span, lambda: self.run_body(fn.node, frame))

    def bind_source_params(self, fn: SourceFunc, frame, args, kwargs, span) -> None:
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

    def param_defaults(self, params: cst.Parameters, frame) -> dict:
        out = {}
        for p in list(params.posonly_params) + list(params.params) + list(params.kwonly_params):
            if p.default is not None:
                out[p.name.value] = self.expr(p.default, frame)
        return out


IMMUTABLE = (str, bytes, int, float, complex, tuple, frozenset, range)
MUTATING_METHODS = {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "update",
                    "setdefault", "popitem", "add", "discard", "difference_update", "intersection_update",
                    "symmetric_difference_update", "__setitem__", "__delitem__", "__iadd__"}


_LIBRARY_DIRS: list = []   # (directory, is_library), the longest matching directory decides


def _holds_array(args: list, kwargs: dict) -> bool:
    """Is an argument a compile-time array? A function the table does not know may write it
    (`np.fill_diagonal(W, 0)`, `np.add.at(W, i, 1)`), so the call runs at call time."""
    def holds(value) -> bool:
        v = static_value(value)
        return isinstance(v, np.ndarray) or isinstance(v, (list, tuple, dict)) and any(
            holds(Static(i)) for i in (v.values() if isinstance(v, dict) else v))
    return any(holds(a) for a in [*args, *kwargs.values()])


_POSITIONAL_NAMES: dict = {}


def _out_by_keyword(fn, args: list, kwargs: dict, reduction: bool = False) -> tuple:
    """`np.dot(a, b, c)` as `np.dot(a, b, out=c)`: arguments from NumPy's `out` parameter on are
    passed by keyword, so the node's `out` is the keyword the op table's `writes` rule reads (a
    reduction keeps only `a, axis` positional: `np.sum(a, 0, None, b)`). A ufunc's positional
    `out` stays where it is: that rule knows the ufunc's `nin`.
    """
    if fn is None or isinstance(fn, np.ufunc) or not callable(fn):
        return args, kwargs
    names = _positional_names(fn)
    if "out" not in names or len(args) <= names.index("out"):
        return args, kwargs
    first = min(2, names.index("out")) if reduction else names.index("out")
    moved = dict(kwargs)
    moved.update(zip(names[first:], args[first:]))
    return args[:first], moved


def _positional_names(fn) -> tuple:
    """Names of `fn`'s parameters that may be given positionally, in order (() if unknown)."""
    key = id(fn)
    if key not in _POSITIONAL_NAMES:
        import inspect
        try:
            params = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            params = ()
        names = []
        for p in params:
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                break
            names.append(p.name)
        _POSITIONAL_NAMES[key] = tuple(names)
    return _POSITIONAL_NAMES[key]


def _library_function(fn) -> bool:
    """A Python function of the standard library or an installed package: called, never inlined.

    Its code is not the user's: inlining it would report its internals as the user's problems (or
    run them as fallback blocks), and its effects (random numbers, clocks, I/O) belong at call time.
    graphjit's own package is compiled like the user's code.
    """
    import os
    func = getattr(fn, "__func__", fn)
    code = getattr(func, "__code__", None)
    if code is None:
        return False
    if not _LIBRARY_DIRS:
        import sysconfig
        paths = sysconfig.get_paths()
        for key in ("stdlib", "platstdlib", "purelib", "platlib"):
            if paths.get(key):
                _LIBRARY_DIRS.append((os.path.realpath(paths[key]) + os.sep, True))
        _LIBRARY_DIRS.append((os.path.realpath(os.path.dirname(os.path.dirname(__file__))) + os.sep, False))
    filename = os.path.realpath(code.co_filename)
    matches = [(len(d), is_library) for d, is_library in _LIBRARY_DIRS if filename.startswith(d)]
    return bool(matches) and max(matches)[1]


def _from_numpy(node) -> bool:
    """Is this run-time object something a NumPy function returned (a Generator, say)?"""
    return node.op == "call" and str(node.attrs.get("fn", "")).startswith("numpy.")


def _builtin_rule(fn):
    """The rule row of a builtin the table lists (`iter`, `eval`, `set`, `setattr`...), else None."""
    name = getattr(fn, "__name__", "")
    try:
        if getattr(builtins, name, None) is fn:
            return BUILTIN_RULES.get(name)
    except TypeError:
        return None
    return None


def _is_cell(obj) -> bool:
    return hasattr(type(obj), "construct") and not isinstance(obj, type) and getattr(obj, "__graphjit_cell__", False)


def _owner_path(callee: Static):
    path = callee.path
    if path is not None and path.steps and path.steps[-1][0] == "attr":
        from ..graph.paths import Path
        return Path(path.root_kind, path.root, path.steps[:-1])
    return None


def _probes_for(t) -> list:
    """Values of every Python type a run-time value of graph type `t` may have; [object()] if unknown."""
    if isinstance(t, ArrayType):
        if t.shape is not None and len(t.shape) > 0:
            return [np.empty((0,) * len(t.shape))]
        scalars = [np.dtype(t.dtype).type(0)] if t.dtype is not None else [np.float64(0), np.int64(0), np.bool_(0)]
        return [np.empty(())] + scalars  # a 0-d result may be a NumPy scalar or a 0-d array
    probe = _probe_for(t)
    return [probe] if probe is not None or getattr(t, "kind", "") == "none" else [object(), np.empty(0), 0.0]


def _class_names(classes):
    """Qualified names of NumPy and builtin classes (what an `isinstance` node may name), else None."""
    out = []
    for cls in classes if isinstance(classes, tuple) else (classes,):
        name = getattr(cls, "__name__", "")
        if getattr(builtins, name, None) is cls:
            out.append(f"builtins.{name}")
        elif getattr(np, name, None) is cls:
            out.append(f"numpy.{name}")
        else:
            return None
    return tuple(out)


def _probe_for(t):
    if isinstance(t, ArrayType):
        return np.empty(0)
    if isinstance(t, TupleType):
        return ()
    from ..graph.types import ScalarType
    if isinstance(t, ScalarType):
        return {"int": 0, "float": 0.0, "bool": False, "complex": 0j, "str": "", "none": None}.get(t.kind)
    return None


def _freeze(value):
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def _name(fn) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
