"""Turn emitted source into a Python function, registered in `linecache` so tracebacks show it."""

from __future__ import annotations

import hashlib
import linecache
import math
import operator
from typing import Any, Callable

import numpy as np

from .emit_numpy import Emitted


def synthetic_filename(name: str, source: str) -> str:
    digest = hashlib.sha1(source.encode()).hexdigest()[:8]
    return f"<graphjit:{name}:{digest}>"


def compile_emitted(emitted: Emitted, globals_dict: dict, closure: dict) -> Callable:
    """Compile the generated function with its roots: `_g` (the user's globals), `_cells`, `_k`."""
    filename = synthetic_filename(emitted.name, emitted.source)
    linecache.cache[filename] = (len(emitted.source), None, emitted.source.splitlines(True), filename)
    from .fallback_runtime import make_fallback
    namespace: dict[str, Any] = {
        "np": np, "math": math, "operator": operator, "_make_fallback": make_fallback,
        "_g": globals_dict, "_cells": closure, "_k": emitted.consts,
    }
    code = compile(emitted.source, filename, "exec")
    exec(code, namespace)
    return namespace[emitted.name]
