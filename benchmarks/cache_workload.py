"""Functions the cache benchmark compiles (in a file: graphjit and Numba both need the source).

`Network` is the tutorial's network, samples/network.py (the tests compile it too), not a copy.
"""

import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "samples"))
from network import Network  # noqa: E402,F401


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


def recurrence(b):
    """A loop that stays a loop (each element needs the one before): at O2 with Numba installed it
    runs as a Numba kernel (docs/numba.md)."""
    x = np.empty_like(b)
    x[0] = b[0]
    for i in range(1, len(b)):
        x[i] = 0.5 * x[i - 1] + b[i]
    return x
