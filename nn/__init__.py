"""Layers for models: `Cell`, MindSpore's layers, losses, optimizers and training wrappers.

Each topic is one module with its own `__all__`; this file only gathers their names.
"""

from .cell import Cell
from .layers import Dense, Flatten, ReLU, SequentialCell, Sigmoid, Softmax, Tanh
from .layers import CellList, Dropout, Embedding
from .activation import *  # noqa: F401,F403
from .activation import __all__ as _activation
from .conv import *  # noqa: F401,F403
from .conv import __all__ as _conv
from .pooling import *  # noqa: F401,F403
from .pooling import __all__ as _pooling
from .normalization import *  # noqa: F401,F403
from .normalization import __all__ as _normalization
from .loss import *  # noqa: F401,F403
from .loss import __all__ as _loss
from .optim import *  # noqa: F401,F403
from .optim import __all__ as _optim
from .wrap import *  # noqa: F401,F403
from .wrap import __all__ as _wrap
from .graph_cell import GraphCell

__all__ = ["Cell", "Dense", "Flatten", "SequentialCell",
           "CellList", "Dropout", "Embedding", *_activation,
           *_conv, *_pooling, *_normalization, *_loss, *_optim, *_wrap, "GraphCell"]
