"""Loss cells (`nn.CrossEntropyLoss`, `nn.MSELoss`, ...): thin Cells over `graphjit.ops` losses.

Each cell keeps its hyper-parameters and calls the one function in ops/losses.py that computes its
loss, so compiled code inlines that function's NumPy. A class weight is kept as `_weight` (a plain
attribute, read at each call), never a Parameter: it takes no gradient and is not a trainable weight.
"""

from __future__ import annotations

import numpy as np

from ..ops import losses
from .cell import Cell

__all__ = ["L1Loss", "MSELoss", "CrossEntropyLoss", "NLLLoss", "BCEWithLogitsLoss", "SoftmaxCrossEntropyWithLogits"]


def _reduction(reduction: str) -> str:
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"reduction must be 'mean', 'sum' or 'none', not {reduction!r}")
    return reduction


def _optional_array(value):
    return None if value is None else np.asarray(value)


class L1Loss(Cell):
    """`|logits - labels|`, reduced (`ops.l1_loss`)."""

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.reduction = _reduction(reduction)

    def construct(self, logits, labels):
        return losses.l1_loss(logits, labels, self.reduction)


class MSELoss(Cell):
    """`(logits - labels) ** 2`, reduced (`ops.mse_loss`)."""

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.reduction = _reduction(reduction)

    def construct(self, logits, labels):
        return losses.mse_loss(logits, labels, self.reduction)


class CrossEntropyLoss(Cell):
    """Softmax cross-entropy of logits against class indices or class probabilities (`ops.cross_entropy`)."""

    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean", label_smoothing: float = 0.0):
        super().__init__()
        self._weight = _optional_array(weight)
        self.ignore_index = ignore_index
        self.reduction = _reduction(reduction)
        self.label_smoothing = float(label_smoothing)

    def construct(self, logits, labels):
        return losses.cross_entropy(logits, labels, self._weight, self.ignore_index, self.reduction,
                                    self.label_smoothing)


class NLLLoss(Cell):
    """Negative log-likelihood of log-probabilities at class indices (`ops.nll_loss`)."""

    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean"):
        super().__init__()
        self._weight = _optional_array(weight)
        self.ignore_index = ignore_index
        self.reduction = _reduction(reduction)

    def construct(self, logits, labels):
        return losses.nll_loss(logits, labels, self._weight, self.ignore_index, self.reduction)


class BCEWithLogitsLoss(Cell):
    """Binary cross-entropy of logits (`ops.binary_cross_entropy_with_logits`)."""

    def __init__(self, reduction: str = "mean", weight=None, pos_weight=None):
        super().__init__()
        self.reduction = _reduction(reduction)
        self._weight = _optional_array(weight)
        self._pos_weight = _optional_array(pos_weight)

    def construct(self, logits, labels):
        return losses.binary_cross_entropy_with_logits(logits, labels, self._weight, self._pos_weight, self.reduction)


class SoftmaxCrossEntropyWithLogits(Cell):
    """Softmax cross-entropy per sample; `sparse=True` takes class indices, else one-hot (or soft)
    labels of the logits' shape; `reduction` defaults to 'none', as in MindSpore."""

    def __init__(self, sparse: bool = False, reduction: str = "none"):
        super().__init__()
        self.sparse = bool(sparse)
        self.reduction = _reduction(reduction)

    def construct(self, logits, labels):
        if not self.sparse:
            labels = labels.astype(logits.dtype)
        return losses.cross_entropy(logits, labels, None, -100, self.reduction, 0.0)
