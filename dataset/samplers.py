"""Samplers: which rows of a random-access source a pass reads, in which order (MindSpore's
semantics: `mindspore.dataset.SequentialSampler`, `RandomSampler`, ...)."""

from __future__ import annotations

import numbers

import numpy as np

from . import config
from .errors import DatasetError

INT64_MAX = 2**63 - 1


def _check_num_samples(num_samples):
    if num_samples is not None:
        if isinstance(num_samples, bool) or not isinstance(num_samples, numbers.Integral):
            raise TypeError(f"num_samples must be integer but was: {num_samples}.")
        if num_samples < 0 or num_samples > INT64_MAX:
            raise ValueError(f"num_samples exceeds the boundary between 0 and {INT64_MAX}(INT64_MAX)!")


class BuiltinSampler:
    """Base of the samplers. `_indices(n, rng, epoch)` gives the row ids of one pass over a source
    of `n` rows; a child sampler (`add_child`) picks first, this sampler picks among its picks."""

    def __init__(self, num_samples=None):
        _check_num_samples(num_samples)
        self.num_samples = num_samples
        self.child_sampler = None

    def add_child(self, sampler):
        if self.child_sampler is not None:
            raise RuntimeError("Cannot add child sampler, this sampler already has a child.")
        if not isinstance(sampler, BuiltinSampler):
            raise TypeError("add_child needs a sampler")
        self.child_sampler = sampler

    def get_child(self):
        return self.child_sampler

    def get_num_samples(self):
        if self.child_sampler is not None:
            child = self.child_sampler.get_num_samples()
            if self.num_samples is not None:
                return self.num_samples if child is None else min(self.num_samples, child)
            return child
        return self.num_samples

    def is_shuffled(self) -> bool:
        return False

    def is_sharded(self) -> bool:
        return self.child_sampler.is_sharded() if self.child_sampler is not None else False

    def _start_iterator(self) -> None:
        """Called once per iterator created over a dataset using this sampler."""
        if self.child_sampler is not None:
            self.child_sampler._start_iterator()

    def _indices(self, n: int, rng: np.random.Generator, epoch: int) -> np.ndarray:
        if self.child_sampler is None:
            return self._own(n, rng, epoch)
        base = self.child_sampler._indices(n, rng, epoch)
        return base[self._own(len(base), rng, epoch)]

    def _size(self, n: int) -> int:
        """How many ids one pass gives, without drawing them."""
        if self.child_sampler is not None:
            n = self.child_sampler._size(n)
        return self._own_size(n)

    def _own(self, n, rng, epoch) -> np.ndarray:
        raise NotImplementedError

    def _own_size(self, n: int) -> int:
        raise NotImplementedError

    def _clamped(self, n: int) -> int:
        return n if not self.num_samples or self.num_samples > n else self.num_samples


class SequentialSampler(BuiltinSampler):
    """Rows `start_index`, `start_index + 1`, ... in order (`num_samples` of them, default all)."""

    def __init__(self, start_index=None, num_samples=None):
        if start_index is not None and (isinstance(start_index, bool) or not isinstance(start_index, numbers.Integral)):
            raise TypeError(f"start_index must be integer but was: {start_index}.")
        if start_index is not None and start_index < 0:
            raise RuntimeError(f"start_index should be no negative, but got {start_index}.")
        self.start_index = start_index
        super().__init__(num_samples)

    def _own_size(self, n):
        start = self.start_index or 0
        if n and start >= n:
            raise DatasetError(f"SequentialSampler: start_index {start} is not below the dataset size {n}")
        return self._clamped(n - start)

    def _own(self, n, rng, epoch):
        start = self.start_index or 0
        return np.arange(start, start + self._own_size(n), dtype=np.int64)


class RandomSampler(BuiltinSampler):
    """Rows in a random order, a new one each epoch; `replacement=True` draws each id
    independently (ids may repeat)."""

    def __init__(self, replacement=False, num_samples=None):
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement must be a boolean value but was: {replacement}.")
        self.replacement = replacement
        super().__init__(num_samples)

    def is_shuffled(self):
        return True

    def _own_size(self, n):
        return self._clamped(n)

    def _own(self, n, rng, epoch):
        count = self._own_size(n)
        if self.replacement:
            return rng.integers(0, n, count, dtype=np.int64) if n else np.zeros(0, np.int64)
        return rng.permutation(n)[:count].astype(np.int64)


