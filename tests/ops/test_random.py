"""ops/random.py: numbers drawn at call time, also compiled (never folded into the graph), reproducible
with `set_seed`, and the same compiled as eager from the same seed, at every level and execution mode."""

import numpy as np
import pytest

import graphjit as gj
from graphjit import ops
from layer_testing import CONFIGS, assert_identical, check_gradient


def draws(x):
    a = ops.uniform((2, 3), 0.0, 1.0)
    b = ops.uniform((2, 3), 0.0, 1.0)                  # the same call twice: never merged
    return a - b + ops.normal((2, 3), 0.0, 1.0) + ops.dropout(x, p=0.5)


def dead_draw_then_live(x):
    ops.dropout(x)                                     # its result is unused, its draw still happens
    return x + ops.normal(x.shape, 0.0, 1.0)


def loop_of_draws(x):
    s = x
    for _ in range(3):
        s = s + ops.uniform(x.shape, -1.0, 1.0)
    return s


def rows_dropped(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):                        # a loop the vectorizer may look at: draws stay per row
        out[i] = ops.dropout(x[i], p=0.5) + ops.normal((x.shape[1],), 0.0, 1.0)
    return out


@pytest.mark.parametrize("level, mode", CONFIGS)
@pytest.mark.parametrize("fn", [draws, dead_draw_then_live, loop_of_draws, rows_dropped], ids=lambda f: f.__name__)
def test_fresh_numbers_each_call_and_same_as_eager_from_a_seed(fn, level, mode):
    x = np.ones((2, 3), np.float32)
    jitted = gj.jit(fn, jit_level=level, exec_mode=mode)
    gj.set_seed(11)
    eager = [fn(x) for _ in range(3)]
    gj.set_seed(11)
    compiled = [jitted(x) for _ in range(3)]
    for a, e in zip(compiled, eager):
        assert_identical(a, e)
    assert not np.array_equal(compiled[0], compiled[1])
    gj.set_seed(11)
    assert_identical(jitted(x), eager[0])              # reseeding replays the stream


@pytest.mark.parametrize("level", ["O0", "O1", "O2"])
def test_the_draw_is_in_the_emitted_code(level):
    jitted = gj.jit(draws, jit_level=level)
    source = "\n".join(line for line in jitted.source(np.ones((2, 3), np.float32)).splitlines()
                       if not line.strip().startswith("#"))
    assert source.count("np.random.random(") == 3 and source.count("np.random.standard_normal(") == 1


def test_dropout_statistics_and_scaling():
    gj.set_seed(3)
    x = np.ones((200, 500), np.float32)
    y = ops.dropout(x, p=0.3)
    assert y.dtype == np.float32
    assert set(np.unique(y)) == {0.0, np.float32(1 / 0.7)}
    assert abs((y == 0).mean() - 0.3) < 0.01


def test_dropout_identity_cases():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    assert ops.dropout(x, p=0.9, training=False) is x
    assert ops.dropout(x, p=0.0) is x
    assert_identical(ops.dropout(x, p=1.0), np.zeros_like(x))


def test_dropout_gradient_is_the_mask_scaled():
    x = np.random.default_rng(0).standard_normal((4, 5))

    def loss(x):
        return (ops.dropout(x, p=0.25) * x).sum()
    gj.set_seed(5)
    g = gj.grad(loss)(x)
    gj.set_seed(5)
    kept = ops.dropout(np.ones_like(x), p=0.25)        # the same mask: 1/(1-p) where kept, 0 elsewhere
    np.testing.assert_allclose(g, 2 * x * kept, rtol=1e-12)
    gj.set_seed(5)
    g_compiled = gj.grad(gj.jit(loss, jit_level="O2"))(x)
    np.testing.assert_allclose(g_compiled, g, rtol=1e-12)


def test_dropout_gradient_by_finite_differences_with_a_fixed_mask():
    x = np.random.default_rng(1).standard_normal((3, 4))

    def loss(x):
        gj.set_seed(9)                                 # the same mask at every evaluation
        return (ops.dropout(x, p=0.5) ** 2).sum()
    check_gradient(loss, x, gj.grad(loss)(x))


def test_uniform_range_dtype_and_broadcast():
    gj.set_seed(0)
    u = ops.uniform((3, 1, 2), np.array([[3.0, 4.0], [5.0, 6.0]], np.float32), np.float32(8.0))
    assert u.shape == (3, 2, 2) and u.dtype == np.float32
    assert (u >= [[3, 4], [5, 6]]).all() and (u < 8).all()
    k = ops.uniform((1000,), 1, 4, dtype=np.int32)
    assert k.dtype == np.int32 and set(np.unique(k)) == {1, 2, 3}


def test_normal_moments_and_broadcast():
    gj.set_seed(0)
    n = ops.normal((20000,), 3.0, 2.0)
    assert n.dtype == np.float32
    assert abs(n.mean() - 3.0) < 0.05 and abs(n.std() - 2.0) < 0.05
    assert ops.normal((3, 1, 2), np.zeros((2, 2), np.float32), 1.0).shape == (3, 2, 2)


def test_seed_argument_is_accepted():
    gj.set_seed(2)
    a = ops.normal((3,), 0.0, 1.0, seed=5)
    gj.set_seed(2)
    np.testing.assert_array_equal(ops.normal((3,), 0.0, 1.0), a)
