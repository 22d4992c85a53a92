"""Optimizers (`nn.SGD`, `nn.Momentum`, `nn.Adam`, `nn.AdamWeightDecay`, `nn.AdamW`): updates written in
NumPy, state kept in Parameters. One module per optimizer; `optimizer.py` holds what they share."""

from .optimizer import Optimizer
from .sgd import SGD
from .momentum import Momentum
from .adam import Adam
from .adam_weight_decay import AdamWeightDecay
from .adamw import AdamW

__all__ = ["Optimizer", "SGD", "Momentum", "Adam", "AdamWeightDecay", "AdamW"]
