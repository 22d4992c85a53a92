"""MindSpore's automatic differentiation tutorial ("Functional Automatic Differentiation") with only the
imports changed: `grad` with `grad_position`, a function with two outputs, `ops.stop_gradient`,
`has_aux`, and the gradients of a Cell's `trainable_params()` with `value_and_grad`.

    python samples/autodiff_tutorial.py

Each gradient function compiles its function with the backward pass (graph/autodiff), in PYNATIVE
mode as in GRAPH mode. `np.random.seed(0)` is added so that runs can be compared.
"""

import numpy as np
import graphjit as ms
from graphjit import nn
from graphjit import ops
from graphjit import Tensor, Parameter

np.random.seed(0)

# Functions and computing graphs
x = ops.ones(5, ms.float32)  # input tensor
y = ops.zeros(3, ms.float32)  # expected output
w = Parameter(Tensor(np.random.randn(5, 3), ms.float32), name='w')  # weight
b = Parameter(Tensor(np.random.randn(3,), ms.float32), name='b')  # bias


def function(x, y, w, b):
    z = ops.matmul(x, w) + b
    loss = ops.binary_cross_entropy_with_logits(z, y, ops.ones_like(z), ops.ones_like(z))
    return loss


loss = function(x, y, w, b)
print(loss)

# Differential functions and gradient computing
grad_fn = ms.grad(function, (2, 3))
grads = grad_fn(x, y, w, b)
print(grads)


# Stop gradient
def function_with_logits(x, y, w, b):
    z = ops.matmul(x, w) + b
    loss = ops.binary_cross_entropy_with_logits(z, y, ops.ones_like(z), ops.ones_like(z))
    return loss, z


grad_fn = ms.grad(function_with_logits, (2, 3))
grads = grad_fn(x, y, w, b)
print(grads)


def function_stop_gradient(x, y, w, b):
    z = ops.matmul(x, w) + b
    loss = ops.binary_cross_entropy_with_logits(z, y, ops.ones_like(z), ops.ones_like(z))
    return loss, ops.stop_gradient(z)


grad_fn = ms.grad(function_stop_gradient, (2, 3))
grads = grad_fn(x, y, w, b)
print(grads)

# Auxiliary data
grad_fn = ms.grad(function_with_logits, (2, 3), has_aux=True)
grads, (z,) = grad_fn(x, y, w, b)
print(grads, z)


# Calculating neural network gradient
# Define model
class Network(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = w
        self.b = b

    def construct(self, x):
        z = ops.matmul(x, self.w) + self.b
        return z


# Instantiate model
model = Network()
# Instantiate loss function
loss_fn = nn.BCEWithLogitsLoss()


# Define forward function
def forward_fn(x, y):
    z = model(x)
    loss = loss_fn(z, y)
    return loss


grad_fn = ms.value_and_grad(forward_fn, None, weights=model.trainable_params())
loss, grads = grad_fn(x, y)
print(grads)
