"""Functions the cache benchmark compiles (in a file: graphjit and Numba both need the source)."""

import numpy as np

from graphjit import nn


def ident(x):
    return x


def tanh2(x):
    return np.tanh(x) * 2.0


class Network(nn.Cell):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.dense_relu_sequential = nn.SequentialCell(
            nn.Dense(28 * 28, 512), nn.ReLU(), nn.Dense(512, 512), nn.ReLU(), nn.Dense(512, 10))

    def construct(self, x):
        x = self.flatten(x)
        return self.dense_relu_sequential(x)
