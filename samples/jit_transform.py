"""Usage 2: `ms.jit(run)` as a function transform; call the function it returns."""

import numpy as np

import graphjit as ms
from graphjit import nn, Tensor


class Network(nn.Cell):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.dense_relu_sequential = nn.SequentialCell(
            nn.Dense(28*28, 512),
            nn.ReLU(),
            nn.Dense(512, 512),
            nn.ReLU(),
            nn.Dense(512, 10)
        )

    def construct(self, x):
        x = self.flatten(x)
        logits = self.dense_relu_sequential(x)
        return logits


input = Tensor(np.ones([64, 1, 28, 28]).astype(np.float32))


def run(x):
    model = Network()
    logits = model(x)
    return logits


run_with_jit = ms.jit(run)  # the transform: same function, compiled to a static graph

if __name__ == "__main__":
    output = run_with_jit(input)
    print(output)
