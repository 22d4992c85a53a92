"""`graphjit.nn.init`: the initializers of common/initializer.py, and the helpers layers build their weights
with (common/init_values.py)."""

from graphjit.common.initializer import *  # noqa: F401,F403
from graphjit.common.initializer import __all__  # noqa: F401
from graphjit.common.init_values import fans, he_uniform, initialize, set_seed, uniform  # noqa: F401
