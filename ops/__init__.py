"""`graphjit.ops`: MindSpore's functional namespace, written as plain NumPy functions.

Each function runs eagerly as NumPy and, called inside `jit`, is inlined like user code, so it
compiles to the op table's ops (graph/ops.py) and is differentiated by their rules. Each topic is one
module; this file only gathers their names.
"""

from graphjit.gradients import GradOperation, stop_gradient
from graphjit.ops.activations import *  # noqa: F401,F403
from graphjit.ops.activations import __all__ as _activations
from graphjit.ops.losses import *  # noqa: F401,F403
from graphjit.ops.losses import __all__ as _losses
from graphjit.ops.creation import *  # noqa: F401,F403
from graphjit.ops.creation import __all__ as _creation
from graphjit.ops.shaping import *  # noqa: F401,F403
from graphjit.ops.shaping import __all__ as _shaping
from graphjit.ops.math import *  # noqa: F401,F403
from graphjit.ops.math import __all__ as _math
from graphjit.ops.reductions import *  # noqa: F401,F403
from graphjit.ops.reductions import __all__ as _reductions
from graphjit.ops.random import *  # noqa: F401,F403
from graphjit.ops.random import __all__ as _random
from graphjit.ops.casting import *  # noqa: F401,F403
from graphjit.ops.casting import __all__ as _casting

__all__ = ["GradOperation", "stop_gradient", *_activations, *_losses, *_creation, *_shaping, *_math, *_reductions,
           *_random, *_casting]
