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
