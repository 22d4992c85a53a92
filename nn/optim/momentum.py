"""`nn.Momentum`: MindSpore's momentum optimizer (`ApplyMomentum`).

    v = momentum * v + g
    p = p - lr * (g + momentum * v)     (use_nesterov)
    p = p - lr * v                      (otherwise)

State: `moments.<name>` (v).
"""

from __future__ import annotations

from .optimizer import Optimizer, check_hyper

__all__ = ["Momentum"]


class Momentum(Optimizer):
    """`Momentum(params, learning_rate, momentum, weight_decay=0.0, loss_scale=1.0, use_nesterov=False)`."""

    def __init__(self, params, learning_rate, momentum: float, weight_decay: float = 0.0, loss_scale: float = 1.0,
                 use_nesterov: bool = False):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.momentum = check_hyper("momentum", momentum)
        self.use_nesterov = bool(use_nesterov)
        self.moments = self.clone_state("moments")

    def state_tuples(self) -> tuple:
        return (self.moments,)

    def construct(self, gradients):
        gradients = self.prepare_gradients(gradients)
        lr = self.get_lr()
        for p, g, v in zip(self.parameters, gradients, self.moments):
            v *= self.momentum
            v += g
            if self.use_nesterov:
                p -= lr * (g + self.momentum * v)
            else:
                p -= lr * v
        self.count_step()
        return True
