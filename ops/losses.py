"""Loss functions (`ops.cross_entropy`, `ops.mse_loss`, ...): plain NumPy, inlined into graphs by `jit`.

MindSpore 2.x signatures and semantics. The log-softmax is the stable form (max subtracted before
`exp`), so large logits never overflow; `binary_cross_entropy_with_logits` uses the stable softplus.
Class-index targets pick their class with a one-hot mask, which works for any number of trailing
dimensions (`(N, C, d1, ...)`) and is differentiated like any product. The loss cells in `nn/loss.py`
call these functions; this module is the one place each formula is written.
"""

import numpy as np

from graphjit.ops.activations import log_softmax

__all__ = ["cross_entropy", "nll_loss", "binary_cross_entropy_with_logits", "mse_loss", "l1_loss"]

_REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be 'mean', 'sum' or 'none', not {reduction!r}")


def _reduce(loss, reduction):
    _check_reduction(reduction)
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _class_shape(ndim, axis, n_classes):
    """The shape that puts a per-class vector on the class axis of an `ndim`-dimensional input."""
    return (n_classes,) + (1,) * (ndim - axis - 1)


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """Softmax cross-entropy of logits `input` (N, C, ...) or (C,) against class indices (integer
    `target` of shape (N, ...)) or class probabilities (floating `target`, the shape of `input`)."""
    axis = 0 if input.ndim == 1 else 1
    log_probs = log_softmax(input, axis)
    if np.issubdtype(target.dtype, np.floating):
        return _probability_cross_entropy(log_probs, target, axis, weight, reduction, label_smoothing)
    return nll_loss(log_probs, target, weight, ignore_index, reduction, label_smoothing)


def _probability_cross_entropy(log_probs, target, axis, weight, reduction, label_smoothing):
    _check_reduction(reduction)
    n_classes = log_probs.shape[axis]
    if label_smoothing > 0.0:
        target = target * (1.0 - label_smoothing) + label_smoothing / n_classes
    loss = log_probs * target
    if weight is not None:
        loss = loss * weight.reshape(_class_shape(log_probs.ndim, axis, n_classes))
    if reduction == "mean":
        return -loss.sum() / (log_probs.size // n_classes)
    if reduction == "sum":
        return -loss.sum()
    return -loss.sum(axis=axis)


def nll_loss(inputs, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """Negative log-likelihood of log-probabilities `inputs` (N, C, ...) or (C,) at the class indices
    `target`; entries equal to `ignore_index` count for nothing (not even in the mean's divisor)."""
    _check_reduction(reduction)
    axis = 0 if inputs.ndim == 1 else 1
    n_classes = inputs.shape[axis]
    shape = _class_shape(inputs.ndim, axis, n_classes)
    kept = target != ignore_index
    picked = (np.expand_dims(target, axis) == np.arange(n_classes).reshape(shape)) & np.expand_dims(kept, axis)
    if weight is not None:
        inputs = inputs * weight.reshape(shape)
        loss_weights = (picked * weight.reshape(shape)).sum(axis=axis)
    else:
        loss_weights = kept.astype(inputs.dtype)
    loss = -(inputs * picked).sum(axis=axis)
    if reduction == "mean":
        loss = loss.sum() / loss_weights.sum()
    elif reduction == "sum":
        loss = loss.sum()
    if label_smoothing > 0.0:
        smooth = -inputs.sum(axis=axis) * kept
        if reduction == "mean":
            smooth = smooth.sum() / loss_weights.sum()
        elif reduction == "sum":
            smooth = smooth.sum()
        loss = (1.0 - label_smoothing) * loss + (label_smoothing / n_classes) * smooth
    return loss


def binary_cross_entropy_with_logits(logits, label, weight=None, pos_weight=None, reduction="mean"):
    """`-w * (pos_weight * y * log(sigmoid(x)) + (1 - y) * log(1 - sigmoid(x)))`, through the stable
    softplus: `log(sigmoid(x)) = -softplus(-x)`, `log(1 - sigmoid(x)) = -softplus(x)`."""
    tail = np.log1p(np.exp(-np.abs(logits)))
    softplus_neg = np.maximum(-logits, 0) + tail
    softplus_pos = np.maximum(logits, 0) + tail
    if pos_weight is not None:
        loss = pos_weight * label * softplus_neg + (1 - label) * softplus_pos
    else:
        loss = label * softplus_neg + (1 - label) * softplus_pos
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def mse_loss(input, target, reduction="mean"):
    """Mean squared error, `(input - target) ** 2`, reduced."""
    diff = input - target
    return _reduce(diff * diff, reduction)


def l1_loss(input, target, reduction="mean"):
    """Mean absolute error, `|input - target|`, reduced."""
    return _reduce(np.abs(input - target), reduction)
