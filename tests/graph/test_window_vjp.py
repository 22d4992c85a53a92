"""The gradient of `np.lib.stride_tricks.sliding_window_view` for any window axes: one in-place add per
kernel offset, or anti-diagonals for windows of more than UNROLLED_OFFSETS offsets; against finite
differences, jitted at every level and through the interpreter."""

import numpy as np
import pytest

import graphjit as gj
from graphjit.graph.vjp_linalg import UNROLLED_OFFSETS

swv = np.lib.stride_tricks.sliding_window_view


def window_2d(x):
    return swv(x, (3, 2), axis=(1, 2))


def window_all_axes(x):
    return swv(x, (2, 3, 2))


def window_negative_axes(x):
    return swv(x, (2, 2), axis=(-1, -3))          # axes in any order


def window_one_axis(x):
    return swv(x, 4, axis=1)


def window_1d(x):
    return swv(x, 3)


def window_large(x):                             # 9 * 9 offsets: undone axis by axis
    return swv(x, (9, 9), axis=(1, 2))


def window_strided(x):                           # a strided, dilated view of the windows
    return swv(x, (3, 3), axis=(1, 2))[:, ::2, ::3, ::2, :]


CASES = [(window_2d, (2, 5, 4)), (window_all_axes, (3, 4, 5)), (window_negative_axes, (3, 2, 4)),
         (window_one_axis, (2, 6)), (window_1d, (7,)), (window_large, (2, 10, 11)), (window_strided, (2, 7, 8))]


def test_the_large_case_takes_the_axis_by_axis_path():
    assert 9 * 9 > UNROLLED_OFFSETS >= 3 * 3 * 2


@pytest.mark.parametrize("window, shape", CASES, ids=[c[0].__name__ for c in CASES])
@pytest.mark.parametrize("level, mode", [("O0", "auto"), ("O1", "no_sink"), ("O2", "auto")])
def test_window_gradient_matches_finite_differences(window, shape, level, mode):
    rng = np.random.default_rng(11)
    x = rng.standard_normal(shape)
    seed = rng.standard_normal(window(x).shape)

    def loss(x):
        return (window(x) * seed).sum()

    g = gj.grad(gj.jit(loss, jit_config=gj.JitConfig(jit_level=level, exec_mode=mode)))(x)
    exact = np.zeros_like(x)                     # each window element's seed, added where it came from
    np.add.at(exact.reshape(-1), swv(np.arange(x.size).reshape(shape), *_args(window)).reshape(-1)[
        _taken(window, shape)], seed.reshape(-1))
    np.testing.assert_allclose(g, exact, rtol=1e-12, atol=1e-12)
    d = rng.standard_normal(shape)
    fd = (loss(x + 1e-6 * d) - loss(x - 1e-6 * d)) / 2e-6
    assert np.sum(g * d) == pytest.approx(fd, rel=1e-6)


def _args(window):
    """The windows of an index array, taken the same way as `window` takes them."""
    return {window_2d: ((3, 2), (1, 2)), window_all_axes: ((2, 3, 2), None), window_negative_axes: ((2, 2), (-1, -3)),
            window_one_axis: (4, 1), window_1d: (3, None), window_large: ((9, 9), (1, 2)),
            window_strided: ((3, 3), (1, 2))}[window]


def _taken(window, shape):
    """Which elements of the full windows view `window` keeps (all but for the strided case)."""
    full = swv(np.zeros(shape), *_args(window))
    keep = np.zeros(full.shape, bool)
    if window is window_strided:
        keep[:, ::2, ::3, ::2, :] = True
    else:
        keep[...] = True
    return keep.reshape(-1)
