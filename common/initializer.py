"""`graphjit.common.initializer`: MindSpore's import path for the parameter initializers of nn/init.py."""

from graphjit.nn.init import *  # noqa: F401,F403
from graphjit.nn.init import __all__  # noqa: F401
