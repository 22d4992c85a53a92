"""`graphjit.dataset.config`: the pipeline's global settings (seed, workers, prefetch), as
`mindspore.dataset.config`."""

from __future__ import annotations

import os

import numpy as np

DEFAULT_SEED = 5489          # std::mt19937's default seed: MindSpore's get_seed() before set_seed
_state = {"seed": None, "num_parallel_workers": 8, "prefetch_size": 16, "block_rows": 1024}


def set_seed(seed: int) -> None:
    """Seed every random choice of the pipelines created from now on (samplers, `shuffle`, random
    transforms): the same seed gives the same order and the same augmentations, run after run.
    `graphjit.set_seed` calls it, as `mindspore.set_seed` does."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    if not 0 <= seed <= 2**32 - 1:
        raise ValueError(f"seed must be in [0, 4294967295], got {seed}")
    _state["seed"] = int(seed)


def get_seed() -> int:
    """The seed given to `set_seed`, or MindSpore's default 5489 when none was given (then each
    new pipeline draws its random choices from fresh entropy, as MindSpore does)."""
    return DEFAULT_SEED if _state["seed"] is None else _state["seed"]


def seed_was_set() -> bool:
    return _state["seed"] is not None


def _positive(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value}")
    return int(value)


def set_num_parallel_workers(num: int) -> None:
    """The default number of threads of `map` and `batch` (MindSpore's default: 8)."""
    _state["num_parallel_workers"] = _positive("num_parallel_workers", num)


def get_num_parallel_workers() -> int:
    return _state["num_parallel_workers"]


def set_prefetch_size(size: int) -> None:
    """How many rows (batches, after `batch`) an iterator computes ahead in its background thread,
    at least one block (default 16)."""
    _state["prefetch_size"] = _positive("prefetch_size", size)


def get_prefetch_size() -> int:
    return _state["prefetch_size"]


def set_block_rows(rows: int) -> None:
    """graphjit's own knob: at most how many rows a source reads at once (and vectorized transforms
    see stacked), default 1024; the first blocks of a pass are smaller (64, 128, ...) so that the
    first rows come soon, and a block of fixed-size rows stays under about 8 MB."""
    _state["block_rows"] = _positive("block_rows", rows)


def get_block_rows() -> int:
    return _state["block_rows"]


def get_numa_enable() -> bool:
    return False


def entropy_seed() -> int:
    """A seed from the OS, for pipelines created while no seed is set."""
    return int.from_bytes(os.urandom(4), "little")
