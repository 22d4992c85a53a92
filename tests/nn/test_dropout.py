"""nn.Dropout: MindSpore's keep_prob/p, the identity when not training, seeded masks drawn at every call,
compiled equal to eager at every level and execution mode and across `set_train` switches, in GRAPH mode too."""

import numpy as np
import pytest

import graphjit as gj
from graphjit import nn, ops
from layer_testing import CONFIGS, assert_identical, run_layer_both


def test_p_wins_over_keep_prob():
    assert nn.Dropout().p == 0.5
    assert nn.Dropout(keep_prob=0.8).p == pytest.approx(0.2)
    assert nn.Dropout(keep_prob=0.8, p=0.1).p == 0.1
    assert nn.Dropout(p=0.1).keep_prob == pytest.approx(0.9)


@pytest.mark.parametrize("kwargs, message", [(dict(keep_prob=0.0), "keep_prob must be in \\(0, 1\\]"),
                                             (dict(p=1.0), "p must be in \\[0, 1\\)")])
def test_bad_probabilities(kwargs, message):
    with pytest.raises(ValueError, match=message):
        nn.Dropout(**kwargs)


def test_identity_when_not_training_and_ops_dropout_when_training():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    layer = nn.Dropout(p=0.25)
    assert layer.training is False
    assert layer(x) is x
    layer.set_train()
    gj.set_seed(4)
    y = layer(x)
    gj.set_seed(4)
    assert_identical(y, ops.dropout(x, p=0.25))
    assert not np.array_equal(layer(x), y)                      # a fresh mask at the next call


@pytest.mark.parametrize("level, mode", CONFIGS)
def test_compiled_equals_eager_across_calls_and_switches(level, mode):
    run_layer_both(lambda: nn.Dropout(p=0.4), [np.ones((5, 6), np.float32)], level, mode,
                   train_modes=(True, False, True), calls=3)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(6, 4)
        self.drop = nn.Dropout(p=0.5)

    def construct(self, x):
        return self.drop(self.dense(x))


def test_graph_mode_draws_fresh_masks_and_matches_pynative():
    x = np.ones((8, 6), np.float32)
    gj.set_seed(1)
    net = Net().set_train()
    gj.set_seed(7)
    eager = [net(x) for _ in range(3)]
    gj.set_context(mode=gj.GRAPH_MODE)
    gj.set_seed(7)
    graph = [net(x) for _ in range(3)]
    for a, e in zip(graph, eager):
        assert_identical(a, e)
    assert not np.array_equal(graph[0], graph[1])
    net.set_train(False)
    assert_identical(net(x), net.dense(x))


def test_gradient_through_a_dropout_network():
    gj.set_seed(2)
    net = Net().set_train()
    x = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)

    def loss(x):
        return net(x).sum()
    gj.set_seed(3)
    value, grads = gj.value_and_grad(loss, None, net.trainable_params())(x)
    gj.set_seed(3)
    value_c, grads_c = gj.value_and_grad(gj.jit(loss, jit_level="O2"), None, net.trainable_params())(x)
    assert value_c == value
    for a, b in zip(grads_c, grads):
        assert_identical(a, b)
    gj.set_seed(3)
    kept = ops.dropout(np.ones((4, 4), np.float32), p=0.5)
    np.testing.assert_allclose(grads[1], kept.sum(0), rtol=1e-6)     # d/d bias
