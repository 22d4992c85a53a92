"""The backend column beside the op table: how each op is spelled in the array API standard, and
what other array libraries (Dask, array_api_strict, CuPy) cannot do as NumPy does.

Code compiled for non-NumPy arrays (backends/emit_xp.py, backends/xp_interpreter.py) calls the
namespace `xp` of its inputs. Per op, `SPELLINGS` says how:

- `Spelling("concat")`: the standard's function (`np.concatenate(seq, axis=0)` → `xp.concat(seq, axis=0)`);
  `keywords` renames NumPy keywords (`ddof` → `correction`), `positional` names NumPy's positional
  operands after the first that the standard takes by keyword (`np.clip(a, lo, hi)` → `xp.clip(a, min=lo, max=hi)`);
  `fix` rewrites arguments from the operand types (`np.transpose(a)` → `xp.permute_dims(a, (1, 0))`).
- `Spelling("nansum", standard=False)`: not in the standard: NumPy's name, used when the namespace
  has it (Dask and CuPy have most of NumPy's); otherwise the op cannot run there.
- `SAME`: written as NumPy code writes it (operators, indexing, `.shape`): the standard has them.
- absent: the op cannot run on a non-NumPy namespace (`NUMPY_ONLY` says why, for the docs).

`BACKENDS` holds the facts about each library: lazy or not (a lazy array is never turned into a
Python value: no `bool(x)`, `float(x)`, `if`/`while` on its values), and what `a[i] = v` does.
`NUMPY_ONLY_PASSES` names the optimizations that are turned off for other namespaces.
docs/array-api.md is generated from these tables (`python docs/gen_array_api.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

from .types import ArrayType, ScalarType


class BackendRefusal(Exception):
    """An op (or a form of it) the target namespace cannot run; the message names the op and why."""


@dataclass(frozen=True)
class Lit:
    """A literal argument a spelling adds (an axes tuple): the emitter prints it, the interpreter uses it."""

    value: Any


@dataclass(frozen=True)
class Tup:
    """A tuple of the caller's values a spelling builds (`x.reshape(n, -1)` → `xp.reshape(x, (n, -1))`)."""

    items: tuple


@dataclass(frozen=True)
class Call:
    """`xp.<name>(*args, **kwargs)`: args are the caller's values (emitted text or run-time values) or `Lit`s."""

    name: str
    args: tuple
    kwargs: dict


@dataclass(frozen=True)
class Spelling:
    """How one op is written against a namespace `xp` (see the module docstring)."""

    name: str
    standard: bool = True
    keywords: tuple = ()            # (NumPy keyword, standard keyword)
    positional: tuple = ()          # standard keywords for NumPy's positional operands 1, 2, ... ("": stays positional)
    fix: Optional[Callable] = field(default=None, repr=False)   # fix(node, args, kwargs) -> (name, args, kwargs)
    note: str = ""

    def call(self, node, args: list, kwargs: dict) -> Call:
        """The call computing `node` from NumPy-ordered `args` and `kwargs` (attrs included)."""
        args, kwargs = list(args), dict(kwargs)
        renames = dict(self.keywords)
        kwargs = {renames.get(k, k): v for k, v in kwargs.items()}
        if self.positional:
            extra = args[1:1 + len(self.positional)]
            kept = [v for k, v in zip(self.positional, extra) if not k]
            kwargs.update((k, v) for k, v in zip(self.positional, extra) if k)
            args = args[:1] + kept + args[1 + len(self.positional):]
        name = self.name
        opdef = getattr(node, "opdef", None)
        t = getattr(node, "type", None)
        if opdef is not None and opdef.creates and not name.endswith("_like") and "dtype" not in kwargs \
                and isinstance(t, ArrayType) and t.dtype is not None:
            kwargs["dtype"] = Lit(np.dtype(t.dtype))   # the dtype NumPy gives, not the library's default
        if self.fix is not None:
            name, args, kwargs = self.fix(node, args, kwargs)
        return Call(name, tuple(args), kwargs)


SAME = Spelling("")   # NumPy's own spelling: an operator, an index, an attribute


def rank(node, k: int = 0) -> Optional[int]:
    t = node.operands[k].type if k < len(node.operands) else None
    return t.rank if isinstance(t, ArrayType) else None


def _needs_rank(node, what: str) -> int:
    r = rank(node)
    if r is None:
        raise BackendRefusal(f"{what} needs the rank of its operand, which is not known here")
    return r


def _transpose(node, args, kwargs):
    if len(args) < 2 and "axes" not in kwargs:
        r = _needs_rank(node, "np.transpose without axes")
        args = [args[0], Lit(tuple(range(r))[::-1])]
    return "permute_dims", args, kwargs


