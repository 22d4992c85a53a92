"""Gradients of programs that sort along an axis, repeat by per-element counts, pad in the linear
modes and contract with `np.einsum('...')`: eager (PYNATIVE) and jitted at O0/O1/O2, through the
generated NumPy and the interpreter, against central finite differences, against each other, and
against the `autograd` package where it differentiates the program."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import graphjit as gj
from autodiff_programs import rng_arrays
from eager_vs_compiled import run_both
from test_autodiff import check_against_fd

LEVELS = ["O0", "O1", "O2"]
MODES = ["auto", "no_sink"]


def sort_axes(x, w):
    s = np.sort(x * w, axis=0)
    t = np.sort(np.tanh(x), axis=1)
    return (s * s * w).sum() + (t * np.arange(3.0)).sum() + np.sort(x, axis=None)[-2] + np.sort(w)[0]


def sort_vector(x, w):
    return (np.sort(x * w) * np.arange(4.0)).sum()


def repeat_counts(x, w):
    counts = np.array([2, 0, 1, 3])
    y = np.repeat(x * w, counts, axis=0)
    z = np.repeat(x, [1, 0, 0, 2, 1, 0, 3, 1, 0, 0, 2, 1], axis=None)
    c = np.repeat(w, [0, 0, 0])
    return (y * y).sum() + (z * np.arange(z.size)).sum() + c.sum() + np.repeat(w, 2, axis=-1).sum()


def repeat_given_counts(x, w, counts):
    return (np.repeat(x * w, counts, axis=1) ** 2).sum()


def pad_modes(x, w):
    total = 0.0
    for mode in ("edge", "reflect", "symmetric", "wrap", "constant", "linear_ramp", "mean"):
        p = np.pad(x * w, ((1, 2), (4, 1)), mode=mode)
        total = total + (p * p).sum() + p[0, 0] * 3.0
    big = np.pad(x * w, ((1, 2), (4, 1)), mode="maximum", stat_length=2)
    small = np.pad(x, 2, mode="minimum")
    total = total + (big * big).sum() + (small * np.arange(7.0)).sum()
    odd = np.pad(w, (2, 3), mode="symmetric", reflect_type="odd")
    return total + (np.pad(w, 2, mode="reflect") * np.arange(7.0)).sum() + (odd * odd).sum()


def einsum_ellipsis(x, w):
    y = np.einsum("...ij,jk->...ik", x, w)
    d = np.einsum("...ii->...i", np.einsum("bij,bkj->bik", x, x))
    v = np.einsum(x, [Ellipsis, 0, 1], w, [1, 2], [Ellipsis, 2, 0])         # the interleaved form
    return np.tanh(y).sum() + (d * d).sum() + np.einsum("...i,...i", w, w).sum() + np.sin(v).sum()


def einsum_ellipsis_twin(x, w):
    y = anp.einsum("...ij,jk->...ik", x, w)
    g = anp.einsum("bij,bkj->bik", x, x)
    d = anp.stack([anp.diag(g[k]) for k in range(g.shape[0])])
    v = anp.einsum("...ab,bc->...ca", x, w)
    return anp.sum(anp.tanh(y)) + anp.sum(d * d) + anp.sum(anp.einsum("...i,...i", w, w)) + anp.sum(anp.sin(v))


def sort_in_place(x, w):
    y = x * w
    y.sort(axis=0)
    r = (y * y).sum()
    z = x - 0.5 * w
    z.sort(kind="stable")
    return (y * np.arange(12.0).reshape(4, 3)).sum() + r + (z * w).sum()


# name -> (function, argument builder, grad_position, autograd twin or None)
PROGRAMS = {
    "sort_axes": (sort_axes, lambda: rng_arrays((4, 3), (3,)), (0, 1), None),        # autograd: 1-D only
    "sort_in_place": (sort_in_place, lambda: rng_arrays((4, 3), (3,)), (0, 1), None),
    "sort_vector": (sort_vector, lambda: rng_arrays((4,), (4,)), (0, 1),
                    lambda x, w: anp.sum(anp.sort(x * w) * anp.arange(4.0))),
    "repeat_counts": (repeat_counts, lambda: rng_arrays((4, 3), (3,)), (0, 1), None),  # autograd: one count
    "repeat_given_counts": (repeat_given_counts, lambda: rng_arrays((2, 3), (3,)) + (np.array([0, 2, 1]),), (0, 1),
                            None),
    "pad_modes": (pad_modes, lambda: rng_arrays((2, 3), (3,)), (0, 1), None),          # autograd: constant only
    "einsum_ellipsis": (einsum_ellipsis, lambda: rng_arrays((2, 3, 3), (3, 3)), (0, 1), einsum_ellipsis_twin),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("mode", MODES)
def test_program_gradient_matches_finite_differences(name, level, mode):
    fn, make_args, positions, _ = PROGRAMS[name]
    args = make_args()
    compiled = gj.jit(fn, jit_config=gj.JitConfig(jit_level=level, exec_mode=mode))
    grads = gj.grad(compiled, positions)(*args)
    check_against_fd(fn, args, positions, grads)
    eager = gj.grad(fn, positions)(*args)
    for a, b in zip(eager, grads):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("mode", MODES)
def test_program_compiled_equals_eager(name, level, mode):
    fn, make_args, _, _ = PROGRAMS[name]
    run_both(fn, make_args(), jit_config=gj.JitConfig(jit_level=level, exec_mode=mode))


def test_array_sort_method_sorts_in_place_and_returns_none():
    def f(x):
        y = x.copy()
        out = y.sort(axis=0)
        return y, out
    x = rng_arrays((3, 2))[0]
    jitted = gj.jit(f)
    y, out = jitted(x)
    np.testing.assert_array_equal(y, np.sort(x, axis=0))
    assert out is None
    assert "y[...] = np.sort(y, axis=0)" in jitted.source(x)


def sort_through_views(x):
    z = x * 2.0
    before = z.sum(axis=1)
    z[1].sort()
    z[:, 0].sort(kind="stable")
    x.sort(axis=0)                    # the argument itself, as NumPy does
    return z, before, z[1] * 1.0


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("mode", MODES)
def test_sorting_in_place_through_a_view_writes_the_array(level, mode):
    run_both(sort_through_views, rng_arrays((3, 4)), jit_config=gj.JitConfig(jit_level=level, exec_mode=mode))


@pytest.mark.parametrize("name", sorted(name for name, p in PROGRAMS.items() if p[3] is not None))
def test_program_gradient_matches_autograd(name):
    fn, make_args, positions, twin = PROGRAMS[name]
    args = make_args()
    grads = gj.grad(gj.jit(fn), positions)(*args)
    for k, g in zip(positions, grads):
        np.testing.assert_allclose(g, autograd.grad(twin, k)(*args), rtol=1e-10, atol=1e-12)


def test_the_backward_code_reads_like_numpy():
    """The generated gradient scatters through the stable argsort, sums segments with reduceat and
    folds the reflected borders back with slices."""
    def loss(x):
        y = np.pad(x, ((0, 0), (2, 0)), mode="reflect")
        return (np.sort(x, axis=0) * np.repeat(x, [1, 2], axis=0)[:2]).sum() + (y * y).sum()
    text = gj.grad(gj.jit(loss)).source(rng_arrays((2, 3))[0])
    assert "[np.argsort(x, axis=0, kind='stable'), np.arange(3)] = " in text
    assert "np.add.reduceat(" in text and ", (0, 1), axis=0)" in text
    assert "[:, 2:5] + np.pad(" in text and "[:, 1::-1], ((0, 0), (1, 0)))" in text
