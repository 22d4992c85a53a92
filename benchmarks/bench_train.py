"""Benchmark: one training step of the seed MLP (forward, backward, SGD update), batch 64, float32.

Side by side in one process, all from the same weights (each variant trains its own copy):

  * hand-written NumPy: bench_grad's forward + backward by hand, then `w -= lr * g` per weight;
  * graphjit GRAPH: MindSpore's quickstart step, `value_and_grad(forward_fn, None, optimizer.parameters,
    has_aux=True)` of `nn.CrossEntropyLoss` and `optimizer(grads)` of `nn.SGD`, inside `@ms.jit` (O2):
    forward, backward and update compiled into one generated NumPy function;
  * graphjit PYNATIVE: the same step not jitted (the gradient function compiled, the update eager);
  * MindSpore GRAPH mode (when `mindspore` is installed): the same step with MindSpore itself.

Medians of interleaved rounds (bench_grad's loop), BLAS pinned to one thread. The graphjit step is
checked against the hand-written one first: same losses and weights after a few steps.

    python benchmarks/bench_train.py            # full run
    python benchmarks/bench_train.py --quick    # smoke run for tests
"""

from __future__ import annotations

import argparse
import sys

from bench_grad import BATCH, hand_written, interleaved, print_steps  # noqa: E402  (sets the BLAS threads first)

import numpy as np  # noqa: E402

import graphjit as ms  # noqa: E402
from graphjit import nn  # noqa: E402
from bench_network import load_network_class  # noqa: E402

LEARNING_RATE = 1e-2
SPEED_TARGET = 1.15


def hand_written_step(weights, x, labels):
    def step():
        loss, grads = hand_written(weights, x, labels)
        for w, g in zip(weights, grads):
            w -= LEARNING_RATE * g
        return loss
    return step


def graphjit_step(model, jitted: bool):
    loss_fn = nn.CrossEntropyLoss()
    optimizer = nn.SGD(model.trainable_params(), LEARNING_RATE)

    def forward_fn(data, label):
        logits = model(data)
        loss = loss_fn(logits, label)
        return loss, logits
    grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)

    def train_step(data, label):
        (loss, _), grads = grad_fn(data, label)
        optimizer(grads)
        return loss
    return ms.jit(train_step, jit_config=ms.JitConfig(jit_level="O2")) if jitted else train_step


def mindspore_step(weights, x, labels):
    """MindSpore GRAPH mode on the same step; ImportError when MindSpore is not installed."""
    import mindspore
    from mindspore import nn as msnn
    mindspore.set_context(mode=mindspore.GRAPH_MODE, device_target="CPU")
    net = msnn.SequentialCell(msnn.Flatten(), msnn.Dense(784, 512), msnn.ReLU(), msnn.Dense(512, 512), msnn.ReLU(),
                              msnn.Dense(512, 10))
    for p, w in zip(net.trainable_params(), weights):
        p.set_data(mindspore.Tensor(np.array(w)))
    loss_fn = msnn.CrossEntropyLoss()
    optimizer = msnn.SGD(net.trainable_params(), LEARNING_RATE)

    def forward_fn(data, label):
        return loss_fn(net(data), label)
    grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)

    @mindspore.jit
    def train_step(data, label):
        loss, grads = grad_fn(data, label)
        optimizer(grads)
        return loss
    xt, lt = mindspore.Tensor(x), mindspore.Tensor(labels.astype(np.int32))
    return lambda: train_step(xt, lt).asnumpy()


def copies(model_class, seed: int, count: int):
    """`count` models with the same weights."""
    models = []
    for _ in range(count):
        ms.set_seed(seed)
        models.append(model_class())
    return models


def check(model_class, x, labels) -> None:
    """The jitted step and the hand-written one agree over a few steps (losses and weights)."""
    ours, theirs = copies(model_class, 1, 2)
    step = graphjit_step(ours, jitted=True)
    weights = [np.array(p) for p in theirs.trainable_params()]
    reference = hand_written_step(weights, x, labels)
    for _ in range(3):
        np.testing.assert_allclose(step(x, labels), reference(), rtol=1e-5)
    for p, w in zip(ours.trainable_params(), weights):
        np.testing.assert_allclose(p, w, rtol=1e-4, atol=1e-6)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run (few rounds)")
    opts = parser.parse_args(argv)
    rounds, calls = (3, 2) if opts.quick else (15, 10)

    network = load_network_class()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, 1, 28, 28)).astype(np.float32)
    labels = rng.integers(0, 10, BATCH).astype(np.int32)
    check(network, x, labels)

    graph_model, eager_model, hand_model = copies(network, 0, 3)
    weights = [np.array(p) for p in hand_model.trainable_params()]
    graph_step, eager_step = graphjit_step(graph_model, True), graphjit_step(eager_model, False)
    variants = {"hand-written NumPy": hand_written_step(weights, x, labels),
                "graphjit GRAPH (@ms.jit)": lambda: graph_step(x, labels),
                "graphjit PYNATIVE": lambda: eager_step(x, labels)}
    try:
        variants["MindSpore GRAPH (CPU)"] = mindspore_step(weights, x, labels)
    except ImportError:
        print("(mindspore is not installed: its column is skipped)")
    for fn in variants.values():
        fn()
    medians = interleaved(variants, rounds, calls)

    base = print_steps("Seed MLP training step (CrossEntropyLoss + SGD)", medians, rounds, calls)
    ratio = medians["graphjit GRAPH (@ms.jit)"] / base
    print(f"target: GRAPH {ratio:.2f}x <= {SPEED_TARGET}x {'met' if ratio <= SPEED_TARGET else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
