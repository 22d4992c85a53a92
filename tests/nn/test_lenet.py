"""MindSpore's LeNet-5 trains: value_and_grad of a softmax cross-entropy and a manual SGD update, the
loss decreases, GRAPH mode equals PYNATIVE step by step, and the gradients equal the hand-written
im2col ones of benchmarks/bench_lenet.py."""

import sys

import numpy as np
import pytest

import graphjit as gj
from locations import BENCHMARKS

STEPS = 4


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import bench_lenet
    finally:
        sys.path.remove(str(BENCHMARKS))
    return bench_lenet


def data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((8, 1, 32, 32)).astype(np.float32), rng.integers(0, 10, 8)


def train(bench, mode):
    """Losses and final parameters of STEPS steps of the benchmark's training step in `mode` (GRAPH:
    the step jitted, PYNATIVE: plain Python)."""
    gj.set_context(mode=mode)
    gj.set_seed(0)
    net = bench.LeNet5()
    graph_step, pynative_step, _ = bench.graphjit_steps(net)
    step = graph_step if mode == gj.GRAPH_MODE else pynative_step
    x, y = data()
    losses = [float(step(x, y)) for _ in range(STEPS)]
    return losses, [np.array(p) for p in net.trainable_params()]


def test_lenet_trains_and_graph_equals_pynative(bench):
    graph_losses, graph_params = train(bench, gj.GRAPH_MODE)
    eager_losses, eager_params = train(bench, gj.PYNATIVE_MODE)
    assert graph_losses[-1] < graph_losses[0]
    np.testing.assert_allclose(graph_losses, eager_losses, rtol=1e-5)
    for g, e in zip(graph_params, eager_params):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-7)


def test_lenet_gradients_equal_the_hand_written_ones(bench):
    gj.set_seed(1)
    net = bench.LeNet5()
    x, y = data()
    _, _, grad_fn = bench.graphjit_steps(net)
    bench.check(net, grad_fn, x, y)
