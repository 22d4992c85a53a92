"""`nn.AdamW`: Adam with decoupled weight decay and bias correction, MindSpore's
`mindspore.experimental.optim.AdamW` / `mint.optim.AdamW` (PyTorch's rule).

    p = p - lr * weight_decay * p
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    m_hat = m / (1 - beta1 ** t);  v_hat = v / (1 - beta2 ** t)
    v_max = max(v_max, v_hat)                        (amsgrad; the denominator uses v_max)
    p = p - lr * m_hat / (sqrt(v_hat) + eps)

`maximize=True` ascends (g is negated). State: `exp_avg.<name>`, `exp_avg_sq.<name>`,
`max_exp_avg_sq.<name>` (amsgrad) and the step count `global_step`.
"""

from __future__ import annotations

import numpy as np

from .optimizer import Optimizer, check_hyper

__all__ = ["AdamW"]


class AdamW(Optimizer):
    """`AdamW(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *, maximize=False)`."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 1e-2,
                 amsgrad: bool = False, *, maximize: bool = False):
        super().__init__(lr, params)
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise ValueError(f"betas must be a pair of floats, not {betas!r}")
        self.beta1 = check_hyper("betas[0]", betas[0], 0.0, 1.0)
        self.beta2 = check_hyper("betas[1]", betas[1], 0.0, 1.0)
        self.eps = check_hyper("eps", eps)
        self.decoupled_decay = check_hyper("weight_decay", weight_decay)
        self.amsgrad = bool(amsgrad)
        self.maximize = bool(maximize)
        self.exp_avg = self.clone_state("exp_avg")
        self.exp_avg_sq = self.clone_state("exp_avg_sq")
        self.max_exp_avg_sq = self.clone_state("max_exp_avg_sq") if self.amsgrad else ()

    def state_tuples(self) -> tuple:
        return (self.exp_avg, self.exp_avg_sq, self.max_exp_avg_sq)

    def construct(self, gradients):
        gradients = self.prepare_gradients(gradients)
        self.count_step()
        lr = self.get_lr()
        t = self.global_step.astype(np.float32)[0]
        correction1 = 1.0 - self.beta1 ** t
        correction2 = 1.0 - self.beta2 ** t
        if self.maximize:
            gradients = tuple([-g for g in gradients])
        for k, (p, g, m, v) in enumerate(zip(self.parameters, gradients, self.exp_avg, self.exp_avg_sq)):
            p -= lr * self.decoupled_decay * p
            m *= self.beta1
            m += (1.0 - self.beta1) * g
            v *= self.beta2
            v += (1.0 - self.beta2) * (g * g)
            v_hat = v / correction2
            if self.amsgrad:
                v_max = self.max_exp_avg_sq[k]
                np.maximum(v_max, v_hat, out=v_max)
                v_hat = v_max
            p -= lr * (m / correction1) / (np.sqrt(v_hat) + self.eps)
        return True
