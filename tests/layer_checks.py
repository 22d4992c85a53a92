"""Checks shared by the layer tests (tests/nn/): a layer compiled at every level and execution mode
against itself run eagerly, and gradients against central finite differences."""

import numpy as np
import pytest

import graphjit as gj

CONFIGS = [(level, mode) for level in ("O0", "O1", "O2") for mode in ("auto", "no_sink")]


def compiled_equals_eager(cell, x):
    """The cell's output run eagerly, after checking the compiled output equals it at every level
    and mode (same dtype and shape, values to rounding)."""
    expected = cell(x)

    def apply(x):
        return cell(x)

    for level, mode in CONFIGS:
        got = gj.jit(apply, jit_config=gj.JitConfig(jit_level=level, exec_mode=mode))(x)
        for g, e in zip(*(v if isinstance(v, tuple) else (v,) for v in (got, expected))):
            assert g.dtype == e.dtype and g.shape == e.shape, (level, mode)
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12, err_msg=f"{level} {mode}")
    return expected


def directional_fd(loss, value, direction, eps=1e-6):
    """d loss / d value along `direction`, by central differences (`value` is changed in place
    and restored, so a layer's weight can be probed through the layer)."""
    original = value.copy()
    value += eps * direction
    plus = float(loss())
    value[...] = original - eps * direction
    minus = float(loss())
    value[...] = original
    return (plus - minus) / (2 * eps)


def gradients_match_fd(cell, x, levels=("O0", "O2")):
    """grad of sum(cell(x) * seed) with respect to x and the cell's weights, eagerly and jitted,
    against central finite differences along random directions."""
    rng = np.random.default_rng(3)
    out = cell(x)
    seed = rng.standard_normal(np.shape(out[0] if isinstance(out, tuple) else out))
    params = cell.trainable_params()

    def loss(x):
        y = cell(x)
        return (y * seed).sum()

    variants = {"eager": loss}
    variants.update({level: gj.jit(loss, jit_config=gj.JitConfig(jit_level=level)) for level in levels})
    for name, fn in variants.items():
        gx, gws = gj.grad(fn, 0, params)(x)
        for value, g in [(x, gx)] + list(zip(params, gws)):
            assert g.shape == value.shape and g.dtype == value.dtype, name
            d = rng.standard_normal(value.shape)
            expected = directional_fd(lambda: loss(x), value, d)
            assert np.sum(g * d) == pytest.approx(expected, rel=1e-6, abs=1e-8), name
