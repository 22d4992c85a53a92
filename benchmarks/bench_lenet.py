"""Benchmark: one LeNet-5 training step (forward, backward, SGD update), graphjit against hand-written NumPy.

Side by side in one process, for MindSpore's LeNet5 (Conv2d(1, 6, 5, pad_mode='valid') -> ReLU ->
MaxPool2d(2, 2) -> Conv2d(6, 16, 5, pad_mode='valid') -> ReLU -> MaxPool2d(2, 2) -> Flatten ->
Dense(400, 120) -> ReLU -> Dense(120, 84) -> ReLU -> Dense(84, 10)) on a batch of 64 float32 32x32
images with integer labels, softmax cross-entropy and plain SGD, all starting from the same weights:

  * hand-written NumPy: forward and backward written out by hand, im2col convolutions (the windows
    view copied to columns, one matrix product; col2im adds the columns back one kernel offset at a
    time), max pooling by strided slices, then `w -= lr * dw`;
  * graphjit GRAPH: `value_and_grad(forward_fn, None, net.trainable_params())` and the SGD update in
    one function jitted (the default level O1, and O2): forward, backward and update are one
    generated NumPy function;
  * graphjit PYNATIVE: the same step as plain Python (the gradient function compiles its own
    forward and backward pass, the update runs eagerly).

Rounds are interleaved (the first variant rotating) with the garbage collector off; figures are
medians over rounds of the per-step time. Gradients are checked against the hand-written ones first.
BLAS is pinned to one thread (set before NumPy loads) unless the environment says otherwise.

Target printed next to the figures: graphjit GRAPH (O1, what `@jit` gives) <= 1.3x hand-written.

    python benchmarks/bench_lenet.py            # full run, about a minute
    python benchmarks/bench_lenet.py --quick    # smoke run for tests
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("GRAPHJIT_CACHE", "0")

import argparse  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402

import graphjit as ms  # noqa: E402
from graphjit import nn  # noqa: E402
from bench_grad import cross_entropy, dense_head, interleaved, print_steps  # noqa: E402  (the MLP head, the timing)

BATCH, LR, TARGET = 64, 0.01, 1.3
windows = np.lib.stride_tricks.sliding_window_view


class LeNet5(nn.Cell):
    """MindSpore's LeNet5 (model zoo), unchanged."""

    def __init__(self, num_class=10, num_channel=1):
        super().__init__()
        self.conv1 = nn.Conv2d(num_channel, 6, 5, pad_mode='valid')
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode='valid')
        self.fc1 = nn.Dense(16 * 5 * 5, 120)
        self.fc2 = nn.Dense(120, 84)
        self.fc3 = nn.Dense(84, num_class)
        self.relu = nn.ReLU()
        self.max_pool2d = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()

    def construct(self, x):
        x = self.max_pool2d(self.relu(self.conv1(x)))
        x = self.max_pool2d(self.relu(self.conv2(x)))
        x = self.flatten(x)
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return self.fc3(x)


def graphjit_steps(net, jit_level: str = "O1"):
    """(GRAPH step jitted at `jit_level`, PYNATIVE step, the gradient function)."""
    params = net.trainable_params()

    def forward_fn(data, label):
        return cross_entropy(net(data), label)

    grad_fn = ms.value_and_grad(forward_fn, None, params)

    def train_step(data, label):
        loss, grads = grad_fn(data, label)
        for p, g in zip(params, grads):
            p -= LR * g
        return loss

    return ms.jit(train_step, jit_config=ms.JitConfig(jit_level=jit_level)), train_step, grad_fn


