"""How each initializer fills an array: the classes (`Normal`, `HeUniform`, ...), their string names
('normal', 'he_uniform', ...), `initial_values(init, shape, dtype)`, and `initialize(spec, shape, fan_in,
dtype, name)`, which layers build their weights with. common/initializer.py is MindSpore's import path
for them; `Tensor(shape=..., dtype=..., init=...)` (tensor.py) fills its values with them.

The draws come from one generator seeded by `graphjit.set_seed`, so a model built after `set_seed(n)`
has the same weights every time.
"""

from __future__ import annotations

import math
import numbers
from contextvars import ContextVar
from typing import Optional

import numpy as np

from ..parameter import Parameter

__all__ = ["Initializer", "Normal", "Uniform", "TruncatedNormal", "HeUniform", "HeNormal", "XavierUniform",
           "XavierNormal", "Zero", "One", "Constant", "Identity", "Sparse", "Dirac", "Orthogonal", "VarianceScaling",
           "calculate_gain"]

_rng = np.random.default_rng()


def set_seed(seed: Optional[int]) -> None:
    global _rng
    _rng = np.random.default_rng(seed)


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended gain of a nonlinearity (MindSpore's and PyTorch's table): 1 for linear,
    conv and sigmoid, 5/3 for tanh, sqrt(2) for relu, sqrt(2 / (1 + slope^2)) for leaky_relu, 3/4 for selu."""
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                        "conv_transpose3d", "sigmoid"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, numbers.Real):
            raise ValueError(f"leaky_relu's negative slope must be a number, not {slope!r}")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"unknown nonlinearity {nonlinearity!r}")


def fans(shape) -> tuple:
    """(fan_in, fan_out) of a weight: `shape[1]` and `shape[0]` times the receptive field `prod(shape[2:])`."""
    if len(shape) < 2:
        raise ValueError(f"fan in and fan out need a weight of at least 2 dimensions, not shape {tuple(shape)}")
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


# While graphjit reads a file without running it (`graphjit check` and `transpile` build the file's
# layers to know their shapes), `check(size)` says why a weight of `size` elements is refused, or None
# (transpiler/static_pure.py sets it). None, the default: no limit.
READING_LIMIT: ContextVar = ContextVar("graphjit_reading_limit", default=None)


class WeightTooBig(ValueError):
    """A weight past READING_LIMIT while graphjit reads a file: refused before it is allocated."""


class Initializer:
    """Base class of the initializers: `init(shape, dtype)` returns a new array of that shape.
    `fan_in` (when a layer knows it) overrides the one computed from the shape."""

    random = True   # draws random numbers (Zero, One, Constant, Identity and Dirac do not)

    def __call__(self, shape, dtype=np.float32, fan_in: Optional[int] = None) -> np.ndarray:
        check = READING_LIMIT.get()
        if check is not None:
            problem = check(math.prod(max(int(d), 0) for d in shape))
            if problem is not None:
                raise WeightTooBig(f"shape {tuple(shape)}: {problem}")
        return np.asarray(self.sample(tuple(shape), fan_in)).astype(dtype)

    def sample(self, shape: tuple, fan_in: Optional[int]):
        raise NotImplementedError

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({args})"


class Zero(Initializer):
    """All zeros ('zeros')."""

    random = False

    def sample(self, shape, fan_in):
        return np.zeros(shape)


class One(Initializer):
    """All ones ('ones')."""

    random = False

    def sample(self, shape, fan_in):
        return np.ones(shape)


class Constant(Initializer):
    """Every element `value`."""

    random = False

    def __init__(self, value):
        self.value = value

    def sample(self, shape, fan_in):
        return np.full(shape, self.value)


class Normal(Initializer):
    """N(mean, sigma^2) (MindSpore's `Normal(sigma=0.01, mean=0.0)`, 'normal')."""

    def __init__(self, sigma: float = 0.01, mean: float = 0.0):
        self.sigma = sigma
        self.mean = mean

    def sample(self, shape, fan_in):
        return _rng.normal(self.mean, self.sigma, size=shape)


class Uniform(Initializer):
    """U(-scale, scale) (MindSpore's `Uniform(scale=0.07)`, 'uniform')."""

    def __init__(self, scale: float = 0.07):
        self.scale = scale

    def sample(self, shape, fan_in):
        return _rng.uniform(-self.scale, self.scale, size=shape)


class TruncatedNormal(Initializer):
    """N(mean, sigma^2) cut to [mean + a sigma, mean + b sigma] (MindSpore's
    `TruncatedNormal(sigma=0.01, mean=0.0, a=-2.0, b=2.0)`, 'truncatedNormal'); rejected draws are redrawn."""

    def __init__(self, sigma: float = 0.01, mean: float = 0.0, a: float = -2.0, b: float = 2.0):
        self.sigma = sigma
        self.mean = mean
        self.a = a
        self.b = b

    def sample(self, shape, fan_in):
        z = _rng.standard_normal(shape)
        bad = (z < self.a) | (z > self.b)
        while bad.any():
            z[bad] = _rng.standard_normal(int(bad.sum()))
            bad = (z < self.a) | (z > self.b)
        return self.mean + self.sigma * z


class _He(Initializer):
    def __init__(self, negative_slope: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"):
        if mode not in ("fan_in", "fan_out"):
            raise ValueError(f"mode must be 'fan_in' or 'fan_out', not {mode!r}")
        self.negative_slope = negative_slope
        self.mode = mode
        self.nonlinearity = nonlinearity

    def std(self, shape, fan_in) -> float:
        if self.mode == "fan_in":
            fan = fan_in if fan_in is not None else fans(shape)[0]
        else:
            fan = fans(shape)[1]
        return calculate_gain(self.nonlinearity, self.negative_slope) / math.sqrt(max(fan, 1))


class HeUniform(_He):
    """Kaiming uniform: U(-b, b), b = gain * sqrt(3 / fan) (MindSpore's `HeUniform(negative_slope=0,
    mode='fan_in', nonlinearity='leaky_relu')`, 'he_uniform'; Dense's and Conv2d's weights use
    `HeUniform(math.sqrt(5))`)."""

    def sample(self, shape, fan_in):
        bound = math.sqrt(3.0) * self.std(shape, fan_in)
        return _rng.uniform(-bound, bound, size=shape)


class HeNormal(_He):
    """Kaiming normal: N(0, (gain / sqrt(fan))^2) (MindSpore's `HeNormal(negative_slope=0,
    mode='fan_in', nonlinearity='leaky_relu')`, 'he_normal')."""

    def sample(self, shape, fan_in):
        return _rng.normal(0.0, self.std(shape, fan_in), size=shape)


class XavierUniform(Initializer):
    """Glorot uniform: U(-b, b), b = gain * sqrt(6 / (fan_in + fan_out)) (MindSpore's
    `XavierUniform(gain=1)`, 'xavier_uniform')."""

    def __init__(self, gain: float = 1):
        self.gain = gain

    def sample(self, shape, fan_in):
        bound = self.gain * math.sqrt(6.0 / sum(fans(shape)))
        return _rng.uniform(-bound, bound, size=shape)


class XavierNormal(Initializer):
    """Glorot normal: N(0, (gain * sqrt(2 / (fan_in + fan_out)))^2) (MindSpore's `XavierNormal(gain=1)`,
    'xavier_normal')."""

    def __init__(self, gain: float = 1):
        self.gain = gain

    def sample(self, shape, fan_in):
        return _rng.normal(0.0, self.gain * math.sqrt(2.0 / sum(fans(shape))), size=shape)


class Identity(Initializer):
    """The identity matrix `np.eye(rows, cols)` of a 2-D shape ('identity')."""

    random = False

    def sample(self, shape, fan_in):
        if len(shape) != 2:
            raise ValueError(f"Identity initializes 2-D tensors, not shape {shape}")
        return np.eye(shape[0], shape[1])


class Sparse(Initializer):
    """A 2-D N(0, sigma^2) matrix with `ceil(sparsity * rows)` zeros in each column, at random rows
    (MindSpore's `Sparse(sparsity, sigma=0.01)`, 'sparse')."""

    def __init__(self, sparsity: float, sigma: float = 0.01):
        self.sparsity = sparsity
        self.sigma = sigma

    def sample(self, shape, fan_in):
        if len(shape) != 2:
            raise ValueError(f"Sparse initializes 2-D tensors, not shape {shape}")
        rows, cols = shape
        data = _rng.normal(0.0, self.sigma, size=shape)
        zeros = int(np.ceil(self.sparsity * rows))
        for col in range(cols):
            data[_rng.permutation(rows)[:zeros], col] = 0.0
        return data


class Dirac(Initializer):
    """The Dirac delta of a 3-, 4- or 5-D convolution weight: a convolution that keeps its input, per
    group of output channels (MindSpore's `Dirac(groups=1)`, 'dirac')."""

    random = False

    def __init__(self, groups: int = 1):
        self.groups = groups

    def sample(self, shape, fan_in):
        if len(shape) not in (3, 4, 5):
            raise ValueError(f"Dirac initializes 3-, 4- or 5-D tensors, not shape {shape}")
        if shape[0] % self.groups:
            raise ValueError(f"Dirac: the first dimension {shape[0]} is not divisible by groups={self.groups}")
        data = np.zeros(shape)
        per_group = shape[0] // self.groups
        centre = tuple(d // 2 for d in shape[2:])
        for group in range(self.groups):
            for k in range(min(per_group, shape[1])):
                data[(group * per_group + k, k) + centre] = 1
        return data


class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix times `gain`, trailing dimensions flattened (MindSpore's
    `Orthogonal(gain=1.)`, 'orthogonal'): the Q of a QR decomposition of N(0, 1) draws, signs fixed."""

    def __init__(self, gain: float = 1.0):
        self.gain = gain

    def sample(self, shape, fan_in):
        if len(shape) < 2:
            raise ValueError(f"Orthogonal initializes tensors of at least 2 dimensions, not shape {shape}")
        rows = shape[0]
        cols = int(np.prod(shape)) // rows
        data = _rng.normal(0.0, 1.0, size=(rows, cols))
        if rows < cols:
            data = data.T
        q, r = np.linalg.qr(data)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return (q * self.gain).reshape(shape)


class VarianceScaling(Initializer):
    """N(0, scale / n) (truncated at two standard deviations or not) or U(-sqrt(3 scale / n), sqrt(3 scale / n)),
    n the fan in, fan out or their mean (MindSpore's `VarianceScaling(scale=1.0, mode='fan_in',
    distribution='truncated_normal')`, 'variancescaling')."""

    def __init__(self, scale: float = 1.0, mode: str = "fan_in", distribution: str = "truncated_normal"):
        if scale <= 0:
            raise ValueError(f"VarianceScaling: scale must be greater than 0, not {scale}")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"VarianceScaling: mode must be 'fan_in', 'fan_out' or 'fan_avg', not {mode!r}")
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError("VarianceScaling: distribution must be 'uniform', 'truncated_normal' or "
                             f"'untruncated_normal', not {distribution!r}")
        self.scale = scale
        self.mode = mode
        self.distribution = distribution

    def sample(self, shape, fan_in):
        n_in, n_out = fans(shape)
        n = {"fan_in": n_in, "fan_out": n_out, "fan_avg": (n_in + n_out) / 2}[self.mode]
        scale = self.scale / max(1.0, n)
        if self.distribution == "uniform":
            limit = math.sqrt(3.0 * scale)
            return _rng.uniform(-limit, limit, size=shape)
        if self.distribution == "untruncated_normal":
            return _rng.normal(0.0, math.sqrt(scale), size=shape)
        # N(0, 1) cut to [-2, 2] has standard deviation 0.8796...: divided out. (MindSpore 2.x compares with
        # 'truncated_norm' here and so draws uniform numbers; graphjit draws what its documentation says.)
        return TruncatedNormal(math.sqrt(scale) / 0.87962566103423978).sample(shape, fan_in)


# MindSpore's string names (matched without case, as MindSpore lower-cases them)
_BY_NAME = {"zeros": Zero, "zero": Zero, "ones": One, "one": One, "normal": Normal, "uniform": Uniform,
            "truncatednormal": TruncatedNormal, "he_uniform": HeUniform, "heuniform": HeUniform,
            "he_normal": HeNormal, "henormal": HeNormal, "xavier_uniform": XavierUniform,
            "xavieruniform": XavierUniform, "xavier_normal": XavierNormal, "xaviernormal": XavierNormal,
            "identity": Identity, "dirac": Dirac, "orthogonal": Orthogonal, "variancescaling": VarianceScaling}


def initial_values(init, shape=None, dtype=np.float32) -> np.ndarray:
    """The array MindSpore's `initializer(init, shape=None, dtype=float32)` holds: `init` is an Initializer,
    one of their names ('normal', 'he_uniform', ...), a number (every element) or an array (its shape must
    be `shape`)."""
    if isinstance(init, np.ndarray):
        if shape is not None and tuple(init.shape) != _shape(shape):
            raise ValueError(f"initializer: the array has shape {init.shape}, but shape {_shape(shape)} was asked")
        return np.array(init, dtype=dtype)
    if shape is None:
        raise ValueError("initializer: give `shape` unless `init` is an array")
    return initializer_object(init)(_shape(shape), dtype)


def _shape(shape) -> tuple:
    return (shape,) if isinstance(shape, int) else tuple(shape)


def draws_random_numbers(spec) -> bool:
    """Whether the initializer `spec` names draws random numbers (False for a bad `spec`: it fails elsewhere)."""
    try:
        return initializer_object(spec).random
    except ValueError:
        return False


def initializer_object(spec) -> Initializer:
    """The Initializer `spec` names: an Initializer, a name ('normal', 'ones', ...) or a number (Constant)."""
    if isinstance(spec, Initializer):
        return spec
    if isinstance(spec, bool) or isinstance(spec, numbers.Number):
        return Constant(spec)
    if isinstance(spec, str) and spec.lower() in _BY_NAME:
        return _BY_NAME[spec.lower()]()
    raise ValueError(f"unknown initializer {spec!r}; use an Initializer, a number, an array or one of "
                     f"{sorted(set(_BY_NAME))}")


# --- what the layers call -------------------------------------------------------------------------

def _named(array: np.ndarray, name: Optional[str]):
    """With a name, the initial value becomes a `Parameter` (a layer's weight)."""
    return array if name is None else Parameter(array, name)


def uniform(shape, bound: float, dtype=np.float32, name: Optional[str] = None) -> np.ndarray:
    """U(-bound, bound): MindSpore's default bias of Dense and Conv (bound 1/sqrt(fan_in))."""
    return _named(Uniform(bound)(shape, dtype), name)


def he_uniform(shape, fan_in: int, negative_slope: float = math.sqrt(5), dtype=np.float32) -> np.ndarray:
    """HeUniform(negative_slope=sqrt(5)), MindSpore's default weight init for Dense."""
    return HeUniform(negative_slope)(shape, dtype, fan_in)


def initialize(spec, shape, fan_in: Optional[int] = None, dtype=np.float32, name: Optional[str] = None) -> np.ndarray:
    """A layer's initial weight: `spec` is None (MindSpore's default for Dense and Conv weights,
    HeUniform(sqrt(5))), an Initializer, its name, a number or an array/Tensor of shape `shape`;
    `fan_in` is the layer's (else computed from `shape`). With `name`, the value is a `Parameter`."""
    if spec is None:
        spec = HeUniform(math.sqrt(5))
    if isinstance(spec, np.ndarray):
        value = initial_values(spec, shape, dtype)
    else:
        value = initializer_object(spec)(_shape(shape), dtype, fan_in)
    return _named(value, name)