class SubsetSampler(BuiltinSampler):
    """The given row ids, in the given order."""

    def __init__(self, indices, num_samples=None):
        _check_num_samples(num_samples)
        if isinstance(indices, numbers.Integral) and not isinstance(indices, bool):
            indices = [indices]
        elif isinstance(indices, str) or not hasattr(indices, "__iter__"):
            raise TypeError(f"Unsupported sampler object of type ({type(indices)})")
        indices = list(indices)
        if num_samples is not None:
            indices = indices[:num_samples]
        for i, item in enumerate(indices):
            if isinstance(item, bool) or not isinstance(item, numbers.Integral):
                raise TypeError(f"{type(self).__name__}: Type of indices element must be int, "
                                f"but got list[{i}]: {item}, type: {type(item)}.")
        self.indices = [int(i) for i in indices]
        super().__init__(num_samples)

    def get_num_samples(self):
        count = super().get_num_samples()
        return len(self.indices) if count is None else min(len(self.indices), count)

    def _own_size(self, n):
        return len(self.indices)

    def _checked(self, n):
        ids = np.asarray(self.indices, dtype=np.int64)
        bad = np.flatnonzero((ids < 0) | (ids >= n))
        if bad.size:
            raise DatasetError(f"{type(self).__name__}: index {ids[bad[0]]} (item {bad[0]}) is out of range "
                               f"for a dataset of {n} rows")
        return ids

    def _own(self, n, rng, epoch):
        return self._checked(n)


class SubsetRandomSampler(SubsetSampler):
    """The given row ids, in a random order, a new one each epoch."""

    def is_shuffled(self):
        return True

    def _own(self, n, rng, epoch):
        return rng.permutation(self._checked(n))


class WeightedRandomSampler(BuiltinSampler):
    """`num_samples` ids drawn with probabilities proportional to `weights` (one per row)."""

    def __init__(self, weights, num_samples=None, replacement=True):
        weights = np.asarray(list(weights), dtype=np.float64)
        if weights.ndim != 1 or weights.size == 0 or (weights < 0).any() or not weights.sum() > 0:
            raise ValueError("weights must be a non-empty list of non-negative numbers, not all zero")
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement must be a boolean value but was: {replacement}.")
        self.weights, self.replacement = weights, replacement
        super().__init__(num_samples)

    def is_shuffled(self):
        return True

    def _own_size(self, n):
        return self.num_samples if self.num_samples else len(self.weights)

    def _own(self, n, rng, epoch):
        if len(self.weights) > n:
            raise DatasetError(f"WeightedRandomSampler: {len(self.weights)} weights for a dataset of {n} rows")
        count = self._own_size(n)
        if not self.replacement and count > np.count_nonzero(self.weights):
            raise DatasetError(f"WeightedRandomSampler: cannot draw {count} distinct rows from "
                               f"{np.count_nonzero(self.weights)} with non-zero weight")
        return rng.choice(len(self.weights), count, replace=self.replacement,
                          p=self.weights / self.weights.sum()).astype(np.int64)


