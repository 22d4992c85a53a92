"""Helpers for the tests of ops and layers (tests/ops/, tests/nn/): a layer run eagerly against its
compiled twin at every level and execution mode, across calls and `set_train` switches, and gradients
against central finite differences."""

import copy

import numpy as np

import graphjit as gj

LEVELS = ["O0", "O1", "O2"]
MODES = ["auto", "no_sink"]
CONFIGS = [(level, mode) for level in LEVELS for mode in MODES]


def assert_identical(actual, expected):
    """Same dtype, shape and values, bit for bit."""
    assert np.asarray(actual).dtype == np.asarray(expected).dtype
    assert np.shape(actual) == np.shape(expected)
    np.testing.assert_array_equal(actual, expected)


def run_layer_both(make_cell, inputs, level, mode, train_modes=(True,), calls=2):
    """Build the cell twice (same seed), run one eagerly and one's `construct` jitted, `calls` times in
    every mode of `train_modes` (switched with `set_train` between calls); results and every parameter
    afterwards are identical. Draws are reseeded before each call so random layers match too.
    Returns (eager cell, compiled cell)."""
    gj.set_seed(0)
    eager = make_cell()
    compiled = copy.deepcopy(eager)
    jitted = gj.jit(compiled.construct, jit_level=level, exec_mode=mode)
    for k, training in enumerate(t for t in train_modes for _ in range(calls)):
        eager.set_train(training)
        compiled.set_train(training)
        gj.set_seed(100 + k)
        expected = eager.construct(*inputs)
        gj.set_seed(100 + k)
        actual = jitted(*inputs)
        assert_identical(actual, expected)
    for (name, a), (name_c, b) in zip(eager.parameters_and_names(), compiled.parameters_and_names()):
        assert name == name_c
        assert_identical(b, a)
    return eager, compiled


def finite_difference(fn, x, direction, eps=1e-6):
    """(f(x + eps d) - f(x - eps d)) / 2 eps, f returning a scalar."""
    return (fn(x + eps * direction) - fn(x - eps * direction)) / (2 * eps)


def check_gradient(fn, x, grad, rtol=1e-5, atol=1e-7, seed=7):
    """`grad` (the gradient of scalar `fn` at float64 `x`) agrees with central differences along a random direction."""
    d = np.random.default_rng(seed).standard_normal(np.shape(x))
    expected = finite_difference(fn, x, d)
    actual = float(np.sum(grad * d))
    assert abs(actual - expected) <= atol + rtol * abs(expected), (actual, expected)