def _T(node, args, kwargs):
    r = _needs_rank(node, "a.T")
    return "permute_dims", [args[0], Lit(tuple(range(r))[::-1])], kwargs


def _ravel(node, args, kwargs):
    return "reshape", [args[0], Lit((-1,))], kwargs


def _reshape(node, args, kwargs):
    if len(args) > 2:   # x.reshape(n, -1): the standard takes one shape tuple
        return "reshape", [args[0], Tup(tuple(args[1:]))], kwargs
    if len(args) == 2 and isinstance(node.operands[1].type, ScalarType):   # x.reshape(n): a tuple too
        return "reshape", [args[0], Tup((args[1],))], kwargs
    return "reshape", args, kwargs


def _copy(node, args, kwargs):
    return "asarray", args, {**kwargs, "copy": Lit(True)}


def _flatten(node, args, kwargs):
    return "reshape", [args[0], Lit((-1,))], {"copy": Lit(True)}


def _squeeze(node, args, kwargs):
    if len(args) < 2 and "axis" not in kwargs:
        t = node.operands[0].type
        if not isinstance(t, ArrayType) or t.shape is None or None in t.shape:
            raise BackendRefusal("np.squeeze without axis needs the operand's shape, which is not known here")
        kwargs = {**kwargs, "axis": Lit(tuple(k for k, d in enumerate(t.shape) if d == 1))}
    return "squeeze", args, kwargs


def _dot(node, args, kwargs):
    ranks = (rank(node, 0), rank(node, 1))
    if None in ranks or not all(1 <= r <= 2 for r in ranks):
        raise BackendRefusal("np.dot is spelled `matmul` only for 1-d and 2-d operands of known rank")
    return "matmul", args, kwargs


def _swapaxes(node, args, kwargs):
    r = _needs_rank(node, "np.swapaxes")
    a, b = (x.value if isinstance(x, Lit) else x for x in args[1:3]) if len(args) >= 3 else (None, None)
    if not isinstance(a, int) or not isinstance(b, int):
        raise BackendRefusal("np.swapaxes needs its axes as compile-time integers")
    axes = list(range(r))
    axes[a], axes[b] = axes[b], axes[a]
    return "permute_dims", [args[0], Lit(tuple(axes))], kwargs


def _concat(node, args, kwargs):
    if "dtype" in kwargs:
        raise BackendRefusal("`dtype=` of np.concatenate is not in the standard's concat: cast the operands first")
    return "concat", args, kwargs


def _cumulative(name):
    def fix(node, args, kwargs):
        if "axis" not in kwargs and len(args) < 2 and rank(node) != 1:
            raise BackendRefusal(f"np.{name[11:]}sum without axis flattens: give an axis (the standard's "
                                 f"{name} needs one for more than one dimension)")
        return name, args, kwargs
    return fix


def _astype(node, args, kwargs):
    dtype = kwargs.pop("dtype", None)
    return "astype", [args[0], dtype if dtype is not None else args[1]], kwargs


SPELLINGS: dict[str, Spelling] = {}

# operators, indexing, attributes: the standard has NumPy's spelling
for _op in ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift", "bitand", "bitxor",
            "bitor", "eq", "ne", "lt", "le", "gt", "ge", "matmul", "neg", "pos", "invert", "not", "const", "arg",
            "param", "tuple", "list", "tuple_get", "getitem", "setitem", "shape", "dim", "ndim", "size",
            "stop_gradient", "inplace", "raise", "assert", "setattr", "refresh", "getattr", "load_global",
            "store_global", "pycall", "dict", "format", "fallback", "isinstance", "note", "if", "for_range", "while",
            "len", "py_abs", "float", "int", "bool", "item", "tolist", "py_min", "py_max", "py_round", "append"]:
    SPELLINGS[_op] = SAME

# elementwise functions: the standard's name where NumPy's differs
_RENAMED = {"absolute": "abs", "fabs": "abs", "arcsin": "asin", "arccos": "acos", "arctan": "atan",
            "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh", "arctan2": "atan2", "power": "pow",
            "np_mod": "remainder", "true_divide": "divide", "rint": "round"}
for _name in ["abs", "exp", "expm1", "log", "log2", "log10", "log1p", "sqrt", "square", "sin", "cos", "tan",
              "sinh", "cosh", "tanh", "sign", "floor", "ceil", "trunc", "negative", "isnan", "isinf", "isfinite",
              "logical_not", "maximum", "minimum", "hypot", "logical_and", "logical_or", "logical_xor", "np_add",
              "subtract", "multiply", "divide", "floor_divide", "equal", "not_equal", "less", "less_equal",
              "greater", "greater_equal", "copysign", "where", *_RENAMED]:
    SPELLINGS[_name] = Spelling(_RENAMED.get(_name, _name[3:] if _name.startswith("np_") else _name))
