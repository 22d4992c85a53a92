"""Training wrappers: `nn.WithLossCell` (a network and its loss as one Cell) and `nn.TrainOneStepCell`
(one training step: the loss, its gradient with respect to the optimizer's Parameters, the update).

Both are ordinary Cells: jitted, the forward pass, the backward pass and the optimizer's in-place
update compile into one graph.
"""

from __future__ import annotations

from ..gradients import value_and_grad
from .cell import Cell

__all__ = ["WithLossCell", "TrainOneStepCell"]


class WithLossCell(Cell):
    """`loss_fn(backbone(data), label)`."""

    def __init__(self, backbone: Cell, loss_fn: Cell):
        super().__init__(auto_prefix=False)
        self.backbone = backbone
        self.loss_fn = loss_fn

    @property
    def backbone_network(self) -> Cell:
        return self.backbone

    def construct(self, data, label):
        return self.loss_fn(self.backbone(data), label)


class TrainOneStepCell(Cell):
    """One step: the network's loss and its gradient with respect to `optimizer.parameters` (scaled
    by `sens`, the sensitivity the backward pass starts from), then `optimizer(grads)`; returns the loss."""

    def __init__(self, network: Cell, optimizer: Cell, sens: float = 1.0):
        super().__init__(auto_prefix=False)
        self.network = network
        self.optimizer = optimizer
        self.weights = optimizer.parameters
        self.sens = float(sens)
        self._grad_fn = value_and_grad(network, None, self.weights)

    def construct(self, *inputs):
        loss, grads = self._grad_fn(*inputs)
        if self.sens != 1.0:
            grads = tuple([g * self.sens for g in grads])
        self.optimizer(grads)
        return loss
