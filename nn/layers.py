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


class _CellSequence(Cell):
    """Cells held in order, named '0', '1', ... (so their parameters are `0.weight`, ...); indexable,
    sized, iterable. `cell_list` is a tuple, replaced (never mutated) when the cells change: compiled
    graphs that unrolled `for cell in self.cell_list` see the change through the cell's epoch bump."""

    def __init__(self, cells=()):
        super().__init__()
        if isinstance(cells, (OrderedDict, dict)):
            for name, cell in cells.items():
                setattr(self, name, _check_cell(cell, type(self).__name__))
        else:
            for k, cell in enumerate(cells):
                setattr(self, str(k), _check_cell(cell, type(self).__name__))
        object.__setattr__(self, "cell_list", tuple(self._cells.values()))

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if isinstance(value, Cell) and "cell_list" in self.__dict__:
            object.__setattr__(self, "cell_list", tuple(self._cells.values()))

    def __getitem__(self, index):
        if isinstance(index, slice):
            return type(self)(list(self.cell_list[index]))
        return self.cell_list[index]

    def __len__(self) -> int:
        return len(self.cell_list)

    def __iter__(self):
        return iter(self.cell_list)

    def append(self, cell: Cell) -> "_CellSequence":
        setattr(self, str(len(self)), _check_cell(cell, type(self).__name__))
        return self


class SequentialCell(_CellSequence):
    """Cells applied in order (MindSpore's `nn.SequentialCell(*args)`); built from cells, a list or an
    OrderedDict (whose keys name the cells); indexable and sized."""

    def __init__(self, *args):
        cells = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple, OrderedDict, dict)) else args
        super().__init__(cells)

    def construct(self, x):
        for cell in self.cell_list:
            x = cell(x)
        return x


class CellList(_CellSequence):
    """A list of cells (MindSpore's `nn.CellList(args=None)`): `append`, `extend`, `insert`, indexing,
    `len`, iteration; its cells' parameters are named `0.weight`, `1.bias`, ... It is a container,
    not a layer: call its cells (`for cell in self.layers: x = cell(x)`)."""

    def __init__(self, args=None):
        super().__init__(() if args is None else list(args))

    def extend(self, cells) -> "CellList":
        for cell in cells:
            self.append(cell)
        return self

    def insert(self, index: int, cell: Cell) -> "CellList":
        """Insert `cell` before position `index`; the cells after it are renamed ('2' becomes '3')."""
        cells = list(self.cell_list)
        cells.insert(index, _check_cell(cell, "CellList"))
        self._renumber(cells)
        return self

    def __setitem__(self, index: int, cell: Cell) -> None:
        cells = list(self.cell_list)
        cells[index] = _check_cell(cell, "CellList")
        self._renumber(cells)

    def _renumber(self, cells: list) -> None:
        for name in list(self._cells):
            delattr(self, name)
        for k, c in enumerate(cells):
            setattr(self, str(k), c)

    def construct(self, *inputs):
        raise TypeError("CellList is a container and cannot be called; call its cells")


def _check_cell(cell, owner: str):
    if not isinstance(cell, Cell):
        raise TypeError(f"{owner} takes Cells, not {type(cell).__name__}")
    return cell


class Dropout(Cell):
    """Zero each element with probability `p` and scale the rest by 1 / (1 - p) while training; the
    identity in evaluation mode (MindSpore's `nn.Dropout(keep_prob=0.5, p=None, dtype=float32)`:
    `p`, the drop probability, wins when given; else `p = 1 - keep_prob`). The mask is drawn at every
    call from the stream `graphjit.set_seed` seeds (ops.dropout), compiled or not."""

    def __init__(self, keep_prob: float = 0.5, p=None, dtype=np.float32):
        super().__init__()
        if p is None:
            if not 0 < keep_prob <= 1:
                raise ValueError(f"Dropout: keep_prob must be in (0, 1], not {keep_prob!r}")
            p = 1 - keep_prob
        elif not 0 <= p < 1:
            raise ValueError(f"Dropout: p must be in [0, 1), not {p!r}")
        self.p = float(p)
        self.keep_prob = 1 - self.p

    def construct(self, x):
        return ops.dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class Embedding(Cell):
    """A lookup table (MindSpore's `nn.Embedding(vocab_size, embedding_size, use_one_hot=False,
    embedding_table='normal', dtype=int32, padding_idx=None)`): integer ids of any shape give
    `embedding_table[ids]`, of shape `ids.shape + (embedding_size,)`. The Parameter `embedding_table`
    (vocab_size, embedding_size) defaults to N(0, 0.01^2) ('normal'); row `padding_idx`, if given,
    starts at zero. `use_one_hot=True` computes the same as `one_hot(ids) @ embedding_table`."""

    def __init__(self, vocab_size: int, embedding_size: int, use_one_hot: bool = False, embedding_table="normal",
                 dtype=np.int32, padding_idx=None):
        super().__init__()
        if padding_idx is not None and not -vocab_size <= padding_idx < vocab_size:
            raise ValueError(f"Embedding: padding_idx must be in [-{vocab_size}, {vocab_size}), not {padding_idx}")
        self.vocab_size = vocab_size
        self.embedding_size = embedding_size
        self.use_one_hot = use_one_hot
        self.padding_idx = padding_idx
        self.dtype = dtype
        self.embedding_table = init.initialize(embedding_table, (vocab_size, embedding_size), None, np.float32,
                                               "embedding_table")
        if padding_idx is not None:
            self.embedding_table[padding_idx] = 0

    def construct(self, ids):
        if self.use_one_hot:
            one_hot = (ids[..., None] == np.arange(self.vocab_size)).astype(self.embedding_table.dtype)
            return one_hot @ self.embedding_table
        return self.embedding_table[ids]

    def extra_repr(self) -> str:
        return f"vocab_size={self.vocab_size}, embedding_size={self.embedding_size}, " \
               f"use_one_hot={self.use_one_hot}, padding_idx={self.padding_idx}"
