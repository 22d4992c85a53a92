"""Parameter initializers (MindSpore's defaults for Dense), seeded by `graphjit.set_seed`."""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ..parameter import Parameter

_rng = np.random.default_rng()


def set_seed(seed: Optional[int]) -> None:
    global _rng
    _rng = np.random.default_rng(seed)


def uniform(shape, bound: float, dtype=np.float32, name: Optional[str] = None) -> np.ndarray:
    return _named(_rng.uniform(-bound, bound, size=shape).astype(dtype), name)


def _named(array: np.ndarray, name: Optional[str]):
    """With a name, the initial value becomes a `Parameter` (a layer's weight)."""
    return array if name is None else Parameter(array, name)


def he_uniform(shape, fan_in: int, negative_slope: float = math.sqrt(5), dtype=np.float32) -> np.ndarray:
    """HeUniform(negative_slope=sqrt(5)), MindSpore's default weight init for Dense."""
    gain = math.sqrt(2.0 / (1 + negative_slope ** 2))
    bound = math.sqrt(3.0) * gain / math.sqrt(max(fan_in, 1))
    return uniform(shape, bound, dtype)


def initialize(spec, shape, fan_in: int, dtype=np.float32, name: Optional[str] = None) -> np.ndarray:
    """`spec` is None (the default), 'zeros', 'ones', 'normal', 'uniform', a number or an array; with
    `name`, the value is a `Parameter` of that name."""
    return _named(_initial_value(spec, shape, fan_in, dtype), name)


def _initial_value(spec, shape, fan_in: int, dtype):
    if spec is None or spec in ("he_uniform", "HeUniform"):
        return he_uniform(shape, fan_in, dtype=dtype)
    if isinstance(spec, np.ndarray):
        if spec.shape != tuple(shape):
            raise ValueError(f"initial value has shape {spec.shape}, expected {tuple(shape)}")
        return spec.astype(dtype)
    if isinstance(spec, (int, float)):
        return np.full(shape, spec, dtype=dtype)
    if spec == "zeros":
        return np.zeros(shape, dtype=dtype)
    if spec == "ones":
        return np.ones(shape, dtype=dtype)
    if spec == "normal":
        return (_rng.standard_normal(shape) * 0.01).astype(dtype)
    if spec == "uniform":
        return uniform(shape, 1.0 / math.sqrt(max(fan_in, 1)), dtype)
    raise ValueError(f"unknown initializer {spec!r}")
