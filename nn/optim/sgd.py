"""`nn.SGD`: stochastic gradient descent with MindSpore's momentum, dampening and Nesterov rules.

    v = momentum * v + (1 - dampening) * g      (on the first step: v = g)
    p = p - lr * (g + momentum * v)             (nesterov)
    p = p - lr * v                              (otherwise)

State: `accum.<name>` (v) and `stat.<name>` (1 until the first step, then 0). With momentum and
dampening both 0 (the default) v is the gradient itself, and the update is `p -= lr * g`.
"""

from __future__ import annotations

import numpy as np

from ...parameter import Parameter, ParameterTuple
from .optimizer import Optimizer, check_hyper

__all__ = ["SGD"]


class SGD(Optimizer):
    """`SGD(params, learning_rate=0.1, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
    loss_scale=1.0)`."""

    def __init__(self, params, learning_rate=0.1, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False, loss_scale: float = 1.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.momentum = check_hyper("momentum", momentum)
        self.dampening = check_hyper("dampening", dampening)
        if nesterov and (self.momentum <= 0.0 or self.dampening != 0.0):
            raise ValueError("nesterov=True needs momentum > 0 and dampening == 0")
        self.nesterov = bool(nesterov)
        self.accum = self.clone_state("accum")
        self.stat = ParameterTuple(Parameter(np.ones((), p.dtype), f"stat.{p.name}", requires_grad=False)
                                   for p in self.parameters)

    def state_tuples(self) -> tuple:
        return (self.accum, self.stat)

    def construct(self, gradients):
        gradients = self.prepare_gradients(gradients)
        lr = self.get_lr()
        if self.momentum == 0.0 and self.dampening == 0.0:
            for p, g in zip(self.parameters, gradients):
                p -= lr * g
        else:
            for p, g, v, first in zip(self.parameters, gradients, self.accum, self.stat):
                v *= self.momentum
                v += (1.0 - self.dampening * (1.0 - first)) * g    # the first step takes g undamped
                first *= 0.0
                if self.nesterov:
                    p -= lr * (g + self.momentum * v)
                else:
                    p -= lr * v
        self.count_step()
        return True