SPELLINGS["select"] = Spelling("where", note="the tile pass's blend is NumPy-only; `where` computes the same")
SPELLINGS["clip"] = Spelling("clip", positional=("min", "max"))
for _name in ["exp2", "cbrt", "reciprocal", "deg2rad", "rad2deg", "fmax", "fmin", "float_power", "fmod",
              "heaviside"]:
    SPELLINGS[_name] = Spelling(_name, standard=False)

# reductions: axis and keepdims as in NumPy
for _name in ["sum", "mean", "max", "min", "prod", "any", "all", "argmax", "argmin"]:
    SPELLINGS[_name] = Spelling(_name)
SPELLINGS["amax"], SPELLINGS["amin"] = Spelling("max"), Spelling("min")
SPELLINGS["std"] = Spelling("std", keywords=(("ddof", "correction"),))
SPELLINGS["var"] = Spelling("var", keywords=(("ddof", "correction"),))
for _name in ["nansum", "nanmean", "nanmax", "nanmin", "median"]:
    SPELLINGS[_name] = Spelling(_name, standard=False)

# linear algebra
SPELLINGS["dot"] = Spelling("matmul", fix=_dot, note="1-d and 2-d operands")
SPELLINGS["tensordot"] = Spelling("tensordot", positional=("axes",))
SPELLINGS["einsum"] = Spelling("einsum", standard=False)
SPELLINGS["outer"] = Spelling("outer", standard=False)

# shapes and layout
SPELLINGS["reshape"] = Spelling("reshape", fix=_reshape)
SPELLINGS["T"] = Spelling("permute_dims", fix=_T, note="axes reversed")
SPELLINGS["transpose"] = Spelling("permute_dims", fix=_transpose)
SPELLINGS["astype"] = Spelling("astype", fix=_astype)
SPELLINGS["copy"] = Spelling("asarray", fix=_copy, note="`copy=True`")
SPELLINGS["copy_flat"] = Spelling("reshape", fix=_flatten, note="`(-1,)`, `copy=True`")
SPELLINGS["ravel"] = Spelling("reshape", fix=_ravel, note="`(-1,)`")
SPELLINGS["squeeze"] = Spelling("squeeze", fix=_squeeze, note="axis from the shape when not given")
SPELLINGS["swapaxes"] = Spelling("permute_dims", fix=_swapaxes)
SPELLINGS["concatenate"] = Spelling("concat", positional=("axis",), fix=_concat)
SPELLINGS["cumsum"] = Spelling("cumulative_sum", positional=("axis",), fix=_cumulative("cumulative_sum"),
                                note="axis needed above 1-d")
SPELLINGS["cumprod"] = Spelling("cumulative_prod", positional=("axis",), fix=_cumulative("cumulative_prod"),
                                 note="axis needed above 1-d")
SPELLINGS["ascontiguousarray"] = Spelling("asarray")
# the standard takes these by keyword where NumPy also takes them by position
_KEYWORDS = {"expand_dims": ("axis",), "stack": ("axis",), "flip": ("axis",), "sort": ("axis",),
             "argsort": ("axis",), "roll": ("shift", "axis"), "repeat": ("", "axis"), "take": ("", "axis"),
             "diff": ("n", "axis"), "tensordot": ("axes",), "searchsorted": ("", "side", "sorter")}
for _name in ["expand_dims", "stack", "broadcast_to", "moveaxis", "flip", "roll", "tile", "repeat", "diff", "sort",
              "argsort", "take", "count_nonzero", "searchsorted"]:
    SPELLINGS[_name] = Spelling(_name, positional=_KEYWORDS.get(_name, ()))
for _name in ["hstack", "vstack", "pad", "diag", "triu", "tril", "atleast_1d", "atleast_2d", "correlate"]:
    SPELLINGS[_name] = Spelling(_name, standard=False)
SPELLINGS["sliding_window_view"] = Spelling("lib.stride_tricks.sliding_window_view", standard=False,
                                            note="Dask has it (windows as new chunks, not views)")

# creation: the dtype is always given (the graph knows it), so no library's default decides it
_CREATION_KEYWORDS = {"zeros": ("dtype",), "ones": ("dtype",), "empty": ("dtype",), "zeros_like": ("dtype",),
                      "ones_like": ("dtype",), "empty_like": ("dtype",), "full": ("", "dtype"),
                      "full_like": ("", "dtype"), "asarray": ("dtype",), "eye": ("", "k", "dtype")}
for _name in ["zeros", "ones", "empty", "zeros_like", "ones_like", "empty_like", "full", "full_like", "arange",
              "linspace", "eye", "asarray"]:
    SPELLINGS[_name] = Spelling(_name, positional=_CREATION_KEYWORDS.get(_name, ()))
SPELLINGS["array"] = Spelling("asarray", fix=_copy, note="`copy=True`")

