"""MindSpore's LeNet-5 trains: value_and_grad of a softmax cross-entropy and a manual SGD update, the
loss decreases, GRAPH mode equals PYNATIVE step by step, and the gradients equal the hand-written
im2col ones of benchmarks/bench_lenet.py."""

import numpy as np
import pytest

import graphjit as gj
from locations import BENCHMARKS

LR, STEPS = 0.05, 4


@pytest.fixture(scope="module")
def bench():
    import importlib.util
    spec = importlib.util.spec_from_file_location("bench_lenet", BENCHMARKS / "bench_lenet.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((8, 1, 32, 32)).astype(np.float32), rng.integers(0, 10, 8)


def train(bench, mode):
    """Losses and final parameters of STEPS steps in `mode` (GRAPH: the step is jitted)."""
    gj.set_context(mode=mode)
    gj.set_seed(0)
    net = bench.LeNet5()
    params = net.trainable_params()

    def forward_fn(x, y):
        return bench.cross_entropy(net(x), y)

    grad_fn = gj.value_and_grad(forward_fn, None, params)

    def step(x, y):
        loss, grads = grad_fn(x, y)
        for p, g in zip(params, grads):
            p -= LR * g
        return loss

    if mode == gj.GRAPH_MODE:
        step = gj.jit(step)
    x, y = data()
    losses = [float(step(x, y)) for _ in range(STEPS)]
    return losses, [np.array(p) for p in params]


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
