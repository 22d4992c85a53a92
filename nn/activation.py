"""Activation layers (`nn.ReLU`, `nn.GELU`, ...) and Dense's `activation=` names.

Each layer's `construct` calls the function of ops/activations.py, the one home of each formula.
"""

from __future__ import annotations

from .. import ops
from .cell import Cell

__all__ = ["ReLU", "ReLU6", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "GELU", "LeakyReLU", "SiLU", "Softplus",
           "get_activation"]


class ReLU(Cell):
    """`max(x, 0)` elementwise (MindSpore's `nn.ReLU()`)."""

    def construct(self, x):
        return ops.relu(x)


class ReLU6(Cell):
    """`min(max(x, 0), 6)` elementwise (MindSpore's `nn.ReLU6()`)."""

    def construct(self, x):
        return ops.relu6(x)


class Sigmoid(Cell):
    """`1 / (1 + exp(-x))` elementwise (MindSpore's `nn.Sigmoid()`)."""

    def construct(self, x):
        return ops.sigmoid(x)


class Tanh(Cell):
    """`tanh(x)` elementwise (MindSpore's `nn.Tanh()`)."""

    def construct(self, x):
        return ops.tanh(x)


class Softmax(Cell):
    """Softmax along `axis` (MindSpore's `nn.Softmax(axis=-1)`)."""

    def __init__(self, axis: int = -1):
        super().__init__()
        self.axis = axis

    def construct(self, x):
        return ops.softmax(x, self.axis)


class LogSoftmax(Cell):
    """Log of the softmax along `axis` (MindSpore's `nn.LogSoftmax(axis=-1)`)."""

    def __init__(self, axis: int = -1):
        super().__init__()
        self.axis = axis

    def construct(self, x):
        return ops.log_softmax(x, self.axis)


class GELU(Cell):
    """Gaussian error linear unit (MindSpore's `nn.GELU(approximate=True)`): by default the tanh
    approximation `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`; `approximate=False` gives the
    exact `x * Phi(x)`."""

    def __init__(self, approximate: bool = True):
        super().__init__()
        self.approximate = "tanh" if approximate else "none"

    def construct(self, x):
        return ops.gelu(x, self.approximate)


class LeakyReLU(Cell):
    """`x` where `x >= 0`, `alpha * x` elsewhere (MindSpore's `nn.LeakyReLU(alpha=0.2)`)."""

    def __init__(self, alpha: float = 0.2):
        super().__init__()
        self.alpha = alpha

    def construct(self, x):
        return ops.leaky_relu(x, self.alpha)


class SiLU(Cell):
    """`x * sigmoid(x)` (MindSpore's `nn.SiLU()`)."""

    def construct(self, x):
        return ops.silu(x)


class Softplus(Cell):
    """`log(1 + exp(beta x)) / beta`, linear above `threshold` (MindSpore's
    `nn.Softplus(beta=1, threshold=20)`)."""

    def __init__(self, beta: float = 1, threshold: float = 20):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def construct(self, x):
        return ops.softplus(x, self.beta, self.threshold)


_BY_NAME = {"relu": ReLU, "relu6": ReLU6, "sigmoid": Sigmoid, "tanh": Tanh, "softmax": Softmax,
            "logsoftmax": LogSoftmax, "gelu": GELU, "leakyrelu": LeakyReLU, "silu": SiLU, "softplus": Softplus}


def get_activation(name):
    """The layer MindSpore's `activation=` names: 'relu', 'relu6', 'sigmoid', 'tanh', 'softmax',
    'logsoftmax', 'gelu', 'leakyrelu', 'silu', 'softplus'; None stays None, a Cell is itself."""
    if name is None or isinstance(name, Cell):
        return name
    if isinstance(name, str) and name.lower() in _BY_NAME:
        return _BY_NAME[name.lower()]()
    raise ValueError(f"unknown activation {name!r}; expected one of {sorted(_BY_NAME)} or a Cell")
