"""ops.cat/concat, stack, reshape, transpose/permute, squeeze, expand_dims/unsqueeze, flatten: eager
and compiled (STRICT, O0-O2, emitter and interpreter) agree, Tensors stay Tensors, gradients match
finite differences."""

import numpy as np
import pytest

import graphjit as gj
from graphjit import Tensor, ops
from op_checks import check_compiled, check_gradient


def cat_columns(x, y):
    return ops.cat((x, y), 1)


def concat_rows(x, y):
    return ops.concat([x, y])


def stack_pair(x, y):
    return ops.stack([x, y], axis=1)


def reshape_3x2(x):
    return ops.reshape(x, (3, 2))


def transpose_swap(x):
    return ops.transpose(x, (1, 0))


def permute_swap(x):
    return ops.permute(x, (1, 0))


def squeeze_back(x):
    return ops.squeeze(ops.expand_dims(x, 0))


def squeeze_axis(x):
    return ops.squeeze(ops.unsqueeze(x, -1), axis=2)


def flatten_batch(x):
    return ops.flatten(ops.reshape(x, (1, 2, 3)))


def flatten_all(x):
    return ops.flatten(x, start_dim=0)


X = Tensor(np.arange(6.0).reshape(2, 3), gj.float32)
Y = np.arange(6.0, 12.0).reshape(2, 3).astype(np.float32)

CASES = {
    "cat": (cat_columns, (X, Y), ("concatenate",), (2, 6)),
    "concat": (concat_rows, (X, Y), ("concatenate",), (4, 3)),
    "stack": (stack_pair, (X, Y), ("stack",), (2, 2, 3)),
    "reshape": (reshape_3x2, (X,), ("reshape",), (3, 2)),
    "transpose": (transpose_swap, (X,), ("transpose",), (3, 2)),
    "permute": (permute_swap, (X,), ("transpose",), (3, 2)),
    "squeeze": (squeeze_back, (X,), ("squeeze", "expand_dims"), (2, 3)),
    "squeeze_axis": (squeeze_axis, (X,), ("squeeze",), (2, 3)),
    "flatten": (flatten_batch, (X,), ("reshape",), (1, 6)),
    "flatten_all": (flatten_all, (X,), ("reshape",), (6,)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiles_and_equals_eager(name):
    fn, args, expected_ops, shape = CASES[name]
    result = check_compiled(fn, args, expected_ops)
    assert type(result) is Tensor and result.shape == shape


@pytest.mark.parametrize("name", sorted(CASES))
def test_plain_arrays_give_plain_arrays(name):
    fn, args, _, _ = CASES[name]
    plain = tuple(np.asarray(a) for a in args)
    assert type(check_compiled(fn, plain)) is np.ndarray


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_finite_differences(name):
    fn, args, _, _ = CASES[name]
    args = tuple(np.asarray(a, dtype=np.float64) for a in args)
    check_gradient(fn, args, tuple(range(len(args))))


def test_flatten_checks_its_dimensions():
    with pytest.raises(ValueError, match="start_dim <= end_dim"):
        ops.flatten(np.zeros((2, 3)), start_dim=2, end_dim=0)
    assert ops.flatten(Tensor(2.0)).shape == (1,)


def flatten_fortran(x):
    return ops.flatten(x, order="F", start_dim=0)


def test_flatten_in_fortran_order():
    result = check_compiled(flatten_fortran, (X,), ("reshape",))
    np.testing.assert_array_equal(result.asnumpy(), [0, 3, 1, 4, 2, 5])
