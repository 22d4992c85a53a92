"""The layers: plain NumPy-style `construct` methods compiled by the same transpiler as user code."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from .. import ops
from . import init
from .activation import ReLU, Sigmoid, Softmax, Tanh, get_activation  # noqa: F401  (nn.layers.ReLU stays importable)
from .cell import Cell


class Dense(Cell):
    """`y = activation(x @ weight.T + bias)`, weight of shape (out_channels, in_channels).

    MindSpore's `nn.Dense(in_channels, out_channels, weight_init=None, bias_init=None, has_bias=True,
    activation=None, dtype=float32)`: the weight defaults to `HeUniform(math.sqrt(5))`, the bias to
    U(-1/sqrt(in_channels), 1/sqrt(in_channels)). `weight_init`/`bias_init` take an initializer
    (`Normal(0.01)`, `XavierUniform()`, ...), its name ('normal', 'zeros', 'he_uniform',
    'xavier_uniform', 'truncatedNormal', ...), a number or an array/Tensor of the weight's shape
    (nn/init.py). `activation` is a Cell or a name ('relu', 'gelu', 'softmax', ...).
    """

    def __init__(self, in_channels: int, out_channels: int, weight_init=None, bias_init=None,
                 has_bias: bool = True, activation=None, dtype=np.float32):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.has_bias = has_bias
        self.weight = init.initialize(weight_init, (out_channels, in_channels), in_channels, dtype, "weight")
        if has_bias:
            if bias_init is None:
                self.bias = init.uniform((out_channels,), 1.0 / np.sqrt(max(in_channels, 1)), dtype, "bias")
            else:
                self.bias = init.initialize(bias_init, (out_channels,), in_channels, dtype, "bias")
        self.activation = get_activation(activation)

    def construct(self, x):
        x = x @ self.weight.T
        if self.has_bias:
            x = x + self.bias
        if self.activation is not None:
            x = self.activation(x)
        return x

    def extra_repr(self) -> str:
        return f"input_channels={self.in_channels}, output_channels={self.out_channels}, has_bias={self.has_bias}"


class Flatten(Cell):
    """Keep the first `start_dim` axes, flatten the rest (MindSpore: start_dim=1, end_dim=-1)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        if end_dim != -1:
            raise ValueError("Flatten supports end_dim=-1 only")
        self.start_dim = start_dim

    def construct(self, x):
        return x.reshape(x.shape[:self.start_dim] + (-1,))


class SequentialCell(Cell):
    """Cells applied in order; built from a list or an OrderedDict; indexable and sized."""

    def __init__(self, *args):
        super().__init__()
        cells = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple, OrderedDict, dict)) else args
        if isinstance(cells, (OrderedDict, dict)):
            for name, cell in cells.items():
                setattr(self, name, _check_cell(cell))
        else:
            for k, cell in enumerate(cells):
                setattr(self, str(k), _check_cell(cell))
        # a tuple, replaced (never mutated) when a cell is added: compiled graphs that unrolled
        # `for cell in self.cell_list` see the change through the cell's epoch bump
        object.__setattr__(self, "cell_list", tuple(self._cells.values()))

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if isinstance(value, Cell) and "cell_list" in self.__dict__:
            object.__setattr__(self, "cell_list", tuple(self._cells.values()))

    def __getitem__(self, index):
        if isinstance(index, slice):
            return SequentialCell(self.cell_list[index])
        return self.cell_list[index]

    def __len__(self) -> int:
        return len(self.cell_list)

    def __iter__(self):
        return iter(self.cell_list)

    def append(self, cell: Cell) -> None:
        setattr(self, str(len(self)), _check_cell(cell))

    def construct(self, x):
        for cell in self.cell_list:
            x = cell(x)
        return x


def _check_cell(cell):
    if not isinstance(cell, Cell):
        raise TypeError(f"SequentialCell takes Cells, not {type(cell).__name__}")
    return cell


