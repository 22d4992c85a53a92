"""Lowering a Python function into an SSA graph, one module per construct.

`lower_function(fn, args, kwargs)` (function.py) binds the call's arguments, walks the function's
LibCST tree and returns the graph with what the backend needs to run it.
"""
from .frame import Frame
from .function import AbstractArray, Lowered, is_runtime_arg, lower_function
from .state import LoweringState

__all__ = ["AbstractArray", "Frame", "Lowered", "LoweringState", "is_runtime_arg", "lower_function"]
