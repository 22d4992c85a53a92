"""`Dataset` and its operations (`map`, `batch`, `padded_batch`, `shuffle`, `repeat`, `take`, `skip`, `project`,
`rename`, `zip`, `concat`, `split`, `filter`): a pipeline is a tree of these nodes, run lazily,
block by block (columns.py), when an iterator (iterators.py) pulls from it."""

from __future__ import annotations

import copy
import numbers

import numpy as np

from . import config
from .columns import Block, concat_columns, from_rows, is_stacked, stack, to_array
from .errors import DatasetError
from .iterators import DictIterator, TupleIterator
from .parallel import ordered_map
from .transform_base import Transform, flatten_operations, operation_name, run_operation


def column_list(value, what: str, allow_none: bool = True):
    if value is None:
        if allow_none:
            return None
        raise TypeError(f"{what} is required")
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        if not value:
            raise ValueError(f"{what} must not be empty")
        return list(value)
    raise TypeError(f"{what} must be a str or a list of str, got {value!r}")


def checked_count(value, what: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{what} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{what} must be >= {minimum}, got {value}")
    return int(value)


def worker_count(value) -> int:
    return config.get_num_parallel_workers() if value is None else checked_count(value, "num_parallel_workers", 1)


def output_order(names: list, inputs: list, outputs: list) -> list:
    """Column order after an operation replaced `inputs` by `outputs` (MindSpore's rule): the same
    number of columns are renamed in place; otherwise the outputs come first, then the others."""
    if len(inputs) == len(outputs):
        mapping = dict(zip(inputs, outputs))
        return [mapping.get(n, n) for n in names]
    return list(outputs) + [n for n in names if n not in inputs]


class RunContext:
    """One iterator's run: the seed of its random choices and how many passes each node began."""

    def __init__(self, root: "Dataset"):
        self.base = config.get_seed() if config.seed_was_set() else config.entropy_seed()
        self.keys, self.passes = {}, {}
        stack_ = [root]
        while stack_:
            node = stack_.pop()
            if id(node) in self.keys:
                continue
            self.keys[id(node)] = len(self.keys)
            node._start_iterator()
            stack_.extend(reversed(node.children))

    def start_pass(self, node) -> int:
        k = self.passes.get(id(node), 0)
        self.passes[id(node)] = k + 1
        return k

    def rng(self, node, *extra) -> np.random.Generator:
        return np.random.default_rng([self.base, self.keys.get(id(node), 0), *extra])


class RowStream:
    """Pulls rows from a block iterator in pieces of a chosen size."""

    def __init__(self, blocks, names):
        self.blocks, self.names = blocks, names
        self.pending, self.offset = [], 0      # blocks not fully used; rows of pending[0] used
        self.done = False

    def available(self) -> int:
        return sum(b.size for b in self.pending) - self.offset

    def fill(self, count: int) -> None:
        while not self.done and self.available() < count:
            try:
                block = next(self.blocks)
            except StopIteration:
                self.done = True
                break
            if block.size:
                self.pending.append(block)

    def take(self, count: int):
        """(start row, columns) of the next `count` rows (fewer at the end), or None at the end."""
        self.fill(count)
        if not self.pending:
            return None
        start = self.pending[0].start + self.offset
        pieces = [[] for _ in self.names]
        need = count
        while need and self.pending:
            block = self.pending[0]
            stop = min(block.size, self.offset + need)
            for k, column in enumerate(block.columns):
                pieces[k].append(column[self.offset:stop])
            need -= stop - self.offset
            if stop == block.size:
                self.pending.pop(0)
                self.offset = 0
            else:
                self.offset = stop
        return start, [concat_columns(p) for p in pieces], count - need


class Dataset:
    """A node of a pipeline. Subclasses give `children`, `_col_names()`, `_size()` (None when only
    a run can tell) and `_blocks(ctx)` (one pass over their rows)."""

    children: tuple = ()

    # --- what a node says about itself ------------------------------------------------------
    def _col_names(self) -> list:
        raise NotImplementedError

    def _size(self):
        raise NotImplementedError

    def _blocks(self, ctx: RunContext):
        raise NotImplementedError

    def _start_iterator(self) -> None:
        """Called for each node when an iterator over a tree holding it is created."""

    def _batch_size(self) -> int:
        return self.children[0]._batch_size() if self.children else 1

    def _repeat_count(self) -> int:
        return self.children[0]._repeat_count() if self.children else 1

    # --- iterators and properties ------------------------------------------------------------
    def create_tuple_iterator(self, columns=None, num_epochs=-1, output_numpy=False, do_copy=True):
        """An iterator of rows as lists of Tensors (NumPy arrays with `output_numpy=True`), for up
        to `num_epochs` epochs (-1: any number); `columns` picks and orders the columns."""
        columns = column_list(columns, "columns")
        if columns:
            self._check_columns(columns, "create_tuple_iterator")
        return TupleIterator(self, RunContext, columns, num_epochs, output_numpy, do_copy)

    def create_dict_iterator(self, num_epochs=-1, output_numpy=False, do_copy=True):
        """An iterator of rows as dicts {column name: Tensor or array}."""
        return DictIterator(self, RunContext, None, num_epochs, output_numpy, do_copy)

    def __iter__(self):
        return iter(self.create_tuple_iterator(num_epochs=1))

    def get_col_names(self) -> list:
        return list(self._col_names())

    def get_dataset_size(self) -> int:
        """The number of rows (batches after `batch`) of one epoch; a pass counts them when the
        pipeline cannot tell without running (an iterable source, `filter`, a callable batch size)."""
        if getattr(self, "_cached_size", None) is None:
            size = self._size()
            if size is None:
                ctx = RunContext(self)
                size = sum(block.size for block in self._blocks(ctx))
            self._cached_size = size
        return self._cached_size

    def _first_row(self):
        ctx = RunContext(self)
        blocks = self._blocks(ctx)
        try:
            for block in blocks:
                if block.size:
                    return [np.asarray(c[0]) for c in block.columns]
        finally:
            blocks.close()
        raise DatasetError(f"{type(self).__name__}: the dataset has no rows, so no shapes or types")

    def output_shapes(self, estimate=False) -> list:
        return [list(a.shape) for a in self._first_row()]

    def output_types(self) -> list:
        return [a.dtype for a in self._first_row()]

    def get_batch_size(self) -> int:
        return self._batch_size()

    def get_repeat_count(self) -> int:
        return self._repeat_count()

    def get_class_indexing(self) -> dict:
        return self.children[0].get_class_indexing() if self.children else {}

    def _check_columns(self, columns, operation: str):
        names = self._col_names()
        for column in columns:
            if column not in names:
                raise DatasetError(f"{operation}: column '{column}' is not in the dataset "
                                   f"(its columns: {', '.join(names)})")

    # --- operations -------------------------------------------------------------------------
    def map(self, operations, input_columns=None, output_columns=None, num_parallel_workers=None,
            python_multiprocessing=False, cache=None, callbacks=None, max_rowsize=None, offload=None):
        """Apply `operations` (a transform, a Python callable, or a list of them, run in order) to
        `input_columns` (default: the first column) of every row; the results are named
        `output_columns` (default: the input names)."""
        return MapDataset(self, operations, input_columns, output_columns, num_parallel_workers)

    def batch(self, batch_size, drop_remainder=False, num_parallel_workers=None, per_batch_map=None,
              input_columns=None, output_columns=None, python_multiprocessing=False, max_rowsize=None):
        """Stack `batch_size` consecutive rows into one (a new first axis); `drop_remainder` drops
        a last, smaller batch; `per_batch_map(*column_lists, batch_info)` rewrites each batch first."""
        return BatchDataset(self, batch_size, drop_remainder, num_parallel_workers, per_batch_map,
                            input_columns, output_columns)

    def padded_batch(self, batch_size, drop_remainder=False, num_parallel_workers=None, pad_info=None):
        """`batch`, padding rows of different shapes: `pad_info` maps a column to (shape, value)
        (None dimensions: the longest in the batch); columns not named are padded to the longest
        with 0. With `pad_info=None`, no padding (as `batch`)."""
        return BatchDataset(self, batch_size, drop_remainder, num_parallel_workers, None, None, None, pad_info)

    def shuffle(self, buffer_size):
        """Shuffle with a buffer of `buffer_size` rows (a new order each epoch)."""
        return ShuffleDataset(self, buffer_size)

    def repeat(self, count=None):
        """The rows `count` times (None or -1: without end)."""
        return RepeatDataset(self, count)

    def take(self, count=-1):
        return TakeDataset(self, count)

    def skip(self, count):
        return SkipDataset(self, count)

    def project(self, columns):
        return ProjectDataset(self, columns)

    def rename(self, input_columns, output_columns):
        return RenameDataset(self, input_columns, output_columns)

    def zip(self, datasets):
        if isinstance(datasets, Dataset):
            datasets = (datasets,)
        elif not isinstance(datasets, tuple):
            raise TypeError("zip needs a dataset or a tuple of datasets")
        return ZipDataset((self,) + tuple(datasets))

    def concat(self, datasets):
        if isinstance(datasets, Dataset):
            datasets = [datasets]
        elif not isinstance(datasets, list):
            raise TypeError("concat needs a dataset or a list of datasets")
        return ConcatDataset([self] + list(datasets))

    def __add__(self, datasets):
        return self.concat(datasets)

    def filter(self, predicate, input_columns=None, num_parallel_workers=None):
        """Keep the rows for which `predicate(*columns)` is true."""
        return FilterDataset(self, predicate, input_columns, num_parallel_workers)

    def split(self, sizes, randomize=True):
        """Split into datasets of the given sizes (ints summing to the size, or fractions summing
        to 1); `randomize` picks the rows at random (once: each split keeps its rows every epoch)."""
        total = self.get_dataset_size()
        sizes = split_sizes(sizes, total)
        split_source = getattr(self, "_split_source", None)
        if split_source is not None:
            return split_source(sizes, randomize)
        parent = self
        if randomize:
            parent = ShuffleDataset(self, 10000, reshuffle_each_epoch=False)
        splits, start = [], 0
        for size in sizes:
            splits.append(parent.skip(start).take(size))
            start += size
        return splits

    def __deepcopy__(self, memo):
        clone = copy.copy(self)
        clone._cached_size = None
        return clone


def split_sizes(sizes, total: int) -> list:
    """MindSpore's split sizes: ints summing to `total`, or fractions of it summing to 1."""
    if not isinstance(sizes, (list, tuple)) or not sizes:
        raise TypeError("sizes must be a non-empty list of ints or of floats")
    if all(isinstance(s, numbers.Integral) and not isinstance(s, bool) for s in sizes):
        if any(s <= 0 for s in sizes):
            raise ValueError(f"split: sizes must be positive, got {list(sizes)}")
        if sum(sizes) != total:
            raise ValueError(f"split: sizes {list(sizes)} sum to {sum(sizes)}, not the dataset size {total}")
        return list(sizes)
    if all(isinstance(s, float) for s in sizes):
        if any(not 0 < s <= 1 for s in sizes) or abs(sum(sizes) - 1) > 1e-6:
            raise ValueError(f"split: fractions must be in (0, 1] and sum to 1, got {list(sizes)}")
        rounded = [int(round(s * total)) for s in sizes]
        if any(r == 0 for r in rounded):
            raise RuntimeError(f"split: a split of {list(sizes)} of {total} rows would be empty")
        difference = total - sum(rounded)
        if difference > 0:
            rounded[0] += difference
        elif difference < 0:
            for k, r in enumerate(rounded):
                if r + difference >= 1:
                    rounded[k] = r + difference
                    break
        return rounded
    raise TypeError("sizes must be all ints or all floats")


# --- operations ------------------------------------------------------------------------------

class MapDataset(Dataset):
    def __init__(self, child, operations, input_columns, output_columns, num_parallel_workers):
        self.children = (child,)
        self.operations = flatten_operations(operations)
        names = child._col_names()
        self.input_columns = column_list(input_columns, "input_columns") or names[:1]
        self.output_columns = column_list(output_columns, "output_columns") or list(self.input_columns)
        child._check_columns(self.input_columns, "map")
        self.workers = worker_count(num_parallel_workers)
        order = output_order(names, self.input_columns, self.output_columns)
        if len(set(order)) != len(order):
            raise ValueError(f"map: output_columns {self.output_columns} repeat a column of the dataset {names}")
        self.names = order

    def _col_names(self):
        return self.names

    def _size(self):
        return self.children[0]._size()

    def _blocks(self, ctx):
        child = self.children[0]
        epoch = ctx.start_pass(self)
        names = child._col_names()
        positions = [names.index(c) for c in self.input_columns]

        random = [getattr(op, "random", False) or not isinstance(op, Transform) for op in self.operations]

        def tasks():
            for k, block in enumerate(child._blocks(ctx)):
                yield block, [ctx.rng(self, epoch, k, j) if r else None for j, r in enumerate(random)]

        def run(task):
            block, rngs = task
            return self._apply(block, names, positions, rngs)
        yield from ordered_map(run, tasks(), self.workers)

    def _apply(self, block: Block, names, positions, rngs) -> Block:
        values = [block.columns[p] for p in positions]
        columns_in = list(self.input_columns)
        for op, rng in zip(self.operations, rngs):
            values = run_operation(op, values, block, columns_in, rng, "map")
            columns_in = [f"output of {operation_name(op)}"] * len(values)
        if len(values) != len(self.output_columns):
            raise DatasetError(f"map: the operations give {len(values)} column(s) for rows {block.start}.."
                               f"{block.start + block.size - 1} but output_columns names {len(self.output_columns)} "
                               f"({', '.join(self.output_columns)})")
        kept = dict(zip(names, block.columns))
        for name in self.input_columns:
            kept.pop(name)
        produced = dict(zip(self.output_columns, values))
        return Block(self.names, [produced[n] if n in produced else kept[n] for n in self.names], block.start,
                     block.size)


class BatchInfo:
    """What `per_batch_map` and a callable batch size are told about the batch being made."""

    def __init__(self, batch_num: int, epoch_num: int):
        self._batch_num, self._epoch_num = batch_num, epoch_num

    def get_batch_num(self) -> int:
        return self._batch_num

    def get_epoch_num(self) -> int:
        return self._epoch_num


class BatchDataset(Dataset):
    def __init__(self, child, batch_size, drop_remainder, num_parallel_workers, per_batch_map, input_columns,
                 output_columns, pad_info=None):
        self.children = (child,)
        self.pad_info = check_pad_info(pad_info, child)
        if not callable(batch_size):
            batch_size = checked_count(batch_size, "batch_size", 1)
        if not isinstance(drop_remainder, bool):
            raise TypeError("drop_remainder must be a bool")
        if per_batch_map is not None and not callable(per_batch_map):
            raise TypeError("per_batch_map must be callable")
        self.batch_size, self.drop_remainder, self.per_batch_map = batch_size, drop_remainder, per_batch_map
        self.workers = worker_count(num_parallel_workers)
        names = child._col_names()
        self.input_columns = column_list(input_columns, "input_columns")
        self.output_columns = column_list(output_columns, "output_columns")
        if self.input_columns:
            child._check_columns(self.input_columns, "batch")
        if per_batch_map is None and (self.input_columns or self.output_columns):
            raise ValueError("batch: input_columns and output_columns need per_batch_map")
        inputs = self.input_columns or names
        self.names = output_order(names, inputs, self.output_columns or inputs) if per_batch_map else list(names)
        self.epochs = 0

    def _col_names(self):
        return self.names

    def _batch_size(self):
        return self.batch_size if isinstance(self.batch_size, int) else -1

    def _size(self):
        if not isinstance(self.batch_size, int):
            return None
        rows = self.children[0]._size()
        if rows is None:
            return None
        return rows // self.batch_size if self.drop_remainder else -(-rows // self.batch_size)

    def _blocks(self, ctx):
        child = self.children[0]
        epoch = ctx.start_pass(self)
        names = child._col_names()
        stream = RowStream(child._blocks(ctx), names)

        def groups():
            number = 0
            while True:
                size = self.batch_size
                if callable(size):
                    size = self.batch_size(BatchInfo(number, epoch))
                    if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size <= 0:
                        raise DatasetError(f"batch: the batch_size function gave {size!r} for batch {number}; "
                                           "it must give a positive int")
                taken = stream.take(size)
                if taken is None:
                    return
                start, columns, count = taken
                if count < size and self.drop_remainder:
                    return
                yield number, start, columns, count
                number += 1

        def make(group):
            number, start, columns, count = group
            return self._make_batch(number, epoch, start, columns, count, names)

        # making a batch of stacked rows is slicing: threads only pay when per_batch_map runs
        workers = self.workers if self.per_batch_map is not None else 1
        pending, limit = [], 1      # batches per block: 1, 2, 4, ... (the first batch comes soon)
        most = max(1, min(64, config.get_block_rows() // max(1, self._batch_size())))
        for number, batch in enumerate(ordered_map(make, groups(), workers)):
            pending.append(batch)
            if len(pending) >= limit:
                yield Block(self.names, [list(c) for c in zip(*pending)], number - len(pending) + 1, len(pending))
                pending, limit = [], min(limit * 2, most)
        if pending:
            yield Block(self.names, [list(c) for c in zip(*pending)], number - len(pending) + 1, len(pending))

    def _make_batch(self, number, epoch, start, columns, count, names) -> tuple:
        if self.per_batch_map is not None:
            inputs = self.input_columns or names
            lists = [list(columns[names.index(c)]) for c in inputs]
            try:
                result = self.per_batch_map(*lists, BatchInfo(number, epoch))
            except Exception as exc:
                raise DatasetError(f"batch: per_batch_map raised on batch {number} (rows {start}..{start + count - 1}): "
                                   f"{type(exc).__name__}: {exc}") from exc
            result = result if isinstance(result, tuple) else (result,)
            outputs = self.output_columns or inputs
            if len(result) != len(outputs):
                raise DatasetError(f"batch: per_batch_map gave {len(result)} column(s) for batch {number} but "
                                   f"{len(outputs)} are named ({', '.join(outputs)})")
            produced = {}
            for name, value in zip(outputs, result):
                rows = [to_array(v) for v in value] if not isinstance(value, np.ndarray) else value
                if len(rows) != count:
                    raise DatasetError(f"batch: per_batch_map gave {len(rows)} rows of column '{name}' for batch "
                                       f"{number} of {count} rows")
                produced[name] = rows if isinstance(rows, np.ndarray) else stack(rows)
            kept = dict(zip(names, columns))
            columns = [produced[n] if n in produced else kept[n] for n in self.names]
        out = []
        for name, column in zip(self.names, columns):
            if self.pad_info is not None:
                out.append(self._pad(name, list(column), start))
            else:
                out.append(column if is_stacked(column) else self._stack(name, column, start))
        return tuple(out)

    def _pad(self, name, rows, start) -> np.ndarray:
        shape, value = self.pad_info.get(name, (None, None))
        ndim = rows[0].ndim
        for k, row in enumerate(rows):
            if row.ndim != ndim:
                raise DatasetError(f"padded_batch: column '{name}', row {start + k} has {row.ndim} dimensions but "
                                   f"row {start} has {ndim}")
        longest = [max(r.shape[d] for r in rows) for d in range(ndim)]
        if shape is not None and len(shape) != ndim:
            raise DatasetError(f"padded_batch: pad_info gives column '{name}' {len(shape)} dimensions, its rows "
                               f"have {ndim}")
        target = [longest[d] if shape is None or shape[d] is None else shape[d] for d in range(ndim)]
        for k, row in enumerate(rows):
            if any(row.shape[d] > target[d] for d in range(ndim)):
                raise DatasetError(f"padded_batch: column '{name}', row {start + k} has shape {row.shape}, larger "
                                   f"than the pad shape {tuple(target)}")
        dtype = rows[0].dtype
        fill = value if value is not None else ("" if dtype.kind in "US" else 0)
        out = np.full((len(rows), *target), fill, dtype=dtype)
        for k, row in enumerate(rows):
            if row.dtype != dtype:
                raise DatasetError(f"padded_batch: column '{name}', row {start + k} has dtype {row.dtype} but row "
                                   f"{start} has {dtype}")
            out[(k, *(slice(0, n) for n in row.shape))] = row
        return out

    @staticmethod
    def _stack(name, rows, start) -> np.ndarray:
        first = rows[0]
        for k, row in enumerate(rows):
            if row.shape != first.shape:
                raise DatasetError(f"batch: column '{name}', row {start + k} has shape {row.shape} but row {start} "
                                   f"(the first of its batch) has shape {first.shape}; rows of a batch need one shape")
            if row.dtype != first.dtype:
                raise DatasetError(f"batch: column '{name}', row {start + k} has dtype {row.dtype} but row {start} "
                                   f"(the first of its batch) has dtype {first.dtype}")
        return np.stack(rows)


def check_pad_info(pad_info, child):
    """padded_batch's pad_info: {column: (shape or None, value)}, every column padded when given."""
    if pad_info is None:
        return None
    if not isinstance(pad_info, dict):
        raise TypeError("pad_info must be a dict {column: (pad_shape, pad_value)}")
    child._check_columns(list(pad_info), "padded_batch")
    checked = {}
    for name, spec in pad_info.items():
        if not isinstance(spec, tuple) or len(spec) != 2:
            raise TypeError(f"pad_info['{name}'] must be a tuple (pad_shape, pad_value)")
        shape, value = spec
        if shape is not None and (not isinstance(shape, (list, tuple)) or not all(
                d is None or (isinstance(d, numbers.Integral) and d >= 0) for d in shape)):
            raise TypeError(f"pad_info['{name}']: pad_shape must be a list of ints or None")
        checked[name] = (None if shape is None else list(shape), value)
    return checked


class ShuffleDataset(Dataset):
    def __init__(self, child, buffer_size, reshuffle_each_epoch=True):
        self.children = (child,)
        self.buffer_size = checked_count(buffer_size, "buffer_size", 2)
        self.reshuffle_each_epoch = reshuffle_each_epoch
        self.fixed_seed = None if reshuffle_each_epoch else (
            config.get_seed() if config.seed_was_set() else config.entropy_seed())

    def _col_names(self):
        return self.children[0]._col_names()

    def _size(self):
        return self.children[0]._size()

    def _blocks(self, ctx):
        epoch = ctx.start_pass(self)
        rng = (np.random.default_rng([self.fixed_seed]) if self.fixed_seed is not None else ctx.rng(self, epoch))
        names, out, produced = self._col_names(), [], 0
        buffer = []
        size = config.get_block_rows()

        def flush(rows):
            nonlocal produced
            block = from_rows(names, rows, produced)
            produced += len(rows)
            return block
        for block in self.children[0]._blocks(ctx):
            rows = block.rows()
            fill = min(len(rows), self.buffer_size - len(buffer))
            buffer.extend(rows[:fill])
            rest = rows[fill:]
            if rest:
                picks = rng.integers(0, self.buffer_size, len(rest))
                for j, row in zip(picks, rest):
                    out.append(buffer[j])
                    buffer[j] = row
            if len(out) >= size:
                yield flush(out)
                out = []
        order = rng.permutation(len(buffer))
        out.extend(buffer[j] for j in order)
        for start in range(0, len(out), size):
            yield flush(out[start:start + size])


class RepeatDataset(Dataset):
    def __init__(self, child, count):
        self.children = (child,)
        if count is None or count == -1:
            self.count = -1
        else:
            self.count = checked_count(count, "count", 1)

    def _col_names(self):
        return self.children[0]._col_names()

    def _repeat_count(self):
        return self.count

    def _size(self):
        size = self.children[0]._size()
        if size is None:
            return None
        if self.count == -1:
            raise DatasetError("get_dataset_size: the dataset repeats without end (repeat() with no count)")
        return size * self.count

    def _blocks(self, ctx):
        ctx.start_pass(self)
        done, produced = 0, 0
        while self.count == -1 or done < self.count:
            rows = 0
            for block in self.children[0]._blocks(ctx):
                yield Block(block.names, block.columns, produced + block.start, block.size)
                rows = max(rows, block.start + block.size)
            produced += rows
            done += 1
            if rows == 0:
                return


class TakeDataset(Dataset):
    def __init__(self, child, count):
        self.children = (child,)
        self.count = -1 if count == -1 else checked_count(count, "count", 1)

    def _col_names(self):
        return self.children[0]._col_names()

    def _size(self):
        child = self.children[0]
        if self.count == -1:
            return child._size()
        if isinstance(child, RepeatDataset) and child.count == -1:
            return self.count
        size = child._size()
        return None if size is None else min(size, self.count)

    def _blocks(self, ctx):
        ctx.start_pass(self)
        left = self.count
        blocks = self.children[0]._blocks(ctx)
        try:
            for block in blocks:
                if left == -1:
                    yield block
                    continue
                if left <= 0:
                    return
                if block.size > left:
                    block = Block(block.names, [c[:left] for c in block.columns], block.start, left)
                left -= block.size
                yield block
        finally:
            blocks.close()


class SkipDataset(Dataset):
    def __init__(self, child, count):
        self.children = (child,)
        self.count = checked_count(count, "count", 0)

    def _col_names(self):
        return self.children[0]._col_names()

    def _size(self):
        size = self.children[0]._size()
        return None if size is None else max(0, size - self.count)

    def _blocks(self, ctx):
        ctx.start_pass(self)
        left = self.count
        for block in self.children[0]._blocks(ctx):
            if left >= block.size:
                left -= block.size
                continue
            if left:
                block = Block(block.names, [c[left:] for c in block.columns], block.start + left, block.size - left)
                left = 0
            yield Block(block.names, block.columns, block.start - self.count, block.size)


class ProjectDataset(Dataset):
    def __init__(self, child, columns):
        self.children = (child,)
        self.columns = column_list(columns, "columns", allow_none=False)
        child._check_columns(self.columns, "project")
        if len(set(self.columns)) != len(self.columns):
            raise ValueError(f"project: columns {self.columns} repeat a name")

    def _col_names(self):
        return list(self.columns)

    def _size(self):
        return self.children[0]._size()

    def _blocks(self, ctx):
        ctx.start_pass(self)
        for block in self.children[0]._blocks(ctx):
            yield Block(list(self.columns), [block.column(c) for c in self.columns], block.start, block.size)


class RenameDataset(Dataset):
    def __init__(self, child, input_columns, output_columns):
        self.children = (child,)
        inputs = column_list(input_columns, "input_columns", allow_none=False)
        outputs = column_list(output_columns, "output_columns", allow_none=False)
        if len(inputs) != len(outputs):
            raise ValueError(f"rename: {len(inputs)} input_columns but {len(outputs)} output_columns")
        child._check_columns(inputs, "rename")
        mapping = dict(zip(inputs, outputs))
        self.names = [mapping.get(n, n) for n in child._col_names()]
        if len(set(self.names)) != len(self.names):
            raise ValueError(f"rename: the new column names {self.names} repeat a name")

    def _col_names(self):
        return self.names

    def _size(self):
        return self.children[0]._size()

    def _blocks(self, ctx):
        ctx.start_pass(self)
        for block in self.children[0]._blocks(ctx):
            yield Block(self.names, block.columns, block.start, block.size)


class ZipDataset(Dataset):
    def __init__(self, datasets):
        for d in datasets:
            if not isinstance(d, Dataset):
                raise TypeError(f"zip: {d!r} is not a dataset")
        self.children = tuple(datasets)
        names = [n for d in datasets for n in d._col_names()]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"zip: column(s) {', '.join(repeated)} are in more than one dataset; rename them first")
        self.names = names

    def _col_names(self):
        return self.names

    def _size(self):
        sizes = [d._size() for d in self.children]
        return None if None in sizes else min(sizes)

    def _batch_size(self):
        return max(d._batch_size() for d in self.children)

    def _repeat_count(self):
        return max(d._repeat_count() for d in self.children)

    def _blocks(self, ctx):
        ctx.start_pass(self)
        streams = [RowStream(d._blocks(ctx), d._col_names()) for d in self.children]
        produced, size = 0, config.get_block_rows()
        while True:
            for s in streams:
                s.fill(size)
            count = min(min(s.available() for s in streams), size)
            if count == 0:
                return
            columns = []
            for s in streams:
                columns.extend(s.take(count)[1])
            yield Block(self.names, columns, produced, count)
            produced += count


class ConcatDataset(Dataset):
    def __init__(self, datasets):
        for d in datasets:
            if not isinstance(d, Dataset):
                raise TypeError(f"concat: {d!r} is not a dataset")
        self.children = tuple(datasets)
        first = datasets[0]._col_names()
        for d in datasets[1:]:
            if d._col_names() != first:
                raise ValueError(f"concat: the datasets have different columns: {first} and {d._col_names()}")

    def _col_names(self):
        return self.children[0]._col_names()

    def _size(self):
        sizes = [d._size() for d in self.children]
        return None if None in sizes else sum(sizes)

    def _blocks(self, ctx):
        ctx.start_pass(self)
        produced = 0
        for d in self.children:
            rows = 0
            for block in d._blocks(ctx):
                yield Block(self._col_names(), block.columns, produced + block.start, block.size)
                rows = max(rows, block.start + block.size)
            produced += rows


class FilterDataset(Dataset):
    def __init__(self, child, predicate, input_columns, num_parallel_workers):
        if not callable(predicate):
            raise TypeError("filter: predicate must be callable")
        self.children = (child,)
        self.predicate = predicate
        self.input_columns = column_list(input_columns, "input_columns") or child._col_names()
        child._check_columns(self.input_columns, "filter")
        self.workers = worker_count(num_parallel_workers)

    def _col_names(self):
        return self.children[0]._col_names()

    def _size(self):
        return None

    def _blocks(self, ctx):
        ctx.start_pass(self)
        produced = 0
        for block in self.children[0]._blocks(ctx):
            values = [block.column(c) for c in self.input_columns]
            keep = []
            for k in range(block.size):
                try:
                    result = self.predicate(*(v[k] for v in values))
                except Exception as exc:
                    raise DatasetError(f"filter: the predicate raised on row {block.start + k} (columns "
                                       f"{', '.join(self.input_columns)}): {type(exc).__name__}: {exc}") from exc
                if np.asarray(result).size != 1:
                    raise DatasetError(f"filter: the predicate gave {np.asarray(result).size} values for row "
                                       f"{block.start + k}; it must give one bool")
                keep.append(bool(np.asarray(result).reshape(())))
            if any(keep):
                index = np.flatnonzero(keep)
                columns = [c[index] if is_stacked(c) else [c[i] for i in index] for c in block.columns]
                yield Block(block.names, columns, produced, len(index))
                produced += len(index)


__all__ = ["Dataset", "BatchInfo", "MapDataset", "BatchDataset", "ShuffleDataset", "RepeatDataset", "TakeDataset",
           "SkipDataset", "ProjectDataset", "RenameDataset", "ZipDataset", "ConcatDataset", "FilterDataset",
           "Transform"]
