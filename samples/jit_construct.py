"""Usage 3: `@ms.jit` on `Network.construct`: every call of the cell runs its static graph."""

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

    @ms.jit  # compiles construct on the first call for each input signature
    def construct(self, x):
        x = self.flatten(x)
        logits = self.dense_relu_sequential(x)
        return logits


if __name__ == "__main__":
    input = Tensor(np.ones([64, 1, 28, 28]).astype(np.float32))
    model = Network()
    output = model(input)
    print(output)
