"""Which Python callables an opaque `call` node may name: NumPy, math and a few builtins.

Shared by the interpreter, the static evaluator and the graph loader, so a graph from a file
can never name an arbitrary function: a loaded graph's names come from the closed tables of
`graph/loadable.py` (`resolve_loadable`, `resolve_exception`), looked up without importing anything.
"""

from __future__ import annotations

import builtins
import importlib
from typing import Callable

from . import loadable
from .diagnostics import GraphjitError

SAFE_CALL_MODULES = ("numpy", "math", "builtins", "operator")
SAFE_BUILTINS = {"float", "int", "bool", "len", "min", "max", "abs", "round", "sum", "range", "tuple",
                 "list", "complex", "divmod", "pow", "print", "any", "all", "sorted", "str", "repr", "format",
                 "type"}
# exception classes a `raise` node may name
SAFE_BUILTINS |= {name for name in dir(builtins)
                  if isinstance(getattr(builtins, name), type) and issubclass(getattr(builtins, name), BaseException)}


def resolve_loadable(qualified: str) -> Callable:
    """The function a `call` node of a graph read from a file names: only an entry of `loadable.CALLS`."""
    if not isinstance(qualified, str) or qualified not in loadable.CALLS:
        module, _, name = str(qualified).rpartition(".")
        what = f"builtin {name!r}" if module == "builtins" else repr(qualified)
        raise GraphjitError(f"`call` of {what} is not allowed in a loaded graph")
    return loadable.lookup(qualified)


def resolve_exception(qualified: str) -> type:
    """The builtin exception class a `raise` node names (`'builtins.ValueError'`); nothing else.

    Compiled code names builtin exceptions this way (transpiler/lower/simple.py); the name is looked
    up in `builtins` alone, and anything but an exception class is refused.
    """
    module, _, name = qualified.rpartition(".")
    cls = getattr(builtins, name, None) if module == "builtins" and name.isidentifier() else None
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        raise GraphjitError(f"`raise` of {qualified!r}: not a builtin exception class")
    return cls


def check_callable_name(qualified) -> None:
    """Refuse, from the name alone (nothing imported), what `resolve_callable` would: a name outside
    NumPy, math, operator and the safe builtins, or with a private part (`numpy._x`, `a.__b__`)."""
    if not isinstance(qualified, str):
        raise GraphjitError(f"`call` needs the dotted name of a function, not {qualified!r}")
    module, _, name = qualified.rpartition(".")
    if not any(module == m or module.startswith(m + ".") for m in SAFE_CALL_MODULES):
        raise GraphjitError(f"`call` of {qualified!r} is not allowed: only NumPy, math and builtins")
    if module == "builtins" and name not in SAFE_BUILTINS:
        raise GraphjitError(f"`call` of builtin {name!r} is not allowed")
    if any(not part.isidentifier() or part.startswith("_") for part in qualified.split(".")):
        raise GraphjitError(f"`call` of {qualified!r} is not allowed: not a public name")


def resolve_callable(qualified: str) -> Callable:
    """The function named `numpy.linalg.norm`, `math.exp`, `builtins.min`; anything else refused."""
    check_callable_name(qualified)
    module, _, name = qualified.rpartition(".")
    try:
        fn = getattr(importlib.import_module(module), name, None)
    except ImportError:
        fn = None
    if fn is None or not callable(fn) or name.startswith("_"):
        raise GraphjitError(f"{qualified!r} is not a callable")
    return fn
