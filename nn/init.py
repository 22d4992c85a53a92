"""`graphjit.nn.init`: the initializers of common/initializer.py, and the helpers layers build their weights with."""

from graphjit.common.initializer import *  # noqa: F401,F403
from graphjit.common.initializer import (__all__, fans, he_uniform, initialize, set_seed,  # noqa: F401
                                         uniform)
