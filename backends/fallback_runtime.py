"""Fallback blocks (LAX): the user's own statements, compiled as a small function at run time.

The code keeps the user's file name and line numbers, so a traceback through a fallback block
shows the user's lines; it runs with the globals of the module it came from.
"""

from __future__ import annotations

import types
from typing import Callable

_CACHE: dict = {}


def make_fallback(code: str, filename: str, line: int, globals_dict: dict) -> Callable:
    """The function `code` defines (its `def` on `line` of `filename`), bound to `globals_dict`."""
    key = (code, filename, line, id(globals_dict))
    fn = _CACHE.get(key)
    if fn is not None and fn.__globals__ is globals_dict:
        return fn
    module = compile("\n" * max(line - 1, 0) + code, filename, "exec")
    inner = next(c for c in module.co_consts if isinstance(c, types.CodeType))
    fn = types.FunctionType(inner, globals_dict, inner.co_name)
    _CACHE[key] = fn
    return fn
