"""nn/init.py: MindSpore's initializers (classes, names, numbers, arrays), their bounds and moments,
Dense's defaults (HeUniform(sqrt(5)) weight, U(+-1/sqrt(in)) bias), and reproducibility under `set_seed`."""

import math

import numpy as np
import pytest

import graphjit as gj
from graphjit import nn
from graphjit.nn import init
from graphjit.nn.init import (Constant, HeNormal, HeUniform, Normal, One, TruncatedNormal, Uniform, XavierNormal,
                              XavierUniform, Zero, initializer)

SHAPE = (400, 300)                     # fan_in 300, fan_out 400


def test_constant_initializers():
    np.testing.assert_array_equal(initializer("zeros", (2, 3)), np.zeros((2, 3)))
    np.testing.assert_array_equal(initializer(Zero(), (2,)), [0, 0])
    np.testing.assert_array_equal(initializer("ones", 3), [1, 1, 1])
    np.testing.assert_array_equal(initializer(One(), (2,), np.float64), [1.0, 1.0])
    np.testing.assert_array_equal(initializer(Constant(2.5), (2,)), [2.5, 2.5])
    np.testing.assert_array_equal(initializer(7, (2,)), [7, 7])
    assert initializer("zeros", (2,)).dtype == np.float32
    assert initializer("ones", (2,), gj.float64).dtype == np.float64


@pytest.mark.parametrize("spec, low, high", [
    (Uniform(), -0.07, 0.07), (Uniform(0.5), -0.5, 0.5), ("uniform", -0.07, 0.07),
    (HeUniform(), -math.sqrt(6 / 300), math.sqrt(6 / 300)),
    (HeUniform(negative_slope=math.sqrt(5)), -1 / math.sqrt(300), 1 / math.sqrt(300)),
    (HeUniform(mode="fan_out", nonlinearity="relu"), -math.sqrt(6 / 400), math.sqrt(6 / 400)),
    ("he_uniform", -math.sqrt(6 / 300), math.sqrt(6 / 300)),
    (XavierUniform(), -math.sqrt(6 / 700), math.sqrt(6 / 700)),
    ("xavier_uniform", -math.sqrt(6 / 700), math.sqrt(6 / 700)),
    (XavierUniform(gain=2), -2 * math.sqrt(6 / 700), 2 * math.sqrt(6 / 700)),
])
def test_uniform_families_fill_their_interval(spec, low, high):
    gj.set_seed(0)
    w = initializer(spec, SHAPE)
    assert w.dtype == np.float32 and w.shape == SHAPE
    assert w.min() >= low and w.max() <= high
    assert w.min() < low * 0.99 and w.max() > high * 0.99       # the whole interval is used


@pytest.mark.parametrize("spec, mean, std", [
    (Normal(), 0.0, 0.01), ("normal", 0.0, 0.01), (Normal(sigma=0.5, mean=2.0), 2.0, 0.5),
    (HeNormal(), 0.0, math.sqrt(2 / 300)), ("he_normal", 0.0, math.sqrt(2 / 300)),
    (HeNormal(nonlinearity="tanh"), 0.0, 5 / 3 / math.sqrt(300)),
    (XavierNormal(), 0.0, math.sqrt(2 / 700)), ("xavier_normal", 0.0, math.sqrt(2 / 700)),
])
def test_normal_families_moments(spec, mean, std):
    gj.set_seed(0)
    w = initializer(spec, SHAPE)
    assert abs(w.mean() - mean) < 0.02 * std + 1e-9 + abs(mean) * 0.01
    assert abs(w.std() - std) < 0.02 * std


@pytest.mark.parametrize("name", ["truncatedNormal", "TruncatedNormal", "truncatednormal"])
def test_truncated_normal_is_cut_at_two_sigma(name):
    gj.set_seed(0)
    w = initializer(name, SHAPE)
    assert np.abs(w).max() <= 0.02 + 1e-7
    custom = initializer(TruncatedNormal(sigma=1.0, mean=5.0, a=-1.0, b=1.0), SHAPE)
    assert custom.min() >= 4.0 and custom.max() <= 6.0


def test_arrays_are_copied_and_shape_checked():
    a = np.arange(6.0).reshape(2, 3)
    w = initializer(a, (2, 3))
    assert w.dtype == np.float32 and w is not a
    np.testing.assert_array_equal(w, a)
    with pytest.raises(ValueError, match="has shape \\(2, 3\\), but shape \\(3, 2\\) was asked"):
        initializer(a, (3, 2))


def test_unknown_initializer_is_one_clear_error():
    with pytest.raises(ValueError, match="unknown initializer 'glorot'"):
        initializer("glorot", (2, 2))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        initializer("xavier_uniform", (5,))


def test_calculate_gain():
    assert init.calculate_gain("relu") == math.sqrt(2)
    assert init.calculate_gain("leaky_relu", math.sqrt(5)) == pytest.approx(math.sqrt(1 / 3))
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("sigmoid") == 1.0
    with pytest.raises(ValueError, match="unknown nonlinearity"):
        init.calculate_gain("swish")


def test_dense_defaults_are_mindspores():
    gj.set_seed(0)
    dense = nn.Dense(300, 400)
    bound = 1 / math.sqrt(300)           # HeUniform(sqrt(5)): gain sqrt(1/3), sqrt(3) * gain / sqrt(300)
    assert np.abs(dense.weight).max() <= bound and np.abs(dense.weight).max() > 0.99 * bound
    assert np.abs(dense.bias).max() <= bound and np.abs(dense.bias).max() > 0.9 * bound
    assert dense.weight.name == "weight" and dense.bias.name == "bias"


@pytest.mark.parametrize("weight_init, check", [
    ("zeros", lambda w: (w == 0).all()), ("ones", lambda w: (w == 1).all()),
    (Normal(sigma=0.5), lambda w: 0.45 < w.std() < 0.55), ("TruncatedNormal", lambda w: np.abs(w).max() <= 0.02),
    (XavierUniform(), lambda w: np.abs(w).max() <= math.sqrt(6 / 90)),
    (np.full((40, 50), 3.0), lambda w: (w == 3).all()), (0.25, lambda w: (w == 0.25).all()),
])
def test_dense_takes_strings_objects_numbers_and_arrays(weight_init, check):
    gj.set_seed(1)
    dense = nn.Dense(50, 40, weight_init=weight_init, bias_init="zeros")
    assert dense.weight.shape == (40, 50) and dense.weight.dtype == np.float32
    assert check(dense.weight)
    np.testing.assert_array_equal(dense.bias, 0)


def test_set_seed_makes_initialization_reproducible():
    gj.set_seed(42)
    a = [nn.Dense(3, 2).weight.copy(), initializer("normal", (2, 2)), initializer(TruncatedNormal(), (3, 3))]
    gj.set_seed(42)
    b = [nn.Dense(3, 2).weight.copy(), initializer("normal", (2, 2)), initializer(TruncatedNormal(), (3, 3))]
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_mindspore_import_path():
    from graphjit.common.initializer import Normal as CommonNormal, initializer as common_initializer
    assert CommonNormal is Normal and common_initializer is initializer
