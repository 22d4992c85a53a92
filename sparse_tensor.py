"""`CSRTensor` and `COOTensor`: MindSpore's sparse tensors, holding their index and value Tensors.

A `CSRTensor(indptr, indices, values, shape)` keeps, row by row, the column (`indices`) and value of
each stored element, `indptr[r]:indptr[r + 1]` being row r's; a `COOTensor(indices, values, shape)`
keeps the (row, column) of each (`indices`, shape (N, 2)). Their arithmetic is MindSpore's:

| expression | result |
| --- | --- |
| `-csr`, `csr.abs()`, `csr.astype(t)` | CSRTensor (same pattern) |
| `csr + csr`, `csr - csr` (same shape) | CSRTensor (the union of the patterns) |
| `csr * dense`, `dense * csr`, `csr / dense` (dense broadcast to csr's shape) | CSRTensor (same pattern) |
| `csr * s`, `csr / s` (s a number or one-element Tensor; not `s * csr`) | Tensor: the stored values times s, as MindSpore gives |
| `-coo`, `coo.abs()`, `coo.astype(t)` | COOTensor |
| `coo + coo`, `coo - coo` (same shape) | COOTensor (indices in row-major order, equal indices summed) |
| `coo + dense`, `dense + coo`, `coo - dense`, `dense - coo` (same shape) | Tensor |
| `coo * dense`, `dense * coo`, `coo / dense` (same shape) | COOTensor (same pattern) |

Anything else raises TypeError or ValueError (MindSpore has no `coo * number`: multiply the values).
They are immutable values; inside `jit`, a sparse argument's arrays are read at every call and its
methods compile like user code (docs/tensor.md).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from .dtype import name as dtype_name
from .tensor import Tensor, as_tensor

__all__ = ["CSRTensor", "COOTensor"]

INDEX_DTYPES = (np.int16, np.int32, np.int64)


class CSRTensor:
    """`CSRTensor(indptr=None, indices=None, values=None, shape=None, csr_tensor=None)`: a sparse tensor in
    compressed sparse row form (or a copy of `csr_tensor`).

    `indptr` (shape[0] + 1 integers) says where each row's elements start in `indices` (their columns)
    and `values`; `values.shape[1:]` must be `shape[2:]`. A column may appear once in a row.
    """

    __slots__ = ("_indptr", "_indices", "_values", "_shape")
    __array_ufunc__ = None    # `dense * csr`: NumPy leaves it to CSRTensor.__rmul__

    def __init__(self, indptr=None, indices=None, values=None, shape=None, csr_tensor=None):
        if csr_tensor is not None:
            if not isinstance(csr_tensor, CSRTensor):
                raise TypeError(f"CSRTensor: csr_tensor must be a CSRTensor, not {type(csr_tensor).__name__}")
            if not (indptr is None and indices is None and values is None and shape is None):
                raise TypeError("CSRTensor: give csr_tensor alone, or indptr, indices, values and shape")
            indptr, indices, values, shape = csr_tensor.to_tuple()
        indptr, indices = _index_tensor(indptr, "CSRTensor", "indptr"), _index_tensor(indices, "CSRTensor", "indices")
        values, shape = _value_tensor(values, "CSRTensor"), _shape_of(shape, "CSRTensor")
        _check_csr(indptr, indices, values, shape)
        for slot, value in zip(self.__slots__, (indptr, indices, values, shape)):
            object.__setattr__(self, slot, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"a CSRTensor cannot be changed (make a new one): cannot set {name!r}")

    def __reduce__(self):
        return CSRTensor, self.to_tuple()

    # --- attributes ---------------------------------------------------------------------------
    @property
    def indptr(self) -> Tensor:
        """Where each row starts in `indices` and `values` (shape[0] + 1 integers)."""
        return self._indptr

    @property
    def indices(self) -> Tensor:
        """The column of each stored element."""
        return self._indices

    @property
    def values(self) -> Tensor:
        """The stored elements."""
        return self._values

    @property
    def shape(self) -> tuple:
        """The dense shape."""
        return self._shape

    @property
    def dtype(self):
        """The dtype of the values."""
        return self._values.dtype

    @property
    def size(self) -> int:
        """The number of stored values."""
        return self._values.size

    @property
    def itemsize(self) -> int:
        """Bytes of one value."""
        return self._values.itemsize

    @property
    def ndim(self) -> int:
        """The number of dense dimensions."""
        return len(self._shape)

    # --- conversions --------------------------------------------------------------------------
    def to_tuple(self) -> tuple:
        """(indptr, indices, values, shape)."""
        return self._indptr, self._indices, self._values, self._shape

    def to_dense(self) -> Tensor:
        """The dense Tensor."""
        out = Tensor(shape=self._shape, dtype=self._values.dtype)      # zeros
        out[_rows(self._indptr), np.asarray(self._indices)] = np.asarray(self._values)   # each place once (checked)
        return out

    def to_coo(self) -> "COOTensor":
        """The same elements as a COOTensor (2-D only)."""
        _need_2d(self, "to_coo")
        index = np.asarray(self._indices)
        indices = np.stack([_rows(self._indptr).astype(index.dtype), index], axis=1)
        return COOTensor(indices, self._values, self._shape)

    def astype(self, dtype) -> "CSRTensor":
        """A copy with the values cast to `dtype`."""
        return CSRTensor(self._indptr, self._indices, self._values.astype(dtype), self._shape)

    def abs(self) -> "CSRTensor":
        """The absolute values, same pattern."""
        return CSRTensor(self._indptr, self._indices, np.abs(self._values), self._shape)

    # --- arithmetic -------------------------------------------------------------------------
    def __neg__(self) -> "CSRTensor":
        return CSRTensor(self._indptr, self._indices, -self._values, self._shape)

    def add(self, b: "CSRTensor", alpha, beta) -> "CSRTensor":
        """`alpha * self + beta * b` (alpha, beta numbers or one-element Tensors): the union of the patterns."""
        if not isinstance(b, CSRTensor):
            raise TypeError(f"CSRTensor.add takes a CSRTensor, not {type(b).__name__}")
        _same_shape(self, b)
        _need_2d(self, "+")
        dtype = _promote(self.dtype, b.dtype)
        dtype = _promote(_with_scalar(dtype, alpha), _with_scalar(dtype, beta))
        index_dtype = np.result_type(self._indices.dtype, b._indices.dtype)
        ncols = self._shape[1]
        keys = np.concatenate([_rows(self._indptr) * ncols + np.asarray(self._indices),
                               _rows(b._indptr) * ncols + np.asarray(b._indices)])
        terms = np.concatenate([_scalar(alpha, dtype) * np.asarray(self._values).astype(dtype),
                                _scalar(beta, dtype) * np.asarray(b._values).astype(dtype)])
        keys, sums = _summed(keys, terms)
        rows, cols = np.divmod(keys, ncols)
        indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=self._shape[0]))])
        return CSRTensor(indptr.astype(index_dtype), cols.astype(index_dtype), sums, self._shape)

    def __add__(self, other) -> "CSRTensor":
        if not isinstance(other, CSRTensor):
            return _unsupported("CSRTensor", "+", other, "a CSRTensor of the same shape")
        return self.add(other, 1, 1)

    def __sub__(self, other) -> "CSRTensor":
        if not isinstance(other, CSRTensor):
            return _unsupported("CSRTensor", "-", other, "a CSRTensor of the same shape")
        return self.add(other, 1, -1)

    def __mul__(self, other):
        return self._elementwise(other, np.multiply, "*")

    def __rmul__(self, other):
        if not isinstance(other, np.ndarray):     # MindSpore has Tensor * CSRTensor, not number * CSRTensor
            return _unsupported(type(other).__name__, "*", self, "a Tensor on the left of a CSRTensor")
        return self._elementwise(other, np.multiply, "*")

    def __truediv__(self, other):
        return self._elementwise(other, np.true_divide, "/")

    def _elementwise(self, other, op, symbol: str):
        """MindSpore's csr_mul and csr_div: a one-element `other` gives the values (a Tensor), a dense one
        (broadcast to this shape) a CSRTensor of the same pattern."""
        y = _dense_operand(other, "CSRTensor", symbol)
        if y.size == 1 and y.ndim <= 2:
            dtype = _with_scalar(self.dtype, y.reshape(-1)[0].item())    # a one-element Tensor counts as a number
            result = _cast_result(op(np.asarray(self._values).astype(dtype), y.astype(dtype)), self.dtype, y.dtype)
            return as_tensor(result.reshape(self._values.shape))
        try:
            dense = np.broadcast_to(y, self._shape)
        except ValueError:
            raise ValueError(f"CSRTensor {symbol}: an operand of shape {y.shape} cannot broadcast to the sparse "
                             f"shape {self._shape}") from None
        dtype = _promote(self.dtype, y.dtype)
        picked = dense[_rows(self._indptr), np.asarray(self._indices)].astype(dtype)
        result = _cast_result(op(np.asarray(self._values).astype(dtype), picked), self.dtype, y.dtype)
        return CSRTensor(self._indptr, self._indices, result, self._shape)

    # --- products and sums ------------------------------------------------------------------
    def mv(self, dense_vector) -> Tensor:
        """This matrix times `dense_vector` of shape (shape[1], 1): a dense (shape[0], 1) Tensor."""
        _need_2d(self, "mv")
        v = _dense_operand(dense_vector, "CSRTensor", "mv")
        if v.ndim != 2 or v.shape != (self._shape[1], 1):
            raise ValueError(f"CSRTensor.mv: the vector must have shape {(self._shape[1], 1)}, not {v.shape}")
        return self._times(v)

    def mm(self, matrix):
        """This matrix times `matrix` (shape[1] rows): a dense Tensor, or a CSRTensor for a CSRTensor."""
        _need_2d(self, "mm")
        if isinstance(matrix, CSRTensor):
            return _csr_from_dense(self._times(np.asarray(matrix.to_dense())), self._indices.dtype)
        m = _dense_operand(matrix, "CSRTensor", "mm")
        if m.ndim != 2 or m.shape[0] != self._shape[1]:
            raise ValueError(f"CSRTensor.mm: the matrix must have {self._shape[1]} rows, not shape {m.shape}")
        return self._times(m)

    def _times(self, m: np.ndarray) -> Tensor:
        dtype = _promote(self.dtype, m.dtype)
        out = Tensor(shape=(self._shape[0],) + m.shape[1:], dtype=dtype)
        products = np.asarray(self._values).astype(dtype)[:, None] * m[np.asarray(self._indices)]
        np.add.at(out, _rows(self._indptr), products)
        return out

    def sum(self, axis: int) -> Tensor:
        """The sum over `axis`, which is kept with length 1 (MindSpore's csr_reduce_sum)."""
        if not isinstance(axis, numbers.Integral) or not -self.ndim <= axis < self.ndim:
            raise ValueError(f"CSRTensor.sum: axis must be an int in [{-self.ndim}, {self.ndim}), not {axis!r}")
        return self.to_dense().sum(axis=axis, keepdims=True)

    def __repr__(self) -> str:
        return (f"CSRTensor(shape={list(self._shape)}, dtype={dtype_name(self.dtype)}, "
                f"indptr={_text(self._indptr)}, indices={_text(self._indices)}, values={_text(self._values)})")


class COOTensor:
    """`COOTensor(indices=None, values=None, shape=None, coo_tensor=None)`: a sparse tensor in coordinate
    form (or a copy of `coo_tensor`): `dense[tuple(indices[i])] = values[i]`.

    `indices` has shape (N, len(shape)), `values` shape (N,). Indices given twice are kept (and summed
    by `to_dense`) until `coalesce()`.
    """

    __slots__ = ("_indices", "_values", "_shape")
    __array_ufunc__ = None    # `dense + coo`: NumPy leaves it to COOTensor.__radd__

    def __init__(self, indices=None, values=None, shape=None, coo_tensor=None):
        if coo_tensor is not None:
            if not isinstance(coo_tensor, COOTensor):
                raise TypeError(f"COOTensor: coo_tensor must be a COOTensor, not {type(coo_tensor).__name__}")
            if not (indices is None and values is None and shape is None):
                raise TypeError("COOTensor: give coo_tensor alone, or indices, values and shape")
            indices, values, shape = coo_tensor.to_tuple()
        indices = _index_tensor(indices, "COOTensor", "indices")
        values, shape = _value_tensor(values, "COOTensor"), _shape_of(shape, "COOTensor")
        _check_coo(indices, values, shape)
        for slot, value in zip(self.__slots__, (indices, values, shape)):
            object.__setattr__(self, slot, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"a COOTensor cannot be changed (make a new one): cannot set {name!r}")

    def __reduce__(self):
        return COOTensor, self.to_tuple()

    @property
    def indices(self) -> Tensor:
        """The index of each stored element, one row each (shape (N, ndim))."""
        return self._indices

    @property
    def values(self) -> Tensor:
        """The stored elements."""
        return self._values

    @property
    def shape(self) -> tuple:
        """The dense shape."""
        return self._shape

    @property
    def dtype(self):
        """The dtype of the values."""
        return self._values.dtype

    @property
    def size(self) -> int:
        """The number of stored values."""
        return self._values.size

    @property
    def itemsize(self) -> int:
        """Bytes of one value."""
        return self._values.itemsize

    @property
    def ndim(self) -> int:
        """The number of dense dimensions."""
        return len(self._shape)

    def to_tuple(self) -> tuple:
        """(indices, values, shape)."""
        return self._indices, self._values, self._shape

    def to_dense(self) -> Tensor:
        """The dense Tensor (values at one index summed)."""
        out = Tensor(shape=self._shape, dtype=self._values.dtype)      # zeros
        np.add.at(out, self._index_columns(), np.asarray(self._values))
        return out

    def coalesce(self) -> "COOTensor":
        """Each index once, in row-major order, the values at one index summed."""
        keys, sums = _summed(self._keys(), np.asarray(self._values))
        return COOTensor(self._from_keys(keys, self._indices.dtype), sums, self._shape)

    def to_csr(self) -> CSRTensor:
        """The same elements as a CSRTensor, sorted by row (2-D only)."""
        _need_2d(self, "to_csr")
        index = np.asarray(self._indices)
        order = np.argsort(index[:, 0], kind="stable")
        counts = np.bincount(index[:, 0], minlength=self._shape[0])
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(index.dtype)
        return CSRTensor(indptr, index[order, 1], np.asarray(self._values)[order], self._shape)

    def astype(self, dtype) -> "COOTensor":
        """A copy with the values cast to `dtype`."""
        return COOTensor(self._indices, self._values.astype(dtype), self._shape)

    def abs(self) -> "COOTensor":
        """The absolute values, same indices."""
        return COOTensor(self._indices, np.abs(self._values), self._shape)

    def add(self, other: "COOTensor", thresh) -> "COOTensor":
        """The sum with another COOTensor, in row-major order; sums smaller than `thresh` in magnitude are
        left out."""
        if not isinstance(other, COOTensor):
            raise TypeError(f"COOTensor.add takes a COOTensor, not {type(other).__name__}")
        _same_shape(self, other)
        dtype = _promote(self.dtype, other.dtype)
        keys, sums = _summed(np.concatenate([self._keys(), other._keys()]),
                             np.concatenate([np.asarray(self._values).astype(dtype), np.asarray(other._values).astype(dtype)]))
        keep = np.abs(sums) >= np.asarray(np.asarray(thresh))
        index_dtype = np.result_type(self._indices.dtype, other._indices.dtype)
        return COOTensor(self._from_keys(keys[keep], index_dtype), sums[keep], self._shape)

    def __neg__(self) -> "COOTensor":
        return COOTensor(self._indices, -self._values, self._shape)

    def __add__(self, other):
        if isinstance(other, COOTensor):
            return self.add(other, 0)
        return self._scatter(_same_shape_dense(self, other, "+"), 1)

    def __radd__(self, other):
        return self._scatter(_same_shape_dense(self, other, "+"), 1)

    def __sub__(self, other):
        if isinstance(other, COOTensor):
            return self.add(-other, 0)
        return self._scatter(-_same_shape_dense(self, other, "-"), 1)

    def __rsub__(self, other):
        return self._scatter(_same_shape_dense(self, other, "-"), -1)

    def __mul__(self, other) -> "COOTensor":
        return self._gathered(other, np.multiply, "*")

    __rmul__ = __mul__

    def __truediv__(self, other) -> "COOTensor":
        return self._gathered(other, np.true_divide, "/")

    def _scatter(self, dense: np.ndarray, sign: int) -> Tensor:
        """`dense` plus `sign` times this tensor, as a dense Tensor."""
        dtype = _promote(dense.dtype, self.dtype)
        out = np.array(dense, dtype=dtype)
        np.add.at(out, self._index_columns(), sign * np.asarray(self._values).astype(dtype))
        return as_tensor(out)

    def _gathered(self, other, op, symbol: str) -> "COOTensor":
        y = _same_shape_dense(self, other, symbol)
        dtype = _promote(self.dtype, y.dtype)
        picked = y[self._index_columns()].astype(dtype)
        result = _cast_result(op(np.asarray(self._values).astype(dtype), picked), self.dtype, y.dtype)
        return COOTensor(self._indices, result, self._shape)

    def _index_columns(self) -> tuple:
        """The indices as a tuple of columns, to index a dense array with (`dense[rows, cols]`)."""
        index = np.asarray(self._indices)
        return tuple([index[:, k] for k in range(len(self._shape))])

    def _keys(self) -> np.ndarray:
        return np.ravel_multi_index(self._index_columns(), self._shape)

    def _from_keys(self, keys: np.ndarray, dtype) -> np.ndarray:
        return np.stack(np.unravel_index(keys, self._shape), axis=1).astype(dtype).reshape(len(keys), self.ndim)

    def __repr__(self) -> str:
        return (f"COOTensor(shape={list(self._shape)}, dtype={dtype_name(self.dtype)}, "
                f"indices={_text(self._indices)}, values={_text(self._values)})")


# --- checks -----------------------------------------------------------------------------------------
def _index_tensor(value: Any, kind: str, what: str) -> Tensor:
    array = _array(value, kind, what)
    if array.dtype.type not in INDEX_DTYPES:
        raise TypeError(f"{kind}: {what} must hold int16, int32 or int64, not {array.dtype}")
    return as_tensor(array)


def _value_tensor(value: Any, kind: str) -> Tensor:
    return as_tensor(_array(value, kind, "values"))


def _array(value: Any, kind: str, what: str) -> np.ndarray:
    if value is None:
        raise TypeError(f"{kind}: {what} is missing")
    if isinstance(value, np.ndarray):
        return np.asarray(value)
    if isinstance(value, (list, tuple, numbers.Number)):
        return np.asarray(Tensor(value))
    raise TypeError(f"{kind}: {what} must be a Tensor, not {type(value).__name__}")


def _shape_of(shape: Any, kind: str) -> tuple:
    if isinstance(shape, list):
        shape = tuple(shape)
    if not isinstance(shape, tuple) or not all(isinstance(d, numbers.Integral) and not isinstance(d, bool) and d > 0
                                               for d in shape):
        raise TypeError(f"{kind}: shape must be a tuple of positive ints, not {shape!r}")
    return tuple(int(d) for d in shape)


def _check_csr(indptr: Tensor, indices: Tensor, values: Tensor, shape: tuple) -> None:
    if indptr.ndim != 1 or indices.ndim != 1:
        raise ValueError(f"CSRTensor: indptr and indices must be 1-D, not of shapes {indptr.shape} and {indices.shape}")
    if len(shape) < 2:
        raise ValueError(f"CSRTensor: the shape must have at least 2 dimensions, not {shape}")
    if indptr.shape[0] != shape[0] + 1:
        raise ValueError(f"CSRTensor: indptr must have shape[0] + 1 = {shape[0] + 1} elements, not {indptr.shape[0]}")
    if values.ndim < 1 or values.shape[0] != indices.shape[0] or values.shape[1:] != shape[2:]:
        raise ValueError(f"CSRTensor: values must have shape {(indices.shape[0],) + shape[2:]} (one per index, then "
                         f"shape[2:]), not {values.shape}")
    pointers = np.asarray(indptr)
    if pointers[0] != 0 or pointers[-1] != indices.shape[0] or np.any(np.diff(pointers) < 0):
        raise ValueError(f"CSRTensor: indptr must rise from 0 to the number of values ({indices.shape[0]}), "
                         f"not {pointers.tolist()}")
    if indices.size and (np.asarray(indices).min() < 0 or np.asarray(indices).max() >= shape[1]):
        raise ValueError(f"CSRTensor: the column indices must be in [0, {shape[1]})")
    keys = _rows(indptr) * shape[1] + np.asarray(indices)
    if len(np.unique(keys)) != len(keys):   # MindSpore leaves it undefined
        raise ValueError("CSRTensor: a column appears twice in one row")


def _check_coo(indices: Tensor, values: Tensor, shape: tuple) -> None:
    if indices.ndim != 2 or indices.shape[1] != len(shape):
        raise ValueError(f"COOTensor: indices must have shape (N, {len(shape)}) for a shape of {len(shape)} "
                         f"dimensions, not {indices.shape}")
    if values.ndim != 1 or values.shape[0] != indices.shape[0]:
        raise ValueError(f"COOTensor: values must have shape ({indices.shape[0]},), one per index, not {values.shape}")
    index = np.asarray(indices)
    if index.size and (index.min() < 0 or np.any(index.max(axis=0) >= np.array(shape))):
        raise ValueError(f"COOTensor: an index is out of the shape {shape}")


def _need_2d(sparse, what: str) -> None:
    if sparse.ndim != 2:
        raise ValueError(f"{type(sparse).__name__} {what}: only 2-D sparse tensors, not shape {sparse.shape}")


def _same_shape(a, b) -> None:
    if a.shape != b.shape:
        raise ValueError(f"{type(a).__name__}: the operands have shapes {a.shape} and {b.shape}, not one shape")


def _dense_operand(other: Any, kind: str, symbol: str) -> np.ndarray:
    if isinstance(other, (CSRTensor, COOTensor)):
        return _unsupported(kind, symbol, other, "a Tensor or a number")
    if isinstance(other, np.ndarray):
        return np.asarray(other)
    if isinstance(other, (bool, int, float)):
        return np.asarray(Tensor(other))     # MindSpore's scalar: Python floats as float32
    return _unsupported(kind, symbol, other, "a Tensor or a number")


def _same_shape_dense(coo: COOTensor, other: Any, symbol: str) -> np.ndarray:
    if not isinstance(other, np.ndarray):
        hint = "; to scale the values, COOTensor(x.indices, x.values * s, x.shape)" if isinstance(
            other, numbers.Number) else ""
        return _unsupported("COOTensor", symbol, other, f"a Tensor of the same shape{hint}")
    if other.shape != coo.shape:
        raise ValueError(f"COOTensor {symbol}: the Tensor has shape {other.shape}, not the sparse shape {coo.shape}")
    return np.asarray(other)


def _unsupported(kind: str, symbol: str, other: Any, takes: str):
    raise TypeError(f"{kind} {symbol} {type(other).__name__} is not supported: {symbol} takes {takes}")


# --- computing ------------------------------------------------------------------------------------
def _rows(indptr) -> np.ndarray:
    """The row of each stored element."""
    pointers = np.asarray(indptr)
    return np.repeat(np.arange(len(pointers) - 1), np.diff(pointers))


def _summed(keys: np.ndarray, values: np.ndarray) -> tuple:
    """The distinct keys in order, and the sum of the values of each."""
    unique, inverse = np.unique(keys, return_inverse=True)
    sums = np.zeros(len(unique), values.dtype)
    np.add.at(sums, inverse.reshape(-1), values)
    return unique, sums


def _promote(a, b) -> np.dtype:
    """MindSpore's promotion of two tensors' dtypes: a float type wins over an integer one (float32 with
    int64 is float32, where NumPy says float64); otherwise NumPy's."""
    a, b = np.dtype(a), np.dtype(b)
    if a == b:
        return a
    if (a.kind in "fc") != (b.kind in "fc"):
        return a if a.kind in "fc" else b
    return np.result_type(a, b)


def _with_scalar(dtype, scalar) -> np.dtype:
    """The dtype of values op a scalar, as MindSpore gives it: a number (or a one-element Tensor, MindSpore
    2.10's int32 values times `Tensor(2)` are int32) keeps the values' dtype, but for a float with integers
    (float32); a Tensor promotes as two Tensors do."""
    dtype = np.dtype(dtype)
    if isinstance(scalar, np.ndarray):
        return _promote(dtype, scalar.dtype)
    if isinstance(scalar, float) and dtype.kind in "biu":
        return np.dtype(np.float32)
    if isinstance(scalar, int) and not isinstance(scalar, bool) and dtype.kind == "b":
        return np.dtype(np.int64)
    return dtype


def _scalar(value, dtype) -> np.generic:
    """A number or one-element Tensor as a NumPy scalar of `dtype`."""
    return np.asarray(value).reshape(-1)[0].astype(dtype)


def _cast_result(result: np.ndarray, a, b) -> np.ndarray:
    """Integer division gives float32, as MindSpore's does (NumPy gives float64)."""
    if result.dtype == np.float64 and np.dtype(a).kind in "biu" and np.dtype(b).kind in "biu":
        return result.astype(np.float32)
    return result


def _csr_from_dense(dense, index_dtype) -> CSRTensor:
    array = np.asarray(dense)
    rows, cols = np.nonzero(array)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=array.shape[0]))])
    return CSRTensor(indptr.astype(index_dtype), cols.astype(index_dtype), array[rows, cols], array.shape)


def _text(t: np.ndarray) -> str:
    value = np.array2string(np.asarray(t)).replace("\n", "")
    return f"Tensor(shape={list(t.shape)}, dtype={dtype_name(t.dtype)}, value={value})"
