"""ops.ones, zeros, ones_like, zeros_like, full, full_like, fill, arange: MindSpore's signatures and
dtypes, Tensors eagerly and compiled (at STRICT, into the op table's creation ops)."""

import numpy as np
import pytest

import graphjit as gj
from graphjit import Tensor, ops
from op_checks import check_compiled


def ones_float():
    return ops.ones((2, 3))


def zeros_int():
    return ops.zeros(4, gj.int32)


def ones_like_of(x):
    return ops.ones_like(x)


def zeros_like_int(x):
    return ops.zeros_like(x, dtype=gj.int32)


def full_float():
    return ops.full((2, 2), 1.5)


def full_like_of(x):
    return ops.full_like(x, 7)


def fill_float():
    return ops.fill(gj.float32, (2, 2), 1)


def arange_ints():
    return ops.arange(5)


def arange_floats():
    return ops.arange(0, 2, 0.5)


def created_from_shape(x):
    return ops.zeros(x.shape) + x


X = Tensor(np.arange(6.0).reshape(2, 3), gj.float32)
A = np.arange(6.0).reshape(2, 3)

CASES = {
    "ones": (ones_float, (), ("ones", "tensor"), np.float32, (2, 3)),
    "zeros": (zeros_int, (), ("zeros", "tensor"), np.int32, (4,)),
    "ones_like": (ones_like_of, (X,), ("ones_like",), np.float32, (2, 3)),
    "zeros_like": (zeros_like_int, (A,), ("zeros_like",), np.int32, (2, 3)),
    "full": (full_float, (), ("full",), np.float32, (2, 2)),
    "full_like": (full_like_of, (A,), ("full_like",), np.float64, (2, 3)),
    "fill": (fill_float, (), ("full",), np.float32, (2, 2)),
    "arange": (arange_ints, (), ("arange",), np.int64, (5,)),
    "arange_float": (arange_floats, (), ("arange",), np.float32, (4,)),
    "from_shape": (created_from_shape, (X,), ("zeros", "tensor"), np.float32, (2, 3)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_creation_gives_tensors_of_mindspore_dtypes_eager_and_compiled(name):
    fn, args, expected_ops, dtype, shape = CASES[name]
    result = check_compiled(fn, args, expected_ops)
    assert type(result) is Tensor and result.dtype == dtype and result.shape == shape


def test_values():
    np.testing.assert_array_equal(ops.arange(7, 1, -2).asnumpy(), [7, 5, 3])
    np.testing.assert_array_equal(ops.arange(0, 3, 1.2).asnumpy(), np.array([0, 1.2, 2.4], np.float32))
    assert ops.full((2,), 3).dtype == np.int64 and ops.full((2,), True).dtype == np.bool_
    np.testing.assert_array_equal(ops.fill(gj.int32, (2,), 5).asnumpy(), [5, 5])
    assert ops.arange(np.float64(3.0)).dtype == np.float64      # a NumPy scalar keeps its dtype
