"""What `graphjit check` and `graphjit transpile` may compute without running the file they read.

A file read from elsewhere is never run: its `def`s become functions whose code never runs
(static_module.py), and the only things computed while reading it are listed here, one table each:

- `KNOWN_MODULES`: the modules an `import` in the file may bind (NumPy's core, math, graphjit's
  library, the standard library's pure-computation modules such as json or functools). Any other
  import, the file's own neighbours and the operating system's modules (os, posix, sys, subprocess,
  io, builtins) included, binds a value only running the file would give; nothing is imported.
- `PURE_BUILTINS`, `PURE_MATH`, `PURE_NUMPY`, `NUMPY_MAKERS`: the functions that run on literal
  data (numbers, strings, tuples, lists, dicts, dtypes, small arrays), with no effect but their
  result; methods of literal data run too (`REFUSED_METHODS` never), `CONTAINER_METHODS` on
  containers of inert values, `INTROSPECTION` on anything; `SKIPPED_EFFECTS` are not made at all.
- `LIMITS` (graph/value_size.py, shared with constant folding; literal_data.py sizes a value): how big an integer, a sequence or
  an array may get, and the budget of one file. The size of a result is estimated from the
  arguments *before* anything is computed (`10**10**10`, `[0] * 10**10`, `np.zeros((10**6, 10**6))`
  are refused, not tried); a layer's weights are checked the same way (common/init_values.py).

Lowering whose globals are a `StaticNamespace` (a read file's) is sealed: every call it would make
at compile time goes through `refusal(fn, args, kwargs)` first. graphjit's own library classes
(layers, Parameters, initializers) are built for real: their code is ours.
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import math
import types
from typing import Any, Optional

import numpy as np

from ..graph.diagnostics import UnknownValueError
from ..graph.value_size import (LIMITS, bits, broadcast_size, length, operation_size, power_bits, too_big,
                                wide_format)
from ..common.init_values import READING_LIMIT, WeightTooBig
from .literal_data import DICT_VIEWS, size_of


class Budget:
    """What reading one file may compute in all: `LIMITS['budget']` items (each call or operator made
    spends the estimated size of its result), so many small computations cannot add up to a big one."""

    def __init__(self, items: int = 0):
        self.left = items or LIMITS["budget"]

    def spend(self, size: int) -> Optional[str]:
        """None when `size` more items fit, else why not."""
        self.left -= max(int(size), 1)
        if self.left < 0:
            return f"graphjit computes at most {LIMITS['budget']:,} items in all while it reads a file"
        return None


class StaticNamespace(dict):
    """The globals of a file read without running it: lowering against these is sealed."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.budget = Budget()


def budget_of(namespace) -> Optional[Budget]:
    return namespace.budget if isinstance(namespace, StaticNamespace) else None


def is_sealed(namespace) -> bool:
    return isinstance(namespace, StaticNamespace)


# --- modules -----------------------------------------------------------------------------------

# Modules a read file's import may bind: NumPy's own, math, and graphjit's library (not its command
# line, samples, tests, benchmarks or docs generators, which run code when imported).
KNOWN_MODULES = frozenset({
    "numpy", "numpy.linalg", "numpy.fft", "numpy.random", "math",
    "graphjit", "graphjit.nn", "graphjit.ops", "graphjit.common", "graphjit.common.initializer",
    "graphjit.tensor", "graphjit.parameter", "graphjit.context", "graphjit.api", "graphjit.gradients",
    "graphjit.jit_options",
    # the standard library's pure-computation modules: importing them runs nothing of note, and a call of
    # one of their functions is made only if a table below lists it (else it stays a call at run time)
    "__future__", "abc", "bisect", "cmath", "collections", "collections.abc", "copy", "dataclasses", "decimal",
    "enum", "fractions", "functools", "heapq", "itertools", "json", "numbers", "operator", "random", "re",
    "statistics", "string", "typing",
})
KNOWN_PACKAGES = ("graphjit.nn.", "graphjit.ops.")   # and every module below these


