"""What a Numba kernel can spell: the column of the op table that says which ops a loop sent to Numba
may contain (graph/analysis/kernel_plan.py reads it; tests/backends/test_numba_ops.py compiles every
row with Numba).

The op table (graph/ops.py) says how each op is written in NumPy; this table adds, for the ops the
kernels use, whether Numba's nopython mode compiles that spelling with the same result: on
scalars (Python and NumPy numbers) and, for some, on float64 arrays (slices of a loop body that
stays a loop). An op not listed keeps its loop in Python.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KernelOp:
    """How one op may appear in a Numba kernel.

    `scalars`: on int/float/bool scalars (Python or NumPy). `arrays`: on float64 arrays too (the
    result is an array or, for `dot`/`matmul` of vectors, a float64). `ints`: on integers (an op
    that wraps or raises differently on Python ints is limited by the integer bounds of
    kernel_plan.py, which names the ops it bounds). `complex`: on complex128 values too (NumPy
    scalars and arrays; the same IEEE arithmetic in Numba). `note`: why a limit exists.
    """

    scalars: bool = True
    arrays: bool = False
    ints: bool = True
    complex: bool = False
    note: str = ""


_ARITH = KernelOp(arrays=True, complex=True)
_CMP = KernelOp()
_FLOAT_UFUNC = KernelOp(arrays=True, ints=False, note="NumPy ufunc on a float64 scalar or array")

KERNEL_OPS: dict[str, KernelOp] = {
    # arithmetic: integer results are bounded (Python ints) or wrapped to their NumPy dtype
    "add": _ARITH, "sub": _ARITH, "mul": _ARITH, "neg": _ARITH, "pos": _ARITH,
    "truediv": KernelOp(arrays=True, note="Python numbers raise ZeroDivisionError, NumPy ones give inf: "
                                          "the kernel's error model follows the kind of its divisions; "
                                          "not complex (NumPy and Numba differ on division by zero)"),
    "floordiv": KernelOp(note="integers only, by a positive constant"),
    "mod": KernelOp(note="integers only, by a positive constant"),
    "pow": KernelOp(note="float ** 2 only"),
    "lshift": KernelOp(note="by a constant in [0, 63)"),
    "rshift": KernelOp(note="by a constant in [0, 63)"),
    "bitand": KernelOp(), "bitor": KernelOp(), "bitxor": KernelOp(), "invert": KernelOp(),
    "eq": _CMP, "ne": _CMP, "lt": _CMP, "le": _CMP, "gt": _CMP, "ge": _CMP, "not": _CMP,
    "py_min": KernelOp(note="both operands of one type"), "py_max": KernelOp(note="both operands of one type"),
    "py_abs": KernelOp(), "float": KernelOp(), "bool": KernelOp(),
    "abs": _FLOAT_UFUNC, "absolute": _FLOAT_UFUNC, "fabs": _FLOAT_UFUNC,
    "sqrt": _FLOAT_UFUNC, "exp": _FLOAT_UFUNC, "log": _FLOAT_UFUNC, "sin": _FLOAT_UFUNC, "cos": _FLOAT_UFUNC,
    "tanh": _FLOAT_UFUNC, "arctan": _FLOAT_UFUNC, "floor": _FLOAT_UFUNC, "ceil": _FLOAT_UFUNC,
    "maximum": _FLOAT_UFUNC, "minimum": _FLOAT_UFUNC,
    "dot": KernelOp(scalars=False, arrays=True, ints=False, complex=True,
                    note="1-D or 2-D float64 or complex128 operands of one dtype (BLAS)"),
    "matmul": KernelOp(scalars=False, arrays=True, ints=False, complex=True,
                       note="1-D or 2-D float64 or complex128 operands of one dtype (BLAS)"),
    "flip": KernelOp(scalars=False, arrays=True, ints=False, note="a float64 array, every axis"),
    # structure
    "getitem": KernelOp(arrays=True, complex=True, note="integer indices (bounds-checked) and slices"),
    "setitem": KernelOp(arrays=True, complex=True, note="integer indices (bounds-checked) and slices"),
    "inplace": KernelOp(arrays=True, complex=True, note="the `op` attribute must be a kernel op"),
    "dim": KernelOp(), "len": KernelOp(),
    "const": KernelOp(), "note": KernelOp(), "tuple_get": KernelOp(), "if": KernelOp(), "for_range": KernelOp(),
}

# `call` nodes (`fn` attribute) whose function cannot raise on any float64 argument, so Numba's
# versions (which never raise) agree with `math`.
KERNEL_CALLS = frozenset({"math.tanh", "math.atan", "math.fabs", "math.atan2", "math.copysign"})


def kernel_op(name: str):
    """The KernelOp of op `name`, or None when a kernel cannot contain it."""
    return KERNEL_OPS.get(name)