# Ops with no spelling here, and why (the docs list them; the emitter's refusal names the reason).
NUMPY_ONLY = {
    "add_at": "`np.add.at` writes in place with repeated indices",
    "copyto": "writes into an existing buffer", "put": "writes into an existing buffer",
    "place": "writes into an existing buffer", "putmask": "writes into an existing buffer",
    "tensor": "graphjit.Tensor is a NumPy array", "as_ndarray": "graphjit.Tensor is a NumPy array",
    "as_tensor": "graphjit.Tensor is a NumPy array",
    "sum_to": "autodiff helper", "add_reduceat": "autodiff helper", "call": "a function outside the op table "
    "(`math.exp`, `np.linalg.norm`) called on an array: it exists only for NumPy arrays and Python numbers",
    "gradient": "never reaches a backend", "gradient_boundary": "never reaches a backend",
    "replayed": "never reaches a backend",
    "scratch": "a NumPy buffer kept between calls, written with `out=` (the pass is NumPy's only)",
    **{name: "a step of `np.histogram`, whose counts need `np.bincount`: not in the array API standard"
       for name in ("hist_range", "hist_edges", "hist_index")},
    "hist_counts": "`np.bincount` is not in the array API standard (and NumPy's block-by-block sums are NumPy's own)",
}

# Ops that turn an array into a Python value: on a lazy array each is a hidden `.compute()`.
TO_PYTHON = frozenset({"float", "int", "bool", "item", "tolist", "not", "py_min", "py_max", "py_round"})


@dataclass(frozen=True)
class Backend:
    """What one array library does differently from NumPy."""

    name: str
    namespace: str                  # the module array_api_compat.array_namespace returns
    lazy: bool                      # arrays are task graphs: turning one into a Python value computes it
    setitem: str                    # what `a[index] = v` does there
    runtime_branches: str           # what `if`/`while` on an array value does
    views: bool = True              # `x[i]` may share memory with `x`: writing one writes the other
    inplace_operators: bool = True  # `a += b` writes `a` (else it makes a new array: written `a[...] = a + b`)
    mask_values: bool = True        # `a[mask] = b[mask]` works (Dask cannot size a masked selection)
    devices: bool = True            # arrays live on devices: new arrays (`xp.zeros`) go on the inputs' one
    flat_gathers: bool = False      # integer-array indexes of one dimension only: `v[idx]` (1-d `v`) by an
                                    # n-d `idx` is gathered flat, then reshaped to `idx.shape`


BACKENDS = [
    Backend("dask", "array_api_compat.dask.array", True,
            "kept: Dask updates the array's task graph for slices, integers and boolean masks, and raises "
            "NotImplementedError (pointed at your line) for other indexes; `a op= b` is written `a[...] = a op b` "
            "(Dask has no in-place operators) so every name of the array sees it, as with NumPy; a write into "
            "a view (`x[0][1] = v`) and a masked selection as the value (`a[m] = b[m]`) are diagnosed",
            "diagnosed at compile time: the condition would compute the whole graph behind it",
            views=False, inplace_operators=False, mask_values=False, devices=False, flat_gathers=True),
    Backend("array_api_strict", "array_api_strict", False,
            "kept: arrays are mutable (integer-array indexes are not in the standard and raise)",
            "kept: the condition is a 0-d array, `bool()` of it is a value already computed"),
    Backend("cupy", "array_api_compat.cupy", False, "kept: arrays are mutable, as NumPy's",
            "kept: `bool()` copies one value from the device"),
]
GENERIC = Backend("array API", "", False, "kept: the library's own rules", "kept: `bool()` of the condition")


def backend_for(namespace: str) -> Backend:
    """The facts for a namespace module name (the generic ones for a library not listed)."""
    for b in BACKENDS:
        if b.namespace == namespace:
            return b
    return Backend(namespace.split(".")[-1] if not namespace.startswith("array_api_compat.")
                   else namespace.split(".")[2], namespace, GENERIC.lazy, GENERIC.setitem, GENERIC.runtime_branches)


# Passes whose code is NumPy's alone: turned off when the code targets another namespace.
NUMPY_ONLY_PASSES = {
    "kernels": "Numba compiles loops over NumPy memory",
    "scalarize": "reads elements as Python floats (a compute per element on a lazy array)",
    "tile": "slices big chains into cache-sized NumPy tiles",
    "memory_plan": "writes results into dead buffers with `out=`",
    "destination": "computes a value in the NumPy view it is copied into, with `out=`",
    "scratch": "computes temporaries into NumPy buffers kept between calls, with `out=`",
}


def spelling_of(name: str) -> Optional[Spelling]:
    """The op's spelling; None when it cannot run on a non-NumPy namespace."""
    return SPELLINGS.get(name)
