"""Blocks: how rows travel through a pipeline. A block holds consecutive rows of every column; a
column is one stacked array (rows of one shape and dtype, row k is `column[k]`) or a list of
per-row arrays (ragged rows). Vectorized transforms run on stacked columns at once."""

from __future__ import annotations

import dataclasses

import numpy as np


@dataclasses.dataclass
class Block:
    names: list            # column names, in order
    columns: list          # one stacked ndarray or list of arrays per name
    start: int             # index of the first row in its operation's output, this epoch
    size: int

    def column(self, name: str):
        return self.columns[self.names.index(name)]

    def rows(self):
        """The rows as tuples of arrays."""
        return list(zip(*(list(c) for c in self.columns))) if self.columns else [()] * self.size


def is_stacked(column) -> bool:
    return isinstance(column, np.ndarray)


def stack(arrays: list):
    """One array of the rows when they share shape and dtype, else the list itself."""
    if not arrays:
        return arrays
    first = arrays[0]
    if all(a.shape == first.shape and a.dtype == first.dtype for a in arrays) and first.dtype != object:
        return np.stack(arrays)
    return list(arrays)


def as_list(column) -> list:
    return list(column)


def slice_column(column, start: int, stop: int):
    return column[start:stop]


def concat_columns(parts: list):
    """Rows of several column pieces, in order, stacked when they agree."""
    if len(parts) == 1:
        return parts[0]
    if all(is_stacked(p) for p in parts) and len({(p.shape[1:], p.dtype) for p in parts}) == 1:
        return np.concatenate(parts)
    rows = []
    for p in parts:
        rows.extend(p)
    return stack(rows)


def from_rows(names: list, rows: list, start: int) -> Block:
    columns = [stack([row[k] for row in rows]) for k in range(len(names))]
    return Block(list(names), columns, start, len(rows))


def to_array(value) -> np.ndarray:
    """A row item as an array of its own (a copy: the pipeline owns what it passes on), Python
    ints as int64 and floats as float64, as MindSpore converts them."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if hasattr(value, "asnumpy"):
        return np.array(value.asnumpy())
    return np.array(value)
