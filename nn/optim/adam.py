"""`nn.Adam`: MindSpore's Adam (`ApplyAdam`), bias-corrected through the learning rate.

    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    lr_t = lr * sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
    p = p - lr_t * (beta1 * m + (1 - beta1) * g) / (sqrt(v) + eps)     (use_nesterov)
    p = p - lr_t * m / (sqrt(v) + eps)                                 (otherwise)

State: `moment1.<name>` (m), `moment2.<name>` (v), `beta1_power` and `beta2_power` (beta ** t,
float32, multiplied by beta at each step before use, as MindSpore keeps them). Weight decay is
L2, added to the gradient (MindSpore's Optimizer rule).
"""

from __future__ import annotations

import numpy as np

from ...parameter import Parameter
from .optimizer import Optimizer, check_hyper

__all__ = ["Adam"]


class Adam(Optimizer):
    """`Adam(params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, use_locking=False,
    use_nesterov=False, weight_decay=0.0, loss_scale=1.0, use_amsgrad=False)`."""

    def __init__(self, params, learning_rate=1e-3, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8,
                 use_locking: bool = False, use_nesterov: bool = False, weight_decay: float = 0.0,
                 loss_scale: float = 1.0, use_amsgrad: bool = False):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        if use_amsgrad:
            raise ValueError("Adam(use_amsgrad=True) is not supported: use nn.AdamW(amsgrad=True)")
        self.beta1 = check_hyper("beta1", beta1, 0.0, 1.0)
        self.beta2 = check_hyper("beta2", beta2, 0.0, 1.0)
        self.eps = check_hyper("eps", eps)
        if self.eps == 0.0:
            raise ValueError("eps must be > 0")
        self.use_nesterov = bool(use_nesterov)
        self.moment1 = self.clone_state("moment1")
        self.moment2 = self.clone_state("moment2")
        self.beta1_power = Parameter(np.ones((1,), np.float32), "beta1_power", requires_grad=False)
        self.beta2_power = Parameter(np.ones((1,), np.float32), "beta2_power", requires_grad=False)

    def state_tuples(self) -> tuple:
        return (self.moment1, self.moment2)

    def parameters_and_names(self, prefix: str = ""):
        yield from super().parameters_and_names(prefix)
        yield self.beta1_power.name, self.beta1_power
        yield self.beta2_power.name, self.beta2_power

    def construct(self, gradients):
        gradients = self.prepare_gradients(gradients)
        beta1_power = self.beta1_power
        beta2_power = self.beta2_power
        beta1_power *= self.beta1
        beta2_power *= self.beta2
        lr = self.get_lr() * np.sqrt(1.0 - beta2_power[0]) / (1.0 - beta1_power[0])
        for p, g, m, v in zip(self.parameters, gradients, self.moment1, self.moment2):
            m *= self.beta1
            m += (1.0 - self.beta1) * g
            v *= self.beta2
            v += (1.0 - self.beta2) * (g * g)
            if self.use_nesterov:
                p -= lr * (self.beta1 * m + (1.0 - self.beta1) * g) / (np.sqrt(v) + self.eps)
            else:
                p -= lr * m / (np.sqrt(v) + self.eps)
        self.count_step()
        return True
