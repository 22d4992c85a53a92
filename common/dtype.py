"""`graphjit.common.dtype`: MindSpore's other import path for the data types of dtype.py
(`import mindspore.common.dtype as mstype`)."""

from graphjit.dtype import *  # noqa: F401,F403
from graphjit.dtype import __all__  # noqa: F401
