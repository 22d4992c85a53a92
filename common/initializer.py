"""`graphjit.common.initializer`: MindSpore's `mindspore.common.initializer`, the initializer classes of
common/init_values.py and `initializer(init, shape, dtype)`, which makes a Tensor of their values."""

import numpy as np

from graphjit.common.init_values import *  # noqa: F401,F403
from graphjit.common.init_values import __all__ as _classes
from graphjit.common.init_values import initial_values
from graphjit.tensor import Tensor

__all__ = [*_classes, "initializer"]


def initializer(init, shape=None, dtype=np.float32) -> Tensor:
    """MindSpore's `initializer(init, shape=None, dtype=float32)`: a Tensor of `shape` filled by `init`, an
    Initializer, one of their names ('normal', 'he_uniform', ...), a number (every element) or a Tensor
    (its shape must be `shape`). Filled now: `init_data()` returns the Tensor itself."""
    return Tensor.from_numpy(initial_values(init, shape, dtype))
