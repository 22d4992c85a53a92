"""Sources from Python data: `GeneratorDataset` (a generator function, an iterable, or a
random-access object) and `NumpySlicesDataset` (arrays sliced along their first axis), and the
base of every random-access source (a sampler picks its rows)."""

from __future__ import annotations

import copy
import numbers

import numpy as np

from . import config
from .columns import Block, from_rows, stack, to_array
from .datasets import Dataset, column_list, worker_count
from .dtypes import to_numpy_dtype
from .errors import DatasetError
from .parallel import ordered_map
from .samplers import SubsetRandomSampler, SubsetSampler, select_sampler


class MappableSource(Dataset):
    """A source whose rows are read by index: `_num_rows()` and `_read(ids)` (the columns of those
    rows); its sampler, chosen from `num_samples`, `shuffle`, `sampler`, `num_shards`, `shard_id`
    as MindSpore chooses, gives the ids of each pass."""

    def _init_sampler(self, num_samples, shuffle, sampler, num_shards, shard_id, num_parallel_workers):
        if shuffle is not None and not isinstance(shuffle, bool):
            raise TypeError(f"shuffle must be a bool or None, got {shuffle!r}")
        if num_samples is not None and (isinstance(num_samples, bool) or not isinstance(num_samples, numbers.Integral)
                                        or num_samples < 0):
            raise ValueError(f"num_samples must be a non-negative int, got {num_samples!r}")
        self.sampler = select_sampler(num_samples, sampler, shuffle, num_shards, shard_id)
        self.shuffle_flag, self.explicit_sampler = shuffle, sampler is not None or num_shards is not None
        self.workers = worker_count(num_parallel_workers)

    def _num_rows(self) -> int:
        raise NotImplementedError

    def _read(self, ids: np.ndarray) -> list:
        raise NotImplementedError

    def _start_iterator(self):
        self.sampler._start_iterator()

    def _size(self):
        return self.sampler._size(self._num_rows())

    row_bytes = None        # the size of one row, when every row has the same
    max_block_rows = None   # a source of large, ragged rows reads fewer at once

    def _blocks(self, ctx):
        epoch = ctx.start_pass(self)
        ids = self.sampler._indices(self._num_rows(), ctx.rng(self, epoch), epoch)
        start = 0
        for size in block_sizes(len(ids), self.row_bytes, self.max_block_rows):
            chunk = ids[start:start + size]
            yield Block(self._col_names(), self._read(chunk), start, len(chunk))
            start += size

    def _split_source(self, sizes, randomize):
        if self.explicit_sampler:
            raise DatasetError(f"split: {type(self).__name__} uses a sampler or shards; split it before sharding, "
                               "then give each split its sampler")
        n = self._num_rows()
        if randomize:
            seed = config.get_seed() if config.seed_was_set() else config.entropy_seed()
            order = np.random.default_rng([seed]).permutation(n)
        else:
            order = np.arange(n)
        splits, start = [], 0
        for size in sizes:
            part = copy.deepcopy(self)
            ids = order[start:start + size].tolist()
            part.sampler = SubsetRandomSampler(ids) if self.shuffle_flag is not False else SubsetSampler(ids)
            splits.append(part)
            start += size
        return splits

    def add_sampler(self, new_sampler):
        new_sampler.add_child(self.sampler)
        self.sampler = new_sampler

    def use_sampler(self, new_sampler):
        self.sampler = new_sampler
        self._cached_size = None


BLOCK_BYTES = 8 << 20       # a block of fixed-size rows holds at most about this many bytes
FIRST_BLOCK_ROWS = 64       # blocks grow from this size, so that the first rows come soon


