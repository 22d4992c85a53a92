"""`nn.AdamWeightDecay`: MindSpore's Adam with decoupled weight decay and no bias correction.

    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    update = m / (sqrt(v) + eps) + weight_decay * p     (the decay for Parameters without `beta`/`gamma` in their names)
    p = p - lr * update

State: `adam_m.<name>` (m) and `adam_v.<name>` (v). The decay acts on the update, not the gradient.
"""

from __future__ import annotations

import numpy as np

from .optimizer import Optimizer, check_hyper

__all__ = ["AdamWeightDecay"]


class AdamWeightDecay(Optimizer):
    """`AdamWeightDecay(params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-6, weight_decay=0.0)`."""

    def __init__(self, params, learning_rate=1e-3, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-6,
                 weight_decay: float = 0.0):
        super().__init__(learning_rate, params)
        self.beta1 = check_hyper("beta1", beta1, 0.0, 1.0)
        self.beta2 = check_hyper("beta2", beta2, 0.0, 1.0)
        self.eps = check_hyper("eps", eps)
        if self.eps == 0.0:
            raise ValueError("eps must be > 0")
        self.decoupled_decay = check_hyper("weight_decay", weight_decay)
        self.moments1 = self.clone_state("adam_m")
        self.moments2 = self.clone_state("adam_v")

    def state_tuples(self) -> tuple:
        return (self.moments1, self.moments2)

    def construct(self, gradients):
        gradients = self.prepare_gradients(gradients)
        lr = self.get_lr()
        for p, g, m, v, decay in zip(self.parameters, gradients, self.moments1, self.moments2, self.decay_flags):
            m *= self.beta1
            m += (1.0 - self.beta1) * g
            v *= self.beta2
            v += (1.0 - self.beta2) * (g * g)
            if self.decoupled_decay > 0.0 and decay:
                p -= lr * (m / (np.sqrt(v) + self.eps) + self.decoupled_decay * p)
            else:
                p -= lr * (m / (np.sqrt(v) + self.eps))
        self.count_step()
        return True
