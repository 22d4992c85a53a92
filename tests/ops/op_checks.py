"""Checks shared by the tests of `graphjit.ops`: an op compiles at STRICT into the expected graph ops,
compiled equals eager (type, dtype, shape, values) at O0/O1/O2 through the emitter and the
interpreter, and gradients match central finite differences, eagerly and jitted."""

import numpy as np
import pytest

import graphjit as gj

LEVELS = ["O0", "O1", "O2"]
MODES = ["auto", "no_sink"]


def assert_same_result(actual, expected):
    """Same Python type (Tensor stays Tensor), dtype, shape and values, through tuples."""
    assert type(actual) is type(expected), (type(actual), type(expected))
    if isinstance(expected, (tuple, list)):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_same_result(a, e)
        return
    if isinstance(expected, (np.ndarray, np.generic)):
        assert actual.dtype == expected.dtype and actual.shape == expected.shape
        np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=1e-12, atol=0)
        return
    assert actual == expected


def graph_ops(graph) -> set:
    return {n.op for n in graph.all_nodes()}


def check_compiled(fn, args, expected_ops=()):
    """`fn(*args)` compiled at STRICT at every level and mode: equal to eager, with `expected_ops` in
    its graph and no fallback or opaque call (`pycall`, `call`)."""
    expected = fn(*args)
    for level in LEVELS:
        for mode in MODES:
            config = gj.JitConfig(jit_level=level, exec_mode=mode, jit_syntax_level="STRICT")
            jitted = gj.jit(fn, jit_config=config)
            assert_same_result(jitted(*args), expected)
            assert_same_result(jitted(*args), expected)   # the cached entry too
            ops = graph_ops(jitted.graph(*args))
            assert not ops & {"fallback", "pycall", "call"}, ops
            assert set(expected_ops) <= ops, (expected_ops, ops)
    return expected


def directional_fd(fn, args, k, direction, eps=1e-6):
    plus, minus = list(args), list(args)
    plus[k] = args[k] + eps * direction
    minus[k] = args[k] - eps * direction
    return (np.sum(fn(*plus)) - np.sum(fn(*minus))) / (2 * eps)


def check_gradient(fn, args, positions=0):
    """graphjit.grad of the sum of `fn` (float64 arguments), eager and jitted at every level, against
    central finite differences along a random direction."""
    positions = (positions,) if isinstance(positions, int) else tuple(positions)
    rng = np.random.default_rng(7)
    runs = [gj.grad(fn, positions)] + [gj.grad(gj.jit(fn, jit_config=gj.JitConfig(jit_level=level)), positions)
                                       for level in LEVELS]
    for run in runs:
        grads = run(*args)
        grads = grads if isinstance(grads, tuple) else (grads,)
        for k, g in zip(positions, grads):
            d = rng.standard_normal(np.shape(args[k]))
            expected = directional_fd(fn, args, k, d)
            assert float(np.sum(g * d)) == pytest.approx(expected, rel=1e-5, abs=1e-6), f"argument {k}"
