"""Which Python callables an opaque `call` node may name: NumPy, math and a few builtins.

Shared by the interpreter, the static evaluator and the graph loader, so a graph from a file
can never name an arbitrary function.
"""

from __future__ import annotations

import importlib
from typing import Callable

from .diagnostics import GraphjitError

SAFE_CALL_MODULES = ("numpy", "math", "builtins", "operator")
SAFE_BUILTINS = {"float", "int", "bool", "len", "min", "max", "abs", "round", "sum", "range", "tuple",
                 "list", "complex", "divmod", "pow", "print", "any", "all", "sorted", "str", "repr", "format",
                 "type"}
# exception classes a `raise` node may name
SAFE_BUILTINS |= {name for name in dir(__import__("builtins"))
                  if isinstance(getattr(__import__("builtins"), name), type)
                  and issubclass(getattr(__import__("builtins"), name), BaseException)}


# For graphs read from a file (graphjit.load): only these modules, only functions and ufuncs (no
# classes, no callable objects such as `numpy.test`), and none of the names below, which read or
# write files, take callables, or change global state.
LOADABLE_MODULES = ("numpy", "numpy.linalg", "numpy.fft", "math", "builtins")
NOT_LOADABLE = {
    "load", "save", "savez", "savez_compressed", "loadtxt", "savetxt", "genfromtxt", "fromfile", "fromregex",
    "fromstring", "frombuffer", "memmap", "frompyfunc", "vectorize", "piecewise", "apply_along_axis",
    "apply_over_axes", "set_printoptions", "get_printoptions", "printoptions", "setbufsize", "seterr",
    "seterrcall", "geterrcall", "errstate", "info", "show_config", "show_runtime", "get_include", "test",
}


def resolve_loadable(qualified: str) -> Callable:
    """`resolve_callable`, restricted further for a `call` node in a graph file (see LOADABLE_MODULES)."""
    module, _, name = qualified.rpartition(".")
    if module not in LOADABLE_MODULES or name in NOT_LOADABLE or name.startswith("_"):
        raise GraphjitError(f"`call` of {qualified!r} is not allowed in a loaded graph")
    fn = resolve_callable(qualified)
    import types

    import numpy as np
    if not isinstance(fn, (types.FunctionType, types.BuiltinFunctionType, np.ufunc)) \
            and type(fn).__name__ != "_ArrayFunctionDispatcher":
        raise GraphjitError(f"`call` of {qualified!r} is not allowed in a loaded graph: not a function")
    return fn


def resolve_callable(qualified: str) -> Callable:
    """The function named `numpy.linalg.norm`, `math.exp`, `builtins.min`; anything else refused."""
    module, _, name = qualified.rpartition(".")
    if not any(module == m or module.startswith(m + ".") for m in SAFE_CALL_MODULES):
        raise GraphjitError(f"`call` of {qualified!r} is not allowed: only NumPy, math and builtins")
    if module == "builtins" and name not in SAFE_BUILTINS:
        raise GraphjitError(f"`call` of builtin {name!r} is not allowed")
    try:
        fn = getattr(importlib.import_module(module), name, None)
    except ImportError:
        fn = None
    if fn is None or not callable(fn) or name.startswith("_"):
        raise GraphjitError(f"{qualified!r} is not a callable")
    return fn