def known_module(name: str) -> bool:
    return name in KNOWN_MODULES or (name.startswith(KNOWN_PACKAGES) and "__main__" not in name.split("."))


def import_known(name: str) -> Optional[types.ModuleType]:
    """The module `name` if the table lists it (imported if it was not), else None."""
    if not known_module(name):
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def module_attribute(module: types.ModuleType, name: str) -> Any:
    """`module.name` without running the module's `__getattr__` (NumPy's lazy submodules).

    A name the module already holds, or a known submodule; AttributeError otherwise.
    """
    namespace = vars(module)
    if name in namespace:
        return namespace[name]
    sub = import_known(f"{module.__name__}.{name}")
    if sub is not None:
        return sub
    raise AttributeError(f"module `{module.__name__}` has no attribute `{name}` graphjit reads without running it")


def is_inert(value: Any, depth: int = 0) -> bool:
    """Whether computing with `value` can run nothing but graphjit's and traps: literal data, the file's
    own classes, instances and functions (their code is a trap), graphjit's library objects, and
    containers of these. A function or class from anywhere else (`np.save`, `len`) is not inert."""
    if depth > LIMITS["depth"]:
        return False
    if size_of(value) is not None:
        return True
    kind = type(value)
    if isinstance(value, types.FunctionType):
        return is_sealed(value.__globals__)
    if isinstance(value, type):
        return bool(getattr(value, "__graphjit_static_class__", False)) or is_library_class(value)
    if getattr(kind, "__graphjit_static_class__", False) or is_library_class(kind):
        return True
    if kind in (tuple, list, set, frozenset) + DICT_VIEWS and len(value) <= LIMITS["items"]:
        return all(is_inert(v, depth + 1) for v in value)
    if kind is dict and len(value) <= LIMITS["items"]:
        return all(is_inert(k, depth + 1) and is_inert(v, depth + 1) for k, v in value.items())
    return False


# Methods of builtin containers that touch only their items (a method of the file's classes among the
# items is a trap): they run on any inert container with inert arguments (`layers.append(layer)`).
CONTAINER_METHODS = frozenset({"append", "extend", "insert", "pop", "index", "count", "remove", "reverse", "copy",
                               "clear", "keys", "values", "items", "get", "setdefault", "update", "add",
                               "discard", "union", "intersection", "difference", "__getitem__", "__len__",
                               "__contains__"})


# --- the functions that may run ----------------------------------------------------------------

