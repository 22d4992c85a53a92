"""Normalization layers (`BatchNorm1d/2d`, `LayerNorm`): NumPy construct methods; moving statistics are Parameters.

BatchNorm's moving statistics are updated in place (`self.moving_mean[...] = ...`) by `construct`
itself, so inside a compiled graph the update is part of the same graph, read and written through
the Parameter's access path at every call. Whether a call trains is `self.training` (`set_train`),
read at compile time under a guard, so switching modes recompiles or reuses the other variant.
"""

from __future__ import annotations

import numpy as np

from . import init
from .cell import Cell

__all__ = ["BatchNorm1d", "BatchNorm2d", "LayerNorm"]


class _BatchNorm(Cell):
    """Batch normalization over every axis but the channel axis; see BatchNorm1d/BatchNorm2d."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.9, affine: bool = True,
                 gamma_init="ones", beta_init="zeros", moving_mean_init="zeros", moving_var_init="ones",
                 use_batch_statistics=None, data_format: str = "NCHW", dtype=np.float32):
        super().__init__()
        if not isinstance(num_features, int) or isinstance(num_features, bool) or num_features < 1:
            raise ValueError(f"{type(self).__name__}: num_features must be a positive int, not {num_features!r}")
        if not 0 <= momentum <= 1:
            raise ValueError(f"{type(self).__name__}: momentum must be in [0, 1], not {momentum!r}")
        if data_format not in ("NCHW", "NHWC"):
            raise ValueError(f"{type(self).__name__}: data_format must be 'NCHW' or 'NHWC', not {data_format!r}")
        if use_batch_statistics not in (None, True, False):
            raise ValueError(f"{type(self).__name__}: use_batch_statistics must be None, True or False")
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.use_batch_statistics = use_batch_statistics
        self.data_format = data_format
        shape = (num_features,)
        self.gamma = init.initialize(gamma_init, shape, None, dtype, "gamma")
        self.beta = init.initialize(beta_init, shape, None, dtype, "beta")
        self.moving_mean = init.initialize(moving_mean_init, shape, None, dtype, "moving_mean")
        self.moving_variance = init.initialize(moving_var_init, shape, None, dtype, "moving_variance")
        self.moving_mean.requires_grad = False
        self.moving_variance.requires_grad = False
        if not affine:
            self.gamma.requires_grad = False
            self.beta.requires_grad = False

    def layout(self, ndim: int) -> tuple:
        """(the axes reduced, the shape the (C,) statistics take to broadcast against the input)."""
        raise NotImplementedError

    def construct(self, x):
        axes, shape = self.layout(x.ndim)
        batch = self.training if self.use_batch_statistics is None else self.use_batch_statistics
        if batch:
            mean = x.mean(axis=axes)
            centered = x - mean.reshape(shape)
            var = (centered * centered).mean(axis=axes)
            n = x.size // self.num_features
            unbiased = var * (n / max(n - 1, 1))
            self.moving_mean[...] = self.momentum * self.moving_mean + (1 - self.momentum) * mean
            self.moving_variance[...] = self.momentum * self.moving_variance + (1 - self.momentum) * unbiased
        else:
            centered = x - self.moving_mean.reshape(shape)
            var = self.moving_variance
        scale = self.gamma / np.sqrt(var + self.eps)
        return centered * scale.reshape(shape) + self.beta.reshape(shape)

    def extra_repr(self) -> str:
        return f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}, " \
               f"gamma={self.gamma!r}, beta={self.beta!r}, moving_mean={self.moving_mean!r}, " \
               f"moving_variance={self.moving_variance!r}"


class BatchNorm1d(_BatchNorm):
    """Batch normalization of (N, C) or (N, C, L) inputs (MindSpore's `nn.BatchNorm1d(num_features,
    eps=1e-5, momentum=0.9, affine=True, gamma_init='ones', beta_init='zeros', moving_mean_init='zeros',
    moving_var_init='ones', use_batch_statistics=None, data_format='NCHW')`).

    `y = (x - mean) / sqrt(var + eps) * gamma + beta` per channel C. In training mode (`set_train()`)
    mean and var are the batch's (var biased), and the Parameters `moving_mean`/`moving_variance`
    (requires_grad=False) are updated in place with MindSpore's momentum meaning:
    `moving = momentum * moving + (1 - momentum) * batch` (the variance unbiased, n / (n - 1)).
    Otherwise the moving statistics are used. `use_batch_statistics=True`/`False` overrides the
    mode. `gamma` and `beta` are trainable unless `affine=False`.
    """

    def layout(self, ndim: int) -> tuple:
        if ndim == 2:
            return (0,), (self.num_features,)
        if ndim == 3:
            return (0, 2), (self.num_features, 1)
        raise ValueError(f"BatchNorm1d takes (N, C) or (N, C, L) inputs, not {ndim} dimensions")


class BatchNorm2d(_BatchNorm):
    """Batch normalization of (N, C, H, W) inputs, or (N, H, W, C) with `data_format='NHWC'`
    (MindSpore's `nn.BatchNorm2d(num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init='ones',
    beta_init='zeros', moving_mean_init='zeros', moving_var_init='ones', use_batch_statistics=None,
    data_format='NCHW')`).

    Statistics per channel over N, H and W; training, moving statistics and momentum as BatchNorm1d:
    `moving = momentum * moving + (1 - momentum) * batch`, updated in place when training.
    """

    def layout(self, ndim: int) -> tuple:
        if ndim != 4:
            raise ValueError(f"BatchNorm2d takes 4-dimensional inputs, not {ndim} dimensions")
        if self.data_format == "NHWC":
            return (0, 1, 2), (self.num_features,)
        return (0, 2, 3), (self.num_features, 1, 1)


class LayerNorm(Cell):
    """Layer normalization (MindSpore's `nn.LayerNorm(normalized_shape, begin_norm_axis=-1,
    begin_params_axis=-1, gamma_init='ones', beta_init='zeros', epsilon=1e-7)`).

    `y = (x - mean) / sqrt(var + epsilon) * gamma + beta`, mean and (biased) var over the axes from
    `begin_norm_axis` on; `gamma` and `beta` have shape `normalized_shape`, which must be the input's
    shape from `begin_params_axis` on. No moving statistics: training and evaluation are the same.
    """

    def __init__(self, normalized_shape, begin_norm_axis: int = -1, begin_params_axis: int = -1,
                 gamma_init="ones", beta_init="zeros", epsilon: float = 1e-7, dtype=np.float32):
        super().__init__()
        if not isinstance(normalized_shape, (tuple, list)):
            raise TypeError(f"LayerNorm: normalized_shape must be a tuple or list, not {type(normalized_shape).__name__}")
        self.normalized_shape = tuple(normalized_shape)
        self.begin_norm_axis = begin_norm_axis
        self.begin_params_axis = begin_params_axis
        self.epsilon = epsilon
        self.gamma = init.initialize(gamma_init, self.normalized_shape, None, dtype, "gamma")
        self.beta = init.initialize(beta_init, self.normalized_shape, None, dtype, "beta")

    def norm_axes(self, ndim: int) -> tuple:
        start = self.begin_norm_axis % ndim
        params = self.begin_params_axis % ndim
        if (ndim - params) != len(self.normalized_shape):
            raise ValueError(f"LayerNorm: normalized_shape {self.normalized_shape} must be the input's shape from "
                             f"axis {self.begin_params_axis} on")
        return tuple(range(start, ndim))

    def construct(self, x):
        axes = self.norm_axes(x.ndim)
        mean = x.mean(axis=axes, keepdims=True)
        centered = x - mean
        var = (centered * centered).mean(axis=axes, keepdims=True)
        return centered / np.sqrt(var + self.epsilon) * self.gamma + self.beta

    def extra_repr(self) -> str:
        return f"normalized_shape={list(self.normalized_shape)}, begin_norm_axis={self.begin_norm_axis}, " \
               f"begin_params_axis={self.begin_params_axis}, gamma={self.gamma!r}, beta={self.beta!r}"
