"""The vectorizer's temporary-size cost rule (graph/vectorize/cost.py): a loop whose whole-array form
would build a temporary over MAX_BLOWUP times the largest array it touches (and over MIN_BYTES)
stays a loop, with the reason in the graph; its inner loop still vectorizes, and a smaller instance
of the same loop vectorizes whole. Compiled equals eager either way, through the emitter and the
interpreter."""

import re

import numpy as np
import pytest

import graphjit
from graphjit.graph.vectorize.cost import MAX_BLOWUP, MIN_BYTES

from eager_vs_compiled import run_both


def conv(x, w):
    k = w.shape[0]
    h_out = x.shape[1] - k + 1
    w_out = x.shape[2] - k + 1
    out = np.empty((x.shape[0], h_out, w_out, w.shape[3]))
    for i in range(h_out):
        for j in range(w_out):
            out[:, i, j, :] = np.sum(x[:, i:i + k, j:j + k, :, np.newaxis] * w[np.newaxis], axis=(1, 2, 3))
    return out


def inputs(side, channels):
    rng = np.random.default_rng(0)
    return rng.standard_normal((2, side, side, channels)), rng.standard_normal((5, 5, channels, 4))


def temporary_bytes(side, channels):
    h = side - 4
    return h * h * 2 * 5 * 5 * channels * 4 * 8


BIG = (44, 4)     # the product of every window with the weights: 10 MiB
SMALL = (12, 2)   # 0.1 MiB


def test_sizes_are_on_either_side_of_the_rule():
    x, w = inputs(*BIG)
    largest = max(x.nbytes, w.nbytes, (2 * 40 * 40 * 4) * 8)
    assert temporary_bytes(*BIG) > max(MIN_BYTES, MAX_BLOWUP * largest)
    assert temporary_bytes(*SMALL) < MIN_BYTES


def test_big_temporary_keeps_the_outer_loop_and_says_why():
    x, w = inputs(*BIG)
    jitted = graphjit.jit(conv, jit_level="O2")
    graph_text = str(jitted.graph(x, w))
    assert re.search(r"vectorize='no: its vectorized form builds a \d+ MiB temporary \(`mul`, f64\[40,40,2,5,5,4,4\]\)",
                     graph_text), graph_text
    src = jitted.source(x, w)
    assert re.search(r"^    for i in range\(40\):$", src, re.M), src        # the outer loop stays ...
    assert not re.search(r"^        for j", src, re.M), src                  # ... its inner loop is vectorized
    assert "sliding_window_view" in src, src


def test_small_temporary_vectorizes_the_whole_nest():
    x, w = inputs(*SMALL)
    src = graphjit.jit(conv, jit_level="O2").source(x, w)
    assert not re.search(r"^\s+for ", src, re.M), src


@pytest.mark.parametrize("level,exec_mode", [("O1", "auto"), ("O2", "auto"), ("O2", "no_sink")])
@pytest.mark.parametrize("size", [BIG, SMALL])
def test_eager_vs_compiled(size, level, exec_mode):
    x, w = inputs(*size)
    out = graphjit.jit(conv, jit_level=level, exec_mode=exec_mode)(x, w)
    np.testing.assert_allclose(out, conv(x, w), rtol=1e-12, atol=1e-12)


def test_eager_vs_compiled_same_mutation():
    run_both(conv, inputs(*SMALL), jit_level="O2")