def binary_refusal(fn, left, right, budget: Optional[Budget] = None) -> Optional[str]:
    """Why `left <op> right` on compile-time values is not computed now, or None to compute it."""
    for operand in (left, right):
        if size_of(operand) is None:
            return "an operand is not literal data"
    reason = too_big(fn, left, right)
    if reason is None and budget is not None:
        size = operation_size(fn, left, right)
        reason = budget.spend(size // 64 if isinstance(left, int) and isinstance(right, int) else size)
    return reason


def _shape_size(shape) -> int:
    """Elements of an array of `shape` (an int or a tuple of ints); more than the limit if unknown."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        return max(int(shape), 0)
    if isinstance(shape, (tuple, list)) and all(isinstance(d, (int, np.integer)) for d in shape):
        return int(np.prod([max(int(d), 0) for d in shape], dtype=np.float64))
    return LIMITS["elements"] + 1


def _result_of_iterable(args, kwargs) -> int:
    return sum(length(a) for a in args) + sum(length(v) for v in kwargs.values())


def _arange_size(args, kwargs) -> int:
    parts = list(args) + [kwargs[k] for k in ("start", "stop", "step") if k in kwargs]
    if not all(isinstance(p, (int, float, np.integer, np.floating)) and not isinstance(p, bool) for p in parts):
        return LIMITS["elements"] + 1
    start, stop, step = (0, parts[0], 1) if len(parts) == 1 else (parts + [1])[:3]
    if step == 0 or not all(math.isfinite(float(p)) for p in (start, stop, step)):
        return LIMITS["elements"] + 1
    return max(0, math.ceil((float(stop) - float(start)) / float(step)))


def _shape_arg(index: int, keyword: str):
    def size(args, kwargs) -> int:
        shape = args[index] if len(args) > index else kwargs.get(keyword, 1 if keyword == "size" else None)
        return 1 if shape is None and keyword == "size" else _shape_size(shape)
    return size


def _dims(args, kwargs) -> int:   # np.random.randn(2, 3)
    return _shape_size(tuple(args)) if args else 1


def _eye(args, kwargs) -> int:
    n = args[0] if args else kwargs.get("N", 0)
    m = args[1] if len(args) > 1 and args[1] is not None else kwargs.get("M") or n
    return _shape_size((n, m))


def _linspace(args, kwargs) -> int:
    num = args[2] if len(args) > 2 else kwargs.get("num", 50)
    return _shape_size(num)


def _like(args, kwargs) -> int:
    shape = kwargs.get("shape")
    return _shape_size(shape) if shape is not None else broadcast_size(args[:1])


def _integer(result_bits: float) -> int:
    """The size of an integer result of `result_bits` bits: past the limit when it is too long."""
    return LIMITS["elements"] + 1 if result_bits > LIMITS["int_bits"] else max(1, int(result_bits) // 64)


def _factorial(args, kwargs) -> int:   # math.factorial(n) has about n log2 n bits
    n = args[0] if args else 0
    return _integer(n * max(1.0, math.log2(max(n, 2)))) if isinstance(n, int) else LIMITS["elements"] + 1


def _comb(args, kwargs) -> int:        # comb(n, k), perm(n, k): at most about n log2 n bits
    n = args[0] if args else 0
    return _integer(n * max(1.0, math.log2(max(n, 2)))) if isinstance(n, int) else LIMITS["elements"] + 1


def _int_power(args, kwargs) -> int:
    if len(args) >= 3:   # pow(a, b, m): bounded by m
        return 1
    return _integer(power_bits(*args[:2])) if len(args) >= 2 else 1


def _product(args, kwargs) -> int:   # math.prod / sum of many integers
    items = args[0] if args else ()
    if isinstance(items, range):
        return length(items)
    if isinstance(items, (tuple, list)):
        return max(_integer(sum(bits(v) for v in items)), length(items))
    return _result_of_iterable(args, kwargs)


# Builtins that run on literal data, each with the estimate of its work (items touched or made).
PURE_BUILTINS = {
    abs: None, all: _result_of_iterable, any: _result_of_iterable, ascii: _result_of_iterable,
    bin: None, bool: None, callable: None, chr: None, complex: None, dict: _result_of_iterable,
    divmod: None, enumerate: _result_of_iterable, float: None, format: None, frozenset: _result_of_iterable,
    hash: _result_of_iterable, hex: None, int: None, isinstance: None, issubclass: None, len: None,
    list: _result_of_iterable, max: _result_of_iterable, min: _result_of_iterable, oct: None, ord: None,
    pow: _int_power, range: None, repr: _result_of_iterable, reversed: _result_of_iterable,
    round: None, set: _result_of_iterable, slice: None, sorted: _result_of_iterable, str: _result_of_iterable,
    sum: _product, tuple: _result_of_iterable, type: None, zip: _result_of_iterable,
}

# Builtins that read only an object's type or length: they run on any compile-time value (a method
# of the file's own classes is a trap that never runs its code: static_module.py).
INTROSPECTION = frozenset({isinstance, issubclass, callable, len, type})

# Every public function of math is pure; these may make huge integers and get an estimate.
PURE_MATH = {getattr(math, name): None for name in dir(math)
             if not name.startswith("_") and callable(getattr(math, name))}
PURE_MATH.update({math.factorial: _factorial, math.comb: _comb, math.perm: _comb, math.prod: _product})

# NumPy functions with no effect but their result, computed on literal data and small arrays; the
# estimate of the result's size defaults to the broadcast of the array arguments.
PURE_NUMPY = {getattr(np, name): None for name in (
    "abs", "absolute", "add", "all", "allclose", "amax", "amin", "any", "arccos", "arcsin", "arctan", "arctan2",
    "argmax", "argmin", "around", "array_equal", "asarray", "astype", "broadcast_shapes", "can_cast", "ceil",
    "clip", "cos", "cosh", "cumprod", "cumsum", "divide", "dtype", "equal", "exp", "expm1", "finfo", "floor",
    "floor_divide", "greater", "greater_equal", "iinfo", "isclose", "isfinite", "isinf", "isnan", "isscalar",
    "less", "less_equal", "log", "log10", "log1p", "log2", "max", "maximum", "mean", "min", "minimum", "mod",
    "multiply", "ndim", "negative", "not_equal", "power", "prod", "promote_types", "ravel", "reciprocal",
    "remainder", "reshape", "result_type", "round", "shape", "sign", "sin", "sinh", "size", "sqrt", "square",
    "squeeze", "std", "subtract", "sum", "tan", "tanh", "transpose", "true_divide", "trunc", "var",
    "float_power", "fmax", "fmin", "hypot", "logical_and", "logical_not", "logical_or", "logical_xor",
    "issubdtype", "count_nonzero", "nonzero", "flip", "expand_dims", "swapaxes", "moveaxis", "atleast_1d",
    "atleast_2d", "concatenate", "stack", "hstack", "vstack", "array", "ascontiguousarray", "copy",
) if hasattr(np, name)}

# NumPy constructors (the weights an `__init__` makes): the estimate reads the shape argument.
NUMPY_MAKERS = {
    np.zeros: _shape_arg(0, "shape"), np.ones: _shape_arg(0, "shape"), np.empty: _shape_arg(0, "shape"),
    np.full: _shape_arg(0, "shape"), np.zeros_like: _like, np.ones_like: _like, np.empty_like: _like,
    np.full_like: _like, np.eye: _eye, np.identity: _shape_arg(0, "n"), np.arange: _arange_size,
    np.linspace: _linspace, np.tile: lambda args, kwargs: broadcast_size(args[:1]) * _shape_size(
        args[1] if len(args) > 1 else kwargs.get("reps")), np.broadcast_to: _shape_arg(1, "shape"),
    np.random.randn: _dims, np.random.rand: _dims, np.random.random: _shape_arg(0, "size"),
    np.random.random_sample: _shape_arg(0, "size"), np.random.standard_normal: _shape_arg(0, "size"),
    np.random.normal: _shape_arg(2, "size"), np.random.uniform: _shape_arg(2, "size"),
    np.random.randint: _shape_arg(2, "size"),
}

# Calls whose only effect is output or the random generator's state, which nothing the static view
# computes depends on (weights are never compile-time values): in module code or an `__init__` they
# are skipped (not made; their result is None), so a Cell that prints or seeds is still checked.
SKIPPED_EFFECTS = frozenset({print, np.random.seed})

# Methods of literal data (`"relu".upper()`, `(1, 2).index(2)`, `arr.astype(np.float32)`) run; these
# make results bigger than their arguments and get an estimate, and these never run at all.
_WIDTH_METHODS = {"center", "ljust", "rjust", "zfill", "expandtabs"}
REFUSED_METHODS = {"tofile", "dump", "dumps", "__reduce__", "__reduce_ex__", "__setstate__", "setflags",
                   "resize", "byteswap", "newbyteorder", "repeat", "tobytes", "fromhex"}


def _method_size(fn, owner, args, kwargs) -> int:
    name = getattr(fn, "__name__", "")
    if name in _WIDTH_METHODS:
        widths = [a for a in list(args) + list(kwargs.values()) if isinstance(a, int)]
        return max(widths, default=0) * (8 if name == "expandtabs" else 1) + length(owner)
    if name in ("format", "format_map") or (name == "__mod__" and isinstance(owner, (str, bytes))):
        if wide_format(owner) or any(isinstance(a, str) and wide_format(a) for a in args):
            return LIMITS["items"] + 1
    if name == "replace" and len(args) >= 2:
        return length(owner) * max(1, length(args[1]))
    if name == "join" and args:
        return length(owner) * length(args[0]) + sum(length(a) for a in args[0]) if \
            isinstance(args[0], (tuple, list)) else _result_of_iterable(args, kwargs)
    if isinstance(owner, np.ndarray):
        return broadcast_size([owner] + [a for a in args if isinstance(a, np.ndarray)])
    return length(owner) + _result_of_iterable(args, kwargs)


def _table_entry(fn):
    """(found, estimate) for `fn` in the tables."""
    for table in (PURE_BUILTINS, PURE_MATH, NUMPY_MAKERS, PURE_NUMPY):
        try:
            if fn in table:
                return True, table[fn]
        except TypeError:   # unhashable
            return False, None
    return False, None


def _wide_element(value) -> bool:
    """A NumPy argument whose elements would be big: a string of more than 64 characters, or a dtype
    (a name, a tuple spec, a type) of more than 64 bytes or of void/object kind (`np.full(n, "a" * 10**6)`,
    `np.zeros(n, ("V", 10**9))`)."""
    if isinstance(value, (str, bytes)) and len(value) > 64:
        return True
    if isinstance(value, (str, tuple, type, np.dtype)):
        try:
            dtype = np.dtype(value)
        except Exception:   # noqa: BLE001 - not a dtype: a shape, a name
            return False
        return dtype.kind in "OV" or dtype.itemsize > 64
    return False


def is_numpy_scalar_type(fn) -> bool:
    return isinstance(fn, type) and issubclass(fn, np.generic) and fn.__module__ == "numpy"


def refusal(fn, args, kwargs, budget: Optional[Budget] = None) -> Optional[str]:
    """None when `fn(*args, **kwargs)` may run while a file is read, else why not (a phrase).

    It may when `fn` is in a table (or a method of literal data, or a NumPy scalar type) and every
    argument is literal data of bounded size, and the estimated size of the result is within
    `LIMITS`. Nothing is called to decide.
    """
    owner = getattr(fn, "__self__", None)
    found, table_estimate = _table_entry(fn)
    if found or is_numpy_scalar_type(fn):
        if fn in INTROSPECTION and (fn is not type or len(args) == 1):
            return None   # reads the type or length only: a method of the file's classes is a trap
        estimate = (lambda f, o, a, k: table_estimate(a, k)) if table_estimate is not None else \
            (lambda f, o, a, k: broadcast_size(list(a) + list(k.values())))
    elif isinstance(fn, (types.BuiltinMethodType, types.MethodWrapperType)) and owner is not None and \
            not isinstance(owner, (types.ModuleType, type)):
        name = getattr(fn, "__name__", "")
        if type(owner) in (list, dict, set) and name in CONTAINER_METHODS and is_inert(owner) and \
                all(is_inert(v) for v in list(args) + list(kwargs.values())):
            return budget.spend(length(owner)) if budget is not None else None
        if name in REFUSED_METHODS or size_of(owner) is None:
            return "it is a method of a value graphjit does not compute on"
        estimate = _method_size
    else:
        return "graphjit computes only pure functions of literal data while it reads a file"
    total = 0
    for value in list(args) + list(kwargs.values()):
        size = size_of(value)
        if size is None:
            return "an argument is not literal data"
        total += size
    if total > LIMITS["elements"]:
        return f"its arguments are too big ({total:,} items)"
    if (found and fn not in PURE_BUILTINS and fn not in PURE_MATH or is_numpy_scalar_type(fn)) and \
            any(_wide_element(v) for v in list(args) + list(kwargs.values())):
        return "an element it would make is too big (a long string or a large dtype)"
    if fn is format and len(args) > 1 and wide_format(args[1]):
        return "its field width is too big to compute without running the file"
    size = estimate(fn, owner, args, kwargs)
    if size > LIMITS["elements"]:
        return f"its result would be too big to compute without running the file (about {size:,} items, limit " \
               f"{LIMITS['elements']:,})"
    return budget.spend(size + total) if budget is not None else None


# --- graphjit's own library ----------------------------------------------------------------------

_LIBRARY_MODULES = ("graphjit.nn", "graphjit.ops", "graphjit.common", "graphjit.tensor", "graphjit.parameter",
                    "graphjit.context", "graphjit.jit_options", "graphjit.gradients")


def is_library_class(cls) -> bool:
    """A class of graphjit's library (a layer, a Parameter, an initializer): built for real."""
    module = getattr(cls, "__module__", "") or ""
    return isinstance(cls, type) and any(module == m or module.startswith(m + ".") for m in _LIBRARY_MODULES)


def is_library_function(fn) -> bool:
    """A plain function of graphjit's library that an op of the table names (`Tensor`'s `tensor_data`)."""
    module = getattr(fn, "__module__", "") or ""
    return isinstance(fn, types.FunctionType) and any(module == m or module.startswith(m + ".")
                                                       for m in _LIBRARY_MODULES)


def is_library_method(fn) -> bool:
    """A bound method of graphjit's library (`self.trainable_params()`, `Cell.__init__`)."""
    func = getattr(fn, "__func__", None)
    module = getattr(func, "__module__", "") or ""
    return isinstance(fn, types.MethodType) and any(module == m or module.startswith(m + ".")
                                                     for m in _LIBRARY_MODULES)


@contextlib.contextmanager
def building_library_objects(span=None, budget: Optional[Budget] = None):
    """Around a call of graphjit's library code while a file is read: each weight a layer makes is
    checked before it is allocated (common/init_values.py): at most `LIMITS['elements']`, and spent from the file's
    budget; past either the value is unknown."""
    def check(size: int) -> Optional[str]:
        if size > LIMITS["elements"]:
            return f"a weight of {size:,} elements is more than the {LIMITS['elements']:,} graphjit builds " \
                   "while it reads a file"
        return budget.spend(size) if budget is not None else None

    token = READING_LIMIT.set(check)
    try:
        yield
    except WeightTooBig as e:
        raise not_computed("this layer", str(e), span) from None
    finally:
        READING_LIMIT.reset(token)


def describe_callable(fn) -> str:
    """`os.system`, `numpy.save`, `open`: how a diagnostic names a callable."""
    if getattr(builtins, getattr(fn, "__name__", ""), None) is fn:
        return fn.__name__
    module = getattr(fn, "__module__", None)
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    return f"{module}.{name}" if module and module != "builtins" else name


# --- what the static view could not compute ---------------------------------------------------------

class NotComputed(UnknownValueError):
    """A value only running the file would give: a call graphjit does not make, or code of the file."""


def not_computed(what: str, why: str, span=None) -> NotComputed:
    """`cannot know <what> without running the file: <why>`."""
    return NotComputed(f"cannot know {what} without running the file: {why}", span,
                       hint="build the value from literals and NumPy, or pass it as an argument")


# --- what a class of the file may be built from ----------------------------------------------------
# Builtins a `class` line or a decorator may name (resolved without the file's code).
CLASS_LINE_BUILTINS = frozenset({"object", "type", "int", "float", "str", "tuple", "list", "dict", "Exception",
                            "ValueError", "TypeError", "RuntimeError", "KeyError", "IndexError",
                            "NotImplementedError", "ArithmeticError", "property", "staticmethod", "classmethod"})
# Decorators applied while a file is read: builtins that only wrap (the getter stays a trap).
WRAPPERS = (property, staticmethod, classmethod)
# Methods Python calls on its own when an object is collected: never part of the static view.
DROPPED_METHODS = frozenset({"__del__"})
# Bases a class of the file may have besides its own classes and graphjit's library classes.
PLAIN_BASES = frozenset({object, int, float, str, tuple, list, dict, Exception, ValueError, TypeError,
                         RuntimeError, KeyError, IndexError, NotImplementedError, ArithmeticError})
