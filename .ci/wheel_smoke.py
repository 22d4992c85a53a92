"""CI: what a user gets from `pip install graphjit`, run from outside the source tree.

Imports graphjit, checks it is the installed copy, and runs a jitted training step (the seed Network's
loss, its gradients by value_and_grad, one SGD update) against the same step run eagerly.
"""

import os
import sys

import numpy as np

import graphjit as ms
from graphjit import nn

here = os.path.dirname(os.path.abspath(ms.__file__))
assert "site-packages" in here, f"graphjit was imported from {here}, not from the installed wheel"
for folder in ("ops", "common", "nn/optim", "graph/autodiff", "transpiler/lower"):
    assert os.path.isdir(os.path.join(here, folder)), f"the wheel lacks graphjit/{folder}"


class Network(nn.Cell):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.dense_relu_sequential = nn.SequentialCell(nn.Dense(28 * 28, 32), nn.ReLU(), nn.Dense(32, 10))

    def construct(self, x):
        return self.dense_relu_sequential(self.flatten(x))


def train_step_results(jitted: bool):
    ms.set_seed(0)
    model = Network()
    loss_fn = nn.CrossEntropyLoss()
    optimizer = nn.SGD(model.trainable_params(), 1e-2)

    def forward_fn(data, label):
        return loss_fn(model(data), label)

    grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters)

    def train_step(data, label):
        loss, grads = grad_fn(data, label)
        optimizer(grads)
        return loss

    step = ms.jit(train_step) if jitted else train_step
    rng = np.random.default_rng(0)
    data = ms.Tensor(rng.random((8, 1, 28, 28), dtype=np.float32))
    label = ms.Tensor(rng.integers(0, 10, 8).astype(np.int32))
    losses = [float(np.asarray(step(data, label))) for _ in range(3)]
    return losses


eager, compiled = train_step_results(False), train_step_results(True)
assert np.allclose(eager, compiled, rtol=1e-5), (eager, compiled)
assert compiled[-1] < compiled[0], compiled
print(f"installed graphjit {ms.__version__} from {here}: jitted training step equals eager, loss {compiled}")
sys.exit(0)
