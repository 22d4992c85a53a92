"""Usage 1: `@ms.jit` on a function that builds the network and calls it.

As in MindSpore, `Network()` inside the jitted function runs once, at compile time: the graph
holds that instance (its weights are read at each call), and later calls reuse it rather than
building a new network each time, as the eager function would.
"""

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


@ms.jit  # the decorated function runs as a static graph
def run(x):
    model = Network()
    logits = model(x)
    return logits


if __name__ == "__main__":
    output = run(input)
    print(output)