def block_sizes(total: int, row_bytes=None, cap=None):
    """Rows per block for a pass of `total` rows: 64, 128, ... up to `config.get_block_rows()`
    (and to about 8 MB of fixed-size rows, and to `cap`)."""
    limit = config.get_block_rows()
    if row_bytes:
        limit = min(limit, max(1, BLOCK_BYTES // row_bytes))
    if cap:
        limit = min(limit, cap)
    size, done = min(FIRST_BLOCK_ROWS, limit), 0
    while done < total:
        step = min(size, total - done)
        yield step
        done += step
        size = min(size * 2, limit)


def convert_row(row, names: list, types, where: str, number: int) -> tuple:
    """A source's row as a tuple of arrays of its own, checked against the column names and types."""
    if isinstance(row, dict):
        items = tuple(row.values())
    elif isinstance(row, (tuple, list)):
        items = tuple(row)
    else:
        items = (row,)
    if len(items) != len(names):
        raise DatasetError(f"{where}: row {number} has {len(items)} column(s) but column_names names "
                           f"{len(names)} ({', '.join(names)})")
    arrays = []
    for k, item in enumerate(items):
        try:
            array = to_array(item)
        except Exception as exc:
            raise DatasetError(f"{where}: column '{names[k]}', row {number} is not array-like: {exc}") from exc
        if array.dtype == object:
            raise DatasetError(f"{where}: column '{names[k]}', row {number} is not a NumPy array of numbers or "
                               f"strings (got {type(item).__name__})")
        if types is not None and types[k] is not None and array.dtype != types[k]:
            raise DatasetError(f"{where}: column '{names[k]}', row {number} has dtype {array.dtype} but "
                               f"column_types says {types[k]}")
        arrays.append(array)
    return tuple(arrays)


class GeneratorDataset(MappableSource):
    """Rows from Python: `source` is a random-access object (`__getitem__` and `__len__`: read by
    index, shuffled by default), a generator function (called each epoch) or an iterable (iterated
    each epoch). A row is a tuple of arrays (or of numbers, strings), one per column."""

    def __init__(self, source, column_names=None, column_types=None, schema=None, num_samples=None,
                 num_parallel_workers=1, shuffle=None, sampler=None, num_shards=None, shard_id=None,
                 python_multiprocessing=True, max_rowsize=None):
        if schema is not None:
            raise ValueError("GeneratorDataset: schema is not supported by graphjit; give column_names "
                             "(and column_types)")
        self.names = column_list(column_names, "column_names", allow_none=False)
        if len(set(self.names)) != len(self.names):
            raise ValueError(f"column_names {self.names} repeat a name")
        self.types = None
        if column_types is not None:
            if not isinstance(column_types, (list, tuple)) or len(column_types) != len(self.names):
                raise ValueError("column_types must be a list with one dtype per column name")
            self.types = [None if t is None else to_numpy_dtype(t, "column_types") for t in column_types]
        self.source = source
        self.random_access = hasattr(source, "__getitem__") and hasattr(source, "__len__")
        if self.random_access:
            self._init_sampler(num_samples, shuffle, sampler, num_shards, shard_id, num_parallel_workers)
        else:
            if not callable(source) and not hasattr(source, "__iter__"):
                raise TypeError("GeneratorDataset: source must be a random-access object (__getitem__ and "
                                "__len__), a generator function or an iterable")
            for name, value in (("sampler", sampler), ("num_shards", num_shards), ("shard_id", shard_id)):
                if value is not None:
                    raise ValueError(f"{name} is not supported if source does not have attribute '__getitem__'")
            if shuffle:
                raise ValueError("shuffle is not supported if source does not have attribute '__getitem__'")
            if num_samples is not None and (isinstance(num_samples, bool) or
                                            not isinstance(num_samples, numbers.Integral) or num_samples < 0):
                raise ValueError(f"num_samples must be a non-negative int, got {num_samples!r}")
            self.num_samples = num_samples or None
            self.workers = worker_count(num_parallel_workers)
            self.explicit_sampler, self.shuffle_flag = False, False

    def _col_names(self):
        return self.names

    def _num_rows(self):
        try:
            return len(self.source)
        except Exception as exc:
            raise DatasetError(f"GeneratorDataset: len(source) raised {type(exc).__name__}: {exc}") from exc

    def _size(self):
        if self.random_access:
            return super()._size()
        return None

    def _row_at(self, i: int) -> tuple:
        try:
            row = self.source[i]
        except Exception as exc:
            raise DatasetError(f"GeneratorDataset: source[{i}] raised {type(exc).__name__}: {exc}") from exc
        return convert_row(row, self.names, self.types, "GeneratorDataset", i)

    def _read(self, ids):
        # num_parallel_workers threads call source[i] side by side (useful when it reads or decodes)
        rows = list(ordered_map(self._row_at, ids.tolist(), self.workers))
        return [stack([r[k] for r in rows]) for k in range(len(self.names))]

    def _start_iterator(self):
        if self.random_access:
            super()._start_iterator()

    def _blocks(self, ctx):
        if self.random_access:
            yield from super()._blocks(ctx)
            return
        ctx.start_pass(self)
        try:
            iterator = iter(self.source() if callable(self.source) and not hasattr(self.source, "__iter__")
                            else self.source)
        except Exception as exc:
            raise DatasetError(f"GeneratorDataset: starting the source raised {type(exc).__name__}: {exc}") from exc
        sizes = block_sizes(self.num_samples or 2**62)
        size, rows, number, start = next(sizes), [], 0, 0
        while self.num_samples is None or number < self.num_samples:
            try:
                row = next(iterator)
            except StopIteration:
                break
            except Exception as exc:
                raise DatasetError(f"GeneratorDataset: the source raised at row {number}: "
                                   f"{type(exc).__name__}: {exc}") from exc
            rows.append(convert_row(row, self.names, self.types, "GeneratorDataset", number))
            number += 1
            if len(rows) == size:
                yield from_rows(self.names, rows, start)
                start, rows, size = number, [], next(sizes, 1)
        if rows:
            yield from_rows(self.names, rows, start)

    def _split_source(self, sizes, randomize):
        if not self.random_access:
            return None
        return super()._split_source(sizes, randomize)

    def split(self, sizes, randomize=True):
        if not self.random_access:
            return Dataset.split(_NonMappable(self), sizes, randomize)
        return super().split(sizes, randomize)


class _NonMappable(Dataset):
    """A view of an iterable source that `split` treats as non-mappable (take/skip)."""

    def __init__(self, child):
        self.children = (child,)

    def _col_names(self):
        return self.children[0]._col_names()

    def _size(self):
        return self.children[0]._size()

    def _blocks(self, ctx):
        return self.children[0]._blocks(ctx)


class NumpySlicesDataset(MappableSource):
    """Rows sliced along the first axis of `data`: a list or an array (one column), a tuple (one
    column per item) or a dict (one column per key, named by the keys)."""

    def __init__(self, data, column_names=None, num_samples=None, num_parallel_workers=1, shuffle=None,
                 sampler=None, num_shards=None, shard_id=None):
        if isinstance(data, dict):
            names, columns = [str(k) for k in data], list(data.values())
        elif isinstance(data, tuple):
            names, columns = None, list(data)
        elif isinstance(data, (list, np.ndarray)) or hasattr(data, "__array__"):
            names, columns = None, [data]
        else:
            raise TypeError(f"NumpySlicesDataset: data must be a list, tuple, dict or array, got {type(data).__name__}")
        arrays = []
        for k, column in enumerate(columns):
            array = np.array(column.asnumpy() if hasattr(column, "asnumpy") else column)
            if array.ndim == 0:
                raise ValueError(f"NumpySlicesDataset: column {k} is a scalar; slicing needs a first axis")
            if array.dtype == object:
                raise ValueError(f"NumpySlicesDataset: column {k} is ragged or not numeric; give arrays of one shape")
            arrays.append(array)
        if len({len(a) for a in arrays}) > 1:
            raise ValueError(f"NumpySlicesDataset: the columns have different lengths {[len(a) for a in arrays]}")
        given = column_list(column_names, "column_names")
        if given is not None:
            if len(given) != len(arrays):
                raise ValueError(f"NumpySlicesDataset: {len(given)} column_names for {len(arrays)} columns")
            names = given
        self.names = names or [f"column_{k}" for k in range(len(arrays))]
        self.arrays = arrays
        self.row_bytes = sum(a[0].nbytes for a in arrays) if len(arrays[0]) else None
        self._init_sampler(num_samples, shuffle, sampler, num_shards, shard_id, num_parallel_workers)

    def _col_names(self):
        return self.names

    def _num_rows(self):
        return len(self.arrays[0])

    def _read(self, ids):
        return [a[ids] for a in self.arrays]


__all__ = ["GeneratorDataset", "NumpySlicesDataset", "MappableSource"]