# --- hand-written NumPy ------------------------------------------------------------------------
def conv_forward(x, w):
    """Valid, stride-1 convolution by im2col: columns (C*kH*kW, N*OH*OW), one product."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = h - kh + 1, wd - kw + 1
    cols = windows(x, (kh, kw), axis=(2, 3)).transpose(1, 4, 5, 0, 2, 3).reshape(c * kh * kw, n * oh * ow)
    return (w.reshape(o, -1) @ cols).reshape(o, n, oh, ow).transpose(1, 0, 2, 3), cols


def conv_backward(dout, cols, w, x_shape, need_dx: bool):
    """(dx or None, dw); col2im adds the columns back one kernel offset at a time."""
    o, c, kh, kw = w.shape
    n, _, oh, ow = dout.shape
    d2 = dout.transpose(1, 0, 2, 3).reshape(o, -1)
    dw = (d2 @ cols.T).reshape(w.shape)
    if not need_dx:
        return None, dw
    dcols = (w.reshape(o, -1).T @ d2).reshape(c, kh, kw, n, oh, ow)
    dx = np.zeros(x_shape, dout.dtype)
    for i in range(kh):
        for j in range(kw):
            dx[:, :, i:i + oh, j:j + ow] += dcols[:, i, j].transpose(1, 0, 2, 3)
    return dx, dw


OFFSETS = ((0, 0), (0, 1), (1, 0), (1, 1))


def pool_forward(x):
    """2x2, stride 2 max pooling by strided slices."""
    out = x[:, :, 0::2, 0::2]
    for i, j in OFFSETS[1:]:
        out = np.maximum(out, x[:, :, i::2, j::2])
    return out


def pool_backward(dout, x, out):
    """The gradient goes to the first largest element of each window."""
    dx = np.zeros_like(x)
    taken = np.zeros(out.shape, bool)
    for i, j in OFFSETS:
        hit = (x[:, :, i::2, j::2] == out) & ~taken
        dx[:, :, i::2, j::2] = np.where(hit, dout, 0)
        taken |= hit
    return dx


def hand_written_grads(weights, x, labels):
    """(loss, gradients in trainable_params order)."""
    w1, w2, *dense = weights
    a1, cols1 = conv_forward(x, w1)
    r1 = np.maximum(a1, 0)
    p1 = pool_forward(r1)
    a2, cols2 = conv_forward(p1, w2)
    r2 = np.maximum(a2, 0)
    p2 = pool_forward(r2)
    loss, head_grads, dh0 = dense_head(dense, p2.reshape(x.shape[0], -1), labels, input_grad=True)
    dp2 = dh0.reshape(p2.shape)
    dr2 = pool_backward(dp2, r2, p2)
    dr2[a2 <= 0] = 0
    dp1, dw2 = conv_backward(dr2, cols2, w2, p1.shape, True)
    dr1 = pool_backward(dp1, r1, p1)
    dr1[a1 <= 0] = 0
    _, dw1 = conv_backward(dr1, cols1, w1, x.shape, False)
    return loss, [dw1, dw2] + head_grads


def hand_written_step(weights, x, labels):
    loss, grads = hand_written_grads(weights, x, labels)
    for w, g in zip(weights, grads):
        w -= LR * g
    return loss


# --- timing ------------------------------------------------------------------------------------
def check(net, grad_fn, x, labels) -> None:
    """graphjit's loss and gradients equal the hand-written ones at the same weights."""
    weights = [np.array(p) for p in net.trainable_params()]
    loss, grads = grad_fn(x, labels)
    ref_loss, ref_grads = hand_written_grads(weights, x, labels)
    np.testing.assert_allclose(loss, ref_loss, rtol=1e-5)
    for g, r in zip(grads, ref_grads):
        np.testing.assert_allclose(g, r, rtol=1e-3, atol=1e-6)
        assert g.dtype == r.dtype == np.float32


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run (few rounds)")
    opts = parser.parse_args(argv)
    rounds, calls = (3, 1) if opts.quick else (15, 5)

    ms.set_seed(0)
    net = LeNet5()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, 1, 32, 32)).astype(np.float32)
    labels = rng.integers(0, 10, BATCH)
    graph_step, pynative_step, grad_fn = graphjit_steps(net)
    check(net, grad_fn, x, labels)
    weights = [np.array(p) for p in net.trainable_params()]     # the hand-written copy
    o2_step = graphjit_steps(net, "O2")[0]
    variants = {"hand-written NumPy (im2col)": lambda: hand_written_step(weights, x, labels),
                "graphjit GRAPH (jit, O1)": lambda: graph_step(x, labels),
                "graphjit GRAPH (jit O2)": lambda: o2_step(x, labels),
                "graphjit PYNATIVE": lambda: pynative_step(x, labels)}
    for fn in variants.values():
        fn()
    medians = interleaved(variants, rounds, calls)
    base = print_steps("LeNet-5 training step (forward + backward + SGD)", medians, rounds, calls)
    ratio = medians["graphjit GRAPH (jit, O1)"] / base
    print(f"target: GRAPH {ratio:.2f}x <= {TARGET}x hand-written {'met' if ratio <= TARGET else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
