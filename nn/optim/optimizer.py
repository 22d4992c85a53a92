"""`Optimizer`: what every optimizer shares: its Parameters, learning rate, step count and state.

An optimizer is a Cell whose `construct(gradients)` updates `self.parameters` in place, so inside a
jitted training step the update is inlined into the same graph as the forward and backward passes.
Everything that changes from step to step lives in Parameters (`requires_grad=False`): the learning
rate (`learning_rate`), the step count (`global_step`) and per-parameter state named as MindSpore
names it (`moment1.dense.weight`). Compiled code reads them through their attribute paths at every
call, so they are never baked in and survive recompiles; hyper-parameters (momentum, betas) are
Python numbers, folded and guarded like any Cell attribute.

Gradients are prepared as MindSpore's `Optimizer` does: weight decay first (`g + weight_decay * p`,
for Parameters without `beta` or `gamma` in their names), then division by `loss_scale`.
"""

from __future__ import annotations

import numpy as np

from ...parameter import Parameter, ParameterTuple
from ..cell import Cell

__all__ = ["Optimizer"]


class Optimizer(Cell):
    """The base of optimizers: `Optimizer(learning_rate, parameters, weight_decay=0.0, loss_scale=1.0)`."""

    def __init__(self, learning_rate, parameters, weight_decay: float = 0.0, loss_scale: float = 1.0):
        super().__init__(auto_prefix=False)
        params = _parameter_list(parameters)
        _check_number("weight_decay", weight_decay)
        _check_number("loss_scale", loss_scale, positive=True)
        self.parameters = ParameterTuple(params)
        self.learning_rate = _learning_rate(learning_rate)
        self.weight_decay = float(weight_decay)
        self.loss_scale = float(loss_scale)
        self.decay_flags = tuple("beta" not in p.name and "gamma" not in p.name for p in params)
        self.global_step = Parameter(np.zeros((1,), np.int32), "global_step", requires_grad=False)

    def clone_state(self, prefix: str, init: str = "zeros") -> ParameterTuple:
        """One state Parameter per parameter, named `prefix.<parameter name>`, not trained."""
        state = self.parameters.clone(prefix, init)
        for p in state:
            p.requires_grad = False
        return state

    def state_tuples(self) -> tuple:
        """The per-parameter state tuples this optimizer keeps (for `parameters_and_names`)."""
        return ()

    def parameters_and_names(self, prefix: str = ""):
        """The learning rate, the step count and every state Parameter, by their own names: as in
        MindSpore, an optimizer's names take no prefix from the cell holding it."""
        yield self.learning_rate.name, self.learning_rate
        yield self.global_step.name, self.global_step
        for state in self.state_tuples():
            for p in state:
                yield p.name, p

    def get_lr(self):
        """The learning rate this step uses (a float32 Parameter, read at call time)."""
        return self.learning_rate

    def prepare_gradients(self, gradients):
        """Weight decay, then loss scale, as MindSpore's optimizers apply them."""
        gradients = tuple(gradients)
        if len(gradients) != len(self.parameters):
            raise ValueError(f"the optimizer holds {len(self.parameters)} parameters but got {len(gradients)} "
                             f"gradients")
        if self.weight_decay > 0.0:
            gradients = tuple([g + self.weight_decay * p if decay else g
                               for p, g, decay in zip(self.parameters, gradients, self.decay_flags)])
        if self.loss_scale != 1.0:
            gradients = tuple([g / self.loss_scale for g in gradients])
        return gradients

    def count_step(self) -> None:
        step = self.global_step
        step += 1

    def construct(self, gradients):
        raise NotImplementedError(f"{type(self).__name__} must define construct(gradients)")


def _parameter_list(parameters) -> list:
    if isinstance(parameters, Parameter):
        raise TypeError("an optimizer takes a list of Parameters (net.trainable_params()), not one Parameter")
    params = list(parameters)
    if not params:
        raise ValueError("the optimizer got an empty parameter list: pass net.trainable_params()")
    if any(isinstance(p, dict) for p in params):
        raise TypeError("parameter groups (a list of dicts) are not supported: pass a list of Parameters "
                        "(net.trainable_params())")
    for k, p in enumerate(params):
        if not isinstance(p, Parameter):
            raise TypeError(f"the optimizer's parameters must be Parameters; item {k} is {type(p).__name__}")
    for k, p in enumerate(params):
        if p.name is None:
            p.name = f"param{k}"
    names = [p.name for p in params]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"the optimizer's parameters have duplicate names {duplicates}: give each a unique name")
    return params


def _learning_rate(learning_rate) -> Parameter:
    if isinstance(learning_rate, Parameter):
        if learning_rate.size != 1:
            raise ValueError("a learning rate Parameter must hold one number")
        return learning_rate
    if isinstance(learning_rate, (int, float, np.floating, np.integer)) and not isinstance(learning_rate, bool):
        value = float(learning_rate)
    elif isinstance(learning_rate, np.ndarray) and learning_rate.size == 1:
        value = float(learning_rate.reshape(()))
    else:
        raise TypeError(f"learning_rate must be a number, a one-element Tensor or a Parameter, not "
                        f"{type(learning_rate).__name__} (dynamic learning rates are not supported)")
    if value < 0:
        raise ValueError(f"learning_rate must be >= 0, got {value}")
    return Parameter(np.array(value, np.float32), "learning_rate", requires_grad=False)


def _check_number(name: str, value, positive: bool = False) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise TypeError(f"{name} must be a float, not {type(value).__name__}")
    if value < 0 or (positive and value == 0):
        raise ValueError(f"{name} must be {'> 0' if positive else '>= 0'}, got {value}")


def check_hyper(name: str, value, low: float = 0.0, high=None, inclusive_high: bool = False) -> float:
    """A float hyper-parameter in [low, high) (or [low, high]); a clear error otherwise."""
    _check_number(name, value)
    value = float(value)
    if value < low or (high is not None and (value > high if inclusive_high else value >= high)):
        bound = f"[{low}, {high}{']' if inclusive_high else ')'}" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be in {bound}, got {value}")
    return value