class DistributedSampler(BuiltinSampler):
    """Shard `shard_id` of `num_shards`: rows shard_id, shard_id + num_shards, ... of the
    (shuffled) order, wrapping around so that every shard has ceil(n / num_shards) rows. The
    shuffle is seeded by `config.get_seed()` (also when no seed is set) so that every shard agrees
    on one order; the seed moves on with each iterator and each epoch."""

    def __init__(self, num_shards, shard_id, shuffle=True, num_samples=None, offset=-1):
        if isinstance(num_shards, bool) or not isinstance(num_shards, numbers.Integral):
            raise TypeError(f"num_shards must be integer but was: {num_shards}.")
        if isinstance(shard_id, bool) or not isinstance(shard_id, numbers.Integral):
            raise TypeError(f"shard_id must be integer but was: {shard_id}.")
        if not isinstance(shuffle, bool):
            raise TypeError(f"shuffle must be a boolean value but was: {shuffle}.")
        if num_shards <= 0:
            raise RuntimeError(f"DistributedSampler: num_shards must be positive, got {num_shards}.")
        if not 0 <= shard_id < num_shards:
            raise RuntimeError(f"DistributedSampler: shard_id must be in [0, {num_shards - 1}], got {shard_id}.")
        if offset != -1:
            raise ValueError("DistributedSampler: offset is not supported by graphjit (only -1)")
        self.num_shards, self.shard_id, self.shuffle, self.offset = int(num_shards), int(shard_id), shuffle, offset
        self.seed = config.get_seed()
        super().__init__(num_samples)

    def is_shuffled(self):
        return self.shuffle

    def is_sharded(self):
        return self.num_shards > 1

    def _start_iterator(self):
        self.seed += 1
        super()._start_iterator()

    def _own_size(self, n):
        per_shard = -(-n // self.num_shards)
        return min(per_shard, self.num_samples) if self.num_samples else per_shard

    def _own(self, n, rng, epoch):
        order = (np.random.default_rng([self.seed, epoch]).permutation(n) if self.shuffle
                 else np.arange(n))
        if n == 0:
            return np.zeros(0, np.int64)
        positions = (np.arange(self._own_size(n)) * self.num_shards + self.shard_id) % n
        return order[positions].astype(np.int64)


class Sampler(BuiltinSampler):
    """Base of user-defined samplers: override `__iter__` to yield row ids; `self.dataset_size`
    is the source's size when it runs."""

    def __init__(self, num_samples=None):
        super().__init__(num_samples)
        self.dataset_size = 0

    def __iter__(self):
        raise NotImplementedError

    def reset(self):
        """Called before each epoch after the first."""

    def _own_size(self, n):
        return len(self._own(n, None, 0))

    def _own(self, n, rng, epoch):
        self.dataset_size = n
        if epoch:
            self.reset()
        ids = []
        for k, i in enumerate(iter(self)):
            if self.num_samples and k >= self.num_samples:
                break
            ids.append(i)
        return SubsetSampler(ids)._checked(n)


class IterSampler(Sampler):
    """A user's iterable of row ids used as a sampler."""

    def __init__(self, sampler, num_samples=None):
        super().__init__(num_samples)
        self.sampler = sampler

    def __iter__(self):
        return iter(self.sampler)


def select_sampler(num_samples, input_sampler, shuffle, num_shards, shard_id):
    """The sampler a source uses for its arguments, as MindSpore chooses it (note: `shuffle` with
    `num_samples` draws with replacement, as MindSpore does)."""
    if input_sampler is not None:
        if isinstance(input_sampler, BuiltinSampler) and any(
                arg is not None for arg in (num_shards, shard_id, shuffle, num_samples)):
            raise ValueError(f"Conflicting arguments during sampler assignments. num_samples: {num_samples}, "
                             f"num_shards: {num_shards}, shard_id: {shard_id}, shuffle: {shuffle}.")
        if isinstance(input_sampler, BuiltinSampler):
            return input_sampler
        if isinstance(input_sampler, (np.ndarray, list, tuple)):
            return SubsetSampler(input_sampler, num_samples)
        if isinstance(input_sampler, numbers.Integral) and not isinstance(input_sampler, bool):
            return SubsetSampler([input_sampler])
        if not isinstance(input_sampler, str) and hasattr(input_sampler, "__iter__"):
            return IterSampler(input_sampler, num_samples)
        raise TypeError(f"Unsupported sampler object of type ({type(input_sampler)})")
    if (num_shards is None) != (shard_id is None):
        raise RuntimeError("num_shards and shard_id need to be passed in together.")
    if shuffle is None or shuffle is True:
        if num_shards is not None:
            return DistributedSampler(num_shards, shard_id, shuffle=True, num_samples=num_samples)
        if num_samples:
            return RandomSampler(replacement=True, num_samples=num_samples)
        return RandomSampler(num_samples=num_samples)
    if num_shards is not None:
        return DistributedSampler(num_shards, shard_id, shuffle=False, num_samples=num_samples)
    return SequentialSampler(num_samples=num_samples)
