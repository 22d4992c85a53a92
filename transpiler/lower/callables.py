"""Facts about Python callables the call lowering asks: where a function lives, its parameters, whether it is library code."""

from __future__ import annotations

import builtins
import importlib
import inspect
import os
import pathlib
import sys
import sysconfig
import types
from typing import Optional

import numpy as np

from ...graph.literals import is_literal
from ..rules import BUILTIN_RULES
from ..values import Static, static_value

_PUBLIC_MODULES = ("numpy", "numpy.linalg", "numpy.fft", "numpy.random", "math")
_QUALNAMES: dict = {}


def qualified_name(fn) -> Optional[str]:
    """`numpy.linalg.norm` for a callable in a module we may call from generated code."""
    key = id(fn)
    if key in _QUALNAMES:
        return _QUALNAMES[key]
    name = _lookup_qualified(fn)
    _QUALNAMES[key] = name
    return name


def _lookup_qualified(fn) -> Optional[str]:
    """Ask the callable where it lives first (cheap); walk the public modules only if needed.

    Walking them all costs ~0.4 s once (it loads NumPy's lazy submodules), so it is the last resort.
    """
    attr = getattr(fn, "__name__", None)
    if not isinstance(attr, str) or attr.startswith("_") or isinstance(fn, type):
        return None
    home = getattr(fn, "__module__", None) or ""
    if isinstance(getattr(fn, "__self__", None), np.random.RandomState):
        home = "numpy.random"
    candidates = [m for m in _PUBLIC_MODULES if home == m or home.startswith(m + ".")]
    candidates.sort(key=len, reverse=True)
    for mod_name in candidates + [m for m in _PUBLIC_MODULES if m not in candidates]:
        module = sys.modules.get(mod_name)
        if module is None and mod_name not in candidates:
            continue  # never load a module just to look a function up in it
        if module is None:
            module = importlib.import_module(mod_name)
        if getattr(module, attr, None) is fn:
            return f"{mod_name}.{attr}"
    return None


IMMUTABLE = (str, bytes, int, float, complex, tuple, frozenset, range)
MUTATING_METHODS = {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "update",
                    "setdefault", "popitem", "add", "discard", "difference_update", "intersection_update",
                    "symmetric_difference_update", "__setitem__", "__delitem__", "__iadd__"}


_LIBRARY_DIRS: list = []   # (directory, is_library), the longest matching directory decides


def holds_array(args: list, kwargs: dict) -> bool:
    """Is an argument a compile-time array? A function the table does not know may write it
    (`np.fill_diagonal(W, 0)`, `np.add.at(W, i, 1)`), so the call runs at call time."""
    def holds(value) -> bool:
        v = static_value(value)
        return isinstance(v, np.ndarray) or isinstance(v, (list, tuple, dict)) and any(
            holds(Static(i)) for i in (v.values() if isinstance(v, dict) else v))
    return any(holds(a) for a in [*args, *kwargs.values()])


def reaches_array(value) -> bool:
    """Does a compile-time value hold an array, itself or in an attribute (a CSRTensor's `values`)?
    Arithmetic on it must run at call time: its arrays may change between calls."""
    v = static_value(value)
    if holds_array([value], {}):
        return True
    if isinstance(v, (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType)) or is_literal(v):
        return False
    attrs = list(getattr(v, "__dict__", {}).values())
    attrs += [getattr(v, s, None) for s in getattr(type(v), "__slots__", ()) if isinstance(s, str)]
    return holds_array([Static(a) for a in attrs], {})


# compile-time values whose operators give the same result at every call (nothing in them can change)
_IMMUTABLE_KINDS = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, range, frozenset, bytes,
                    np.dtype)
# builtin containers: their contents are guarded where they are read (a change recompiles)
_GUARDED_CONTAINERS = (list, dict, set)


def may_fold(value) -> bool:
    """May an operator on this compile-time value run now, at compile time? Only when the value cannot
    change between calls: literals and other immutable values, and builtin containers (guarded) that
    hold no array. An object of any other class (a CSRTensor, a user's class with `__add__`) may read
    arrays or other state its operator reaches through its attributes: its operators run at call time."""
    v = static_value(value)
    if reaches_array(value):
        return False
    return is_literal(v) or isinstance(v, _IMMUTABLE_KINDS + _GUARDED_CONTAINERS)


_POSITIONAL_NAMES: dict = {}


def out_by_keyword(fn, args: list, kwargs: dict, reduction: bool = False) -> tuple:
    """`np.dot(a, b, c)` as `np.dot(a, b, out=c)`: arguments from NumPy's `out` parameter on are
    passed by keyword, so the node's `out` is the keyword the op table's `writes` rule reads (a
    reduction keeps only `a, axis` positional: `np.sum(a, 0, None, b)`). A ufunc's positional
    `out` stays where it is: that rule knows the ufunc's `nin`.
    """
    if fn is None or isinstance(fn, np.ufunc) or not callable(fn):
        return args, kwargs
    names = positional_names(fn)
    if "out" not in names or len(args) <= names.index("out"):
        return args, kwargs
    first = min(2, names.index("out")) if reduction else names.index("out")
    moved = dict(kwargs)
    moved.update(zip(names[first:], args[first:]))
    return args[:first], moved


def positional_names(fn) -> tuple:
    """Names of `fn`'s parameters that may be given positionally, in order (() if unknown)."""
    key = id(fn)
    if key not in _POSITIONAL_NAMES:
        try:
            params = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            params = ()
        names = []
        for p in params:
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                break
            names.append(p.name)
        _POSITIONAL_NAMES[key] = tuple(names)
    return _POSITIONAL_NAMES[key]


def library_function(fn) -> bool:
    """A Python function of the standard library or an installed package: called, never inlined.

    Its code is not the user's: inlining it would report its internals as the user's problems (or
    run them as fallback blocks), and its effects (random numbers, clocks, I/O) belong at call time.
    graphjit's own package is compiled like the user's code.
    """
    func = getattr(fn, "__func__", fn)
    code = getattr(func, "__code__", None)
    if code is None:
        return False
    if not _LIBRARY_DIRS:
        paths = sysconfig.get_paths()
        for key in ("stdlib", "platstdlib", "purelib", "platlib"):
            if paths.get(key):
                _LIBRARY_DIRS.append((os.path.realpath(paths[key]) + os.sep, True))
        graphjit_dir = pathlib.Path(__file__).resolve().parents[2]   # graphjit/transpiler/lower/callables.py
        _LIBRARY_DIRS.append((str(graphjit_dir) + os.sep, False))
    filename = os.path.realpath(code.co_filename)
    matches = [(len(d), is_library) for d, is_library in _LIBRARY_DIRS if filename.startswith(d)]
    return bool(matches) and max(matches)[1]


def rule_of_builtin(fn):
    """The rule row of a builtin the table lists (`iter`, `eval`, `set`, `setattr`...), else None."""
    name = getattr(fn, "__name__", "")
    try:
        if getattr(builtins, name, None) is fn:
            return BUILTIN_RULES.get(name)
    except TypeError:
        return None
    return None


def is_cell(obj) -> bool:
    return hasattr(type(obj), "construct") and not isinstance(obj, type) and getattr(obj, "__graphjit_cell__", False)


def callable_name(fn) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
