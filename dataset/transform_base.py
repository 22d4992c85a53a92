"""The base of the transforms of `vision` and `transforms`, and how `map` runs an operation (a
transform or a Python callable) on a block: stacked at once when the transform is vectorized,
else row by row; a failure names the operation, the column and the row."""

from __future__ import annotations

import numpy as np

from . import config
from .columns import Block, is_stacked, stack, to_array
from .errors import DatasetError


class Transform:
    """A data transform. `_row(*arrays, rng=...)` transforms one row; a vectorized transform also
    has `_stacked(*arrays, rng=...)`, the same on rows stacked along a new first axis. Called
    directly (`Rescale(1 / 255, 0)(image)`), it transforms one row eagerly and gives NumPy arrays;
    data it cannot transform raises DatasetError (a RuntimeError, as in MindSpore)."""

    vectorized = False
    random = False

    def __call__(self, *arrays):
        try:
            return self._row(*(as_input(a) for a in arrays), rng=_eager_rng() if self.random else None)
        except (ValueError, TypeError, IndexError) as exc:      # bad data: a RuntimeError, as MindSpore's
            raise DatasetError(str(exc)) from None

    def _row(self, *arrays, rng=None):
        raise NotImplementedError

    def _stacked(self, *arrays, rng=None):
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}()"


def as_input(value):
    if isinstance(value, np.ndarray):
        return value.view(np.ndarray) if type(value) is not np.ndarray else value
    if hasattr(value, "asnumpy"):
        return value.asnumpy()
    if type(value).__module__.startswith("PIL."):
        return np.asarray(value)
    return np.asarray(value)


_EAGER = {"seed": None, "rng": None}


def _eager_rng() -> np.random.Generator:
    """The generator of random transforms called directly: reseeded when `config.set_seed` changes."""
    seed = config.get_seed() if config.seed_was_set() else None
    if _EAGER["rng"] is None or seed != _EAGER["seed"]:
        _EAGER["seed"], _EAGER["rng"] = seed, np.random.default_rng(seed)
    return _EAGER["rng"]


def flatten_operations(operations) -> list:
    """`map`'s operations as a flat list (a Compose is its transforms)."""
    ops = list(operations) if isinstance(operations, (list, tuple)) else [operations]
    if not ops:
        raise ValueError("map: operations must not be empty")
    flat = []
    for op in ops:
        inner = getattr(op, "transforms", None)
        if inner is not None and type(op).__name__ == "Compose":
            flat.extend(flatten_operations(inner))
        elif callable(op):
            flat.append(op)
        else:
            raise TypeError(f"map: {op!r} is not a transform or a callable")
    return flat


def operation_name(op) -> str:
    if isinstance(op, Transform):
        return type(op).__name__
    return getattr(op, "__name__", None) or type(op).__name__


def _outputs(result) -> list:
    items = result if isinstance(result, tuple) else (result,)
    return [item if isinstance(item, np.ndarray) and type(item) is np.ndarray else to_array(item) for item in items]


def run_operation(op, values: list, block: Block, columns: list, rng, where: str) -> list:
    """`op` applied to the columns `values` of `block`'s rows: the new columns."""
    vectorized = isinstance(op, Transform) and op.vectorized and all(is_stacked(v) for v in values)
    if vectorized:
        try:
            return _outputs(op._stacked(*values, rng=rng))
        except Exception:       # find the row and say what went wrong there
            pass
    per_row = []
    for k in range(block.size):
        args = [v[k] for v in values]
        try:
            result = op._row(*args, rng=rng) if isinstance(op, Transform) else op(*args)
            per_row.append(_outputs(result))
        except Exception as exc:
            raise DatasetError(f"{where}: {operation_name(op)} failed on column {', '.join(map(repr, columns))}, "
                               f"row {block.start + k}: {type(exc).__name__}: {exc}") from exc
        if per_row and len(per_row[-1]) != len(per_row[0]):
            raise DatasetError(f"{where}: {operation_name(op)} gave {len(per_row[-1])} columns for row "
                               f"{block.start + k} but {len(per_row[0])} for row {block.start}")
    if vectorized:
        raise DatasetError(f"{where}: {operation_name(op)} failed on column {', '.join(map(repr, columns))}, "
                           f"rows {block.start}..{block.start + block.size - 1} together but on none alone")
    if not per_row:
        return list(values)
    return [stack([row[j] for row in per_row]) for j in range(len(per_row[0]))]
