"""ops.sum, mean, prod, max/min (values and indices), amax/amin, argmax/argmin, where: MindSpore 2.x's
signatures and results; eager and compiled (STRICT, O0-O2, emitter and interpreter) agree, Tensors
stay Tensors (0-d for a full reduction), gradients match finite differences where MindSpore has them."""

import numpy as np
import pytest

import graphjit as gj
from graphjit import Tensor, ops
from op_checks import check_compiled, check_gradient


def sum_all(x):
    return ops.sum(x)


def sum_kept(x):
    return ops.sum(x, 1, keepdim=True)


def sum_dims(x):
    return ops.sum(x, dim=[0, 1], dtype=gj.float64)


def mean_axis(x):
    return ops.mean(x, 0)


def mean_kept(x):
    return ops.mean(x, axis=(0, 1), keep_dims=True)


def prod_axis(x):
    return ops.prod(x, 1)


def max_axis(x):
    return ops.max(x, 1)


def max_all(x):
    return ops.max(x)


def min_kept(x):
    return ops.min(x, axis=0, keepdims=True)


def amax_amin(x):
    return ops.amax(x, 1) - ops.amin(x, 1)


def argmax_axis(x):
    return ops.argmax(x, 1)


def argmin_kept(x):
    return ops.argmin(x, dim=0, keepdim=True)


def where_positive(x):
    return ops.where(x > 1.0, x, 0.0)


def accuracy(pred, y):
    return (pred.argmax(1) == y).sum()


RNG = np.random.default_rng(5)
X = Tensor(RNG.uniform(0.5, 2.0, (3, 4)), gj.float32)

CASES = {
    "sum_all": (sum_all, ("sum",), ()),
    "sum_kept": (sum_kept, ("sum",), (3, 1)),
    "sum_dims": (sum_dims, ("sum",), ()),
    "mean_axis": (mean_axis, ("mean",), (4,)),
    "mean_kept": (mean_kept, ("mean",), (1, 1)),
    "prod_axis": (prod_axis, ("prod",), (3,)),
    "max_all": (max_all, ("max", "argmax"), None),
    "max_axis": (max_axis, ("max", "argmax"), None),
    "min_kept": (min_kept, ("min", "argmin"), None),
    "amax_amin": (amax_amin, ("max", "min"), (3,)),
    "argmax_axis": (argmax_axis, ("argmax",), (3,)),
    "argmin_kept": (argmin_kept, ("argmin",), (1, 4)),
    "where": (where_positive, ("where",), (3, 4)),
}
DIFFERENTIABLE = ["sum_all", "sum_kept", "sum_dims", "mean_axis", "mean_kept", "prod_axis", "amax_amin", "where"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiles_and_equals_eager(name):
    fn, expected_ops, shape = CASES[name]
    result = check_compiled(fn, (X,), expected_ops)
    for part in result if isinstance(result, tuple) else (result,):
        assert type(part) is Tensor
    if shape is not None:
        assert result.shape == shape


@pytest.mark.parametrize("name", sorted(CASES))
def test_plain_arrays_give_numpy_results(name):
    fn, _, _ = CASES[name]
    check_compiled(fn, (np.asarray(X),))


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_gradient_matches_finite_differences(name):
    fn, _, _ = CASES[name]
    check_gradient(fn, (np.asarray(X, dtype=np.float64),))


def max_values(x):
    return ops.max(x, 1)[0]


def test_max_gives_values_and_indices_and_its_values_are_differentiable():
    values, indices = ops.max(X, 1)
    np.testing.assert_array_equal(values.asnumpy(), np.asarray(X).max(1))
    np.testing.assert_array_equal(indices.asnumpy(), np.asarray(X).argmax(1))
    value, index = ops.max(X)
    assert value.shape == () and int(index) == int(np.asarray(X).argmax())
    check_gradient(max_values, (np.asarray(X, dtype=np.float64),))


def test_keepdims_is_ignored_without_an_axis_as_in_mindspore():
    assert ops.argmax(X, keepdim=True).shape == () and ops.max(X, keepdims=True)[0].shape == ()
    assert ops.argmin(X, None, True).shape == () and ops.min(X, keepdims=True)[1].shape == ()


def test_full_reductions_of_tensors_are_0d_tensors():
    total = ops.sum(X)
    assert type(total) is Tensor and total.shape == () and float(total) == pytest.approx(float(np.asarray(X).sum()))
    assert type(ops.argmax(X)) is Tensor


def test_the_tutorial_accuracy_line():
    y = Tensor(np.array([0, 1, 2]))
    correct = check_compiled(accuracy, (X, y), ("argmax", "eq", "sum"))
    assert type(correct) is Tensor
    assert int(correct.asnumpy()) == int((np.asarray(X).argmax(1) == np.array([0, 1, 2])).sum())
