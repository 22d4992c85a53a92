"""Iterators over a pipeline (`create_tuple_iterator`, `create_dict_iterator`, `for row in ds`):
each epoch runs the pipeline in a background thread (the first starts when the iterator is
created), at most `config.get_prefetch_size()` rows ahead (at least one block), and hands the rows
out in order, as Tensors or NumPy arrays (strings and bytes are always NumPy arrays, as MindSpore gives them)."""

from __future__ import annotations

import numbers

import numpy as np

from . import config
from ..tensor import Tensor
from .parallel import Prefetcher


class _Iterator:
    def __init__(self, dataset, make_context, columns, num_epochs, output_numpy, do_copy):
        if isinstance(num_epochs, bool) or not isinstance(num_epochs, numbers.Integral) or \
                (num_epochs < 1 and num_epochs != -1):
            raise ValueError(f"num_epochs must be a positive int or -1, got {num_epochs!r}")
        if not isinstance(output_numpy, bool):
            raise TypeError("output_numpy must be a bool")
        self.dataset, self.num_epochs = dataset, int(num_epochs)
        self.output_numpy, self.do_copy = output_numpy, do_copy
        self.names = dataset.get_col_names()
        self.picked = [self.names.index(c) for c in columns] if columns else list(range(len(self.names)))
        self.context = make_context(dataset)
        self.epoch, self._producer, self._rows, self._finished = 0, None, iter(()), False
        self._start_epoch()      # the first epoch starts computing now, as MindSpore's pipeline does

    def __iter__(self):
        return self

    def _start_epoch(self):
        root, context = self.dataset, self.context
        self._producer = Prefetcher(lambda: root._blocks(context), config.get_prefetch_size())

    def _next_row(self):
        while True:
            row = next(self._rows, None)
            if row is not None:
                return row
            if self._producer is None:
                if self._finished or (self.num_epochs != -1 and self.epoch >= self.num_epochs):
                    raise StopIteration
                self._start_epoch()
            try:
                block = next(self._producer)
            except StopIteration:
                self._producer = None
                self.epoch += 1
                raise
            except BaseException:
                self._producer, self._finished = None, True
                raise
            columns = [block.columns[k] for k in self.picked]
            self._rows = zip(*columns) if columns else iter([()] * block.size)

    def _convert(self, array) -> object:
        array = np.asarray(array)
        if self.output_numpy or array.dtype.kind in "SUO":   # strings and bytes stay NumPy, as in MindSpore
            return array
        return array.view(Tensor)

    def stop(self):
        if self._producer is not None:
            self._producer.close()
            self._producer = None
        self._finished = True

    def __del__(self):
        producer = getattr(self, "_producer", None)
        if producer is not None:
            producer.close()


class TupleIterator(_Iterator):
    """Rows as lists, one item per column."""

    def __next__(self):
        return [self._convert(a) for a in self._next_row()]


class DictIterator(_Iterator):
    """Rows as dicts from column name to value."""

    def __next__(self):
        row = self._next_row()
        return {self.names[k]: self._convert(a) for k, a in zip(self.picked, row)}
