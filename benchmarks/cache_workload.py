"""Functions the cache benchmark compiles (in a file: graphjit and Numba both need the source)."""

import numpy as np

from graphjit import nn


def ident(x):
    return x


def tanh2(x):
    return np.tanh(x) * 2.0


# Module-level arrays: read at each call (never baked in), their dtype and shape guarded per call.
G1, G2, G3, G4 = (np.full((4, 3), float(k)) for k in range(1, 5))


def args4(x, g1, g2, g3, g4):
    return x + g1 + g2 + g3 + g4


def globals4(x):
    return x + G1 + G2 + G3 + G4


class Network(nn.Cell):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.dense_relu_sequential = nn.SequentialCell(
            nn.Dense(28 * 28, 512), nn.ReLU(), nn.Dense(512, 512), nn.ReLU(), nn.Dense(512, 10))

    def construct(self, x):
        x = self.flatten(x)
        return self.dense_relu_sequential(x)
