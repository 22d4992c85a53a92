"""Losses: against a hand-written reference (loops over samples), compiled equal to eager, gradients
by finite differences; the loss cells and the training wrappers, jitted equal to eager."""

import warnings

import numpy as np
import pytest

import graphjit as ms
from graphjit import nn, ops

RNG = np.random.default_rng(0)
LOGITS = RNG.standard_normal((6, 5)) * 3
LABELS = np.array([0, 4, -100, 2, 2, 1])
WEIGHT = np.array([1.0, 2.0, 0.5, 1.5, 3.0])
PROBS = RNG.dirichlet(np.ones(5), 6)


def reference_nll(logp, labels, weight, ignore_index, reduction, smoothing):
    """MindSpore's nll_loss with label smoothing, one sample at a time."""
    n, c = logp.shape
    w = np.ones(c) if weight is None else weight
    losses, smooth, weights = [], [], []
    for i in range(n):
        if labels[i] == ignore_index:
            losses.append(0.0), smooth.append(0.0), weights.append(0.0)
            continue
        losses.append(-w[labels[i]] * logp[i, labels[i]])
        smooth.append(-sum(w[k] * logp[i, k] for k in range(c)))
        weights.append(w[labels[i]])
    losses, smooth = np.array(losses), np.array(smooth)
    if reduction == "mean":
        losses, smooth = losses.sum() / sum(weights), smooth.sum() / sum(weights)
    elif reduction == "sum":
        losses, smooth = losses.sum(), smooth.sum()
    return (1 - smoothing) * losses + smoothing / c * smooth


def log_softmax(x):
    return np.array([row - row.max() - np.log(np.exp(row - row.max()).sum()) for row in x])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weight", [None, WEIGHT])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_class_indices(reduction, weight, smoothing):
    want = reference_nll(log_softmax(LOGITS), LABELS, weight, -100, reduction, smoothing)
    got = ops.cross_entropy(LOGITS, LABELS, weight, -100, reduction, smoothing)
    np.testing.assert_allclose(got, want, rtol=1e-12)

    def f(x, t):
        return ops.cross_entropy(x, t, weight, -100, reduction, smoothing)
    np.testing.assert_allclose(ms.jit(f)(LOGITS, LABELS), want, rtol=1e-12)


def test_cross_entropy_probabilities_and_extra_dims():
    want = -(log_softmax(LOGITS) * (PROBS * 0.9 + 0.1 / 5) * WEIGHT).sum() / 6
    np.testing.assert_allclose(ops.cross_entropy(LOGITS, PROBS, WEIGHT, label_smoothing=0.1), want, rtol=1e-12)
    x = RNG.standard_normal((2, 3, 4))                       # (N, C, d): classes on axis 1
    t = np.array([[0, 2, 1, 1], [2, 2, 0, 1]])
    flat = ops.cross_entropy(x.transpose(0, 2, 1).reshape(8, 3), t.reshape(8), reduction="none")
    np.testing.assert_allclose(ops.cross_entropy(x, t, reduction="none"), flat.reshape(2, 4), rtol=1e-12)


def test_cross_entropy_is_stable():
    x = np.array([[1000.0, 0.0, -1000.0]], np.float32)
    assert np.isfinite(ops.cross_entropy(x, np.array([2])))
    assert ops.cross_entropy(x, np.array([2])).dtype == np.float32
    assert np.isfinite(ops.binary_cross_entropy_with_logits(x, np.ones_like(x)))


def test_binary_cross_entropy_with_logits():
    x, y = RNG.standard_normal((4, 3)), RNG.random((4, 3))
    w, pw = RNG.random(3), RNG.random(3) + 0.5
    s = 1 / (1 + np.exp(-x))
    want = (-w * (pw * y * np.log(s) + (1 - y) * np.log(1 - s))).mean()
    np.testing.assert_allclose(ops.binary_cross_entropy_with_logits(x, y, w, pw), want, rtol=1e-12)


def test_regression_losses():
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    np.testing.assert_allclose(ops.mse_loss(a, b), ((a - b) ** 2).mean())
    np.testing.assert_allclose(ops.l1_loss(a, b, "sum"), np.abs(a - b).sum())
    np.testing.assert_allclose(ops.l1_loss(a, b, "none"), np.abs(a - b))
    with pytest.raises(ValueError, match="reduction"):
        ops.mse_loss(a, b, "avg")


CELLS = [
    (lambda: nn.CrossEntropyLoss(), LABELS.clip(0)),
    (lambda: nn.CrossEntropyLoss(WEIGHT, ignore_index=2, label_smoothing=0.1), LABELS.clip(0)),
    (lambda: nn.SoftmaxCrossEntropyWithLogits(), np.eye(5)[LABELS.clip(0)]),
    (lambda: nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"), LABELS.clip(0)),
    (lambda: nn.NLLLoss(WEIGHT), LABELS),
    (lambda: nn.BCEWithLogitsLoss(pos_weight=WEIGHT), PROBS),
    (lambda: nn.MSELoss(), PROBS),
    (lambda: nn.L1Loss("sum"), PROBS),
]


@pytest.mark.parametrize("k", range(len(CELLS)))
@pytest.mark.parametrize("level", ["O0", "O2"])
def test_cells_compiled_equal_eager_and_gradients(k, level):
    make, labels = CELLS[k]
    cell = make()
    eager = cell(LOGITS, labels)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ms.GraphjitWarning)
        compiled = ms.jit(cell, jit_config=ms.JitConfig(jit_level=level))(LOGITS, labels)
        np.testing.assert_allclose(compiled, eager, rtol=1e-12)

        def total(x, t):
            return cell(x, t).sum()
        grad = ms.grad(total)(LOGITS, labels)
    numeric = np.zeros_like(LOGITS)
    for i in np.ndindex(LOGITS.shape):
        d = np.zeros_like(LOGITS)
        d[i] = 1e-6
        numeric[i] = (total(LOGITS + d, labels) - total(LOGITS - d, labels)) / 2e-6
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-7)


def test_loss_cell_weight_is_not_a_parameter():
    assert nn.CrossEntropyLoss(WEIGHT).trainable_params() == []


@pytest.mark.parametrize("level,exec_mode", [("O0", "auto"), ("O2", "auto"), ("O1", "no_sink")])
def test_train_one_step_cell_jitted_equals_eager(level, exec_mode):
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(5, 3)

        def construct(self, x):
            return self.dense(x)

    def build():
        ms.set_seed(4)
        net = Net()
        opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
        return net, nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()), opt, sens=2.0)
    x, y = LOGITS.astype(np.float32), LABELS.clip(0)
    eager_net, eager_step = build()
    net, step = build()
    jitted = ms.jit(step, jit_config=ms.JitConfig(jit_level=level, exec_mode=exec_mode))
    for _ in range(4):
        np.testing.assert_allclose(jitted(x, y), eager_step(x, y), rtol=1e-6)
    for a, b in zip(net.trainable_params(), eager_net.trainable_params()):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert [n for n, _ in step.parameters_and_names()][:2] == ["dense.weight", "dense.bias"]
    assert step.network.backbone_network is net
