"""MindSpore's other `jit` keywords: what each means here, and the one warning for those that mean nothing.

`jit` (api.py) accepts the keywords of MindSpore 2.x (`capture_mode`, `backend`, `dynamic=0/1`,
backend `**options`) and of MindSpore 2.2-2.5 (`fn=`, `mode`, `input_signature`, `hash_args`,
`compile_once`). This module reads them:

* `dynamic=1` is graphjit's `dynamic=True` and `dynamic=0` its default;
* `input_signature` becomes `dynamic=` (its None dimensions are compiled shape-generic) and a check
  of each call's dtypes and shapes against it (a TypeError, as in MindSpore);
* the rest have no effect on graphjit's NumPy backend. The values that would change what MindSpore
  does (`capture_mode="bytecode"`, `backend="GE"`, ...) warn once per process with a
  `GraphjitWarning` naming the keyword and the reason; MindSpore's defaults are silent.

The table `NO_EFFECT` is the list docs/jit-keywords.md explains.
"""

from __future__ import annotations

import warnings
from typing import Any, Optional

import numpy as np

from .graph.diagnostics import GraphjitWarning, user_stacklevel

# keyword -> (values that warn nothing: MindSpore's defaults, or None when graphjit already behaves as every
# value asks; the values MindSpore accepts, or None for any; why the keyword has no effect here)
NO_EFFECT = {
    "capture_mode": (("ast",), ("ast", "bytecode", "trace"),
                     "graphjit always builds the graph from the function's source (capture_mode='ast'); what "
                     "the graph cannot hold runs in Python (LAX fallback), not by bytecode capture or tracing"),
    "mode": (("PSJit",), ("PSJit", "PIJit"),
             "graphjit always builds the graph from the function's source (mode='PSJit'), never from bytecode"),
    "backend": (("", "ms_backend"), ("", "ms_backend", "GE"),
                "graphjit emits NumPy code run on the CPU; there is no Ascend GraphEngine backend"),
    "compile_once": ((False,), (False, True),
                     "graphjit keys compiled code by the function's code and guards the free variables it "
                     "read, so a re-created function is compiled or reused as needed and never runs stale values"),
    "hash_args": (None, None,
                  "graphjit guards the free variables and objects a graph reads and recompiles when they "
                  "change, with or without hash_args"),
}

# MindSpore's backend options (`jit(..., **options)`), for GPU and Ascend kernels
BACKEND_OPTIONS = {
    "disable_format_transform": "a GPU kernel-format option",
    "exec_order": "an Ascend kernel-ordering option",
    "ge_options": "an option of Ascend's GraphEngine",
    "infer_boost": "an Ascend inference option",
}

_WARNED: set = set()


def warn_once(keyword: str, value: Any, why: str) -> None:
    """A GraphjitWarning `jit(keyword=value) has no effect in graphjit: why`, once per keyword and value."""
    key = (keyword, repr(value))
    if key in _WARNED:
        return
    _WARNED.add(key)
    warnings.warn(f"jit({keyword}={value!r}) has no effect in graphjit: {why}", GraphjitWarning,
                  stacklevel=user_stacklevel())


def check_keywords(values: dict, options: dict) -> None:
    """Check MindSpore's keywords without an effect here: a ValueError for a value MindSpore does not
    accept either, a warning (once) for one that would change what MindSpore does, silence for its
    defaults; a TypeError for an option MindSpore does not have either."""
    for keyword, value in values.items():
        quiet, allowed, why = NO_EFFECT[keyword]
        if allowed is not None and not _among(value, allowed):
            raise ValueError(f"jit(): {keyword} must be one of {', '.join(map(repr, allowed))}, not {value!r}")
        if quiet is not None and not _among(value, quiet):
            warn_once(keyword, value, why)
    unknown = sorted(set(options) - set(BACKEND_OPTIONS))
    if unknown:
        raise TypeError(f"jit() got unexpected options: {', '.join(unknown)}")
    for name, value in options.items():
        warn_once(name, value, f"{BACKEND_OPTIONS[name]} of MindSpore; graphjit's NumPy backend has none")


def _among(value, values: tuple) -> bool:
    return any(value is v or (type(value) is type(v) and value == v) for v in values)


def function_argument(function, fn):
    """`jit(f)`, `jit(function=f)` (MindSpore 2.6+) or `jit(fn=f)` (MindSpore 2.2-2.5)."""
    if function is not None and fn is not None:
        raise TypeError("jit() got both `function` and `fn`; pass the function once")
    return function if function is not None else fn


def dynamic_argument(dynamic):
    """MindSpore's `dynamic=0` / `dynamic=1` as graphjit's None / True; graphjit's own forms unchanged."""
    if isinstance(dynamic, int) and not isinstance(dynamic, bool):
        if dynamic not in (0, 1):
            raise ValueError(f"jit(): dynamic must be 0 or 1 (MindSpore), True, a parameter name or names, or "
                             f"{{name: axes}}, not {dynamic!r}")
        return True if dynamic else None
    return dynamic


class InputSignature:
    """MindSpore's `input_signature`: per parameter, a dtype and a shape whose None (or -1) dimensions
    are dynamic. It gives graphjit's `dynamic=` and checks the arguments of each call that compiles or
    looks up an entry (calls that hit an entry were checked when it was made)."""

    def __init__(self, specs: dict, names: list):
        self.specs = specs                       # parameter position -> (name, dtype, shape or None)
        self.names = names

    @classmethod
    def build(cls, signature, names: list, dynamic) -> Optional["InputSignature"]:
        if signature is None:
            return None
        if dynamic not in (None, False):
            raise ValueError("jit(): give input_signature or dynamic, not both")
        inputs = names[1:] if names[:1] == ["self"] else names
        first = len(names) - len(inputs)
        if isinstance(signature, dict):
            for name in signature:
                if name not in inputs:
                    raise ValueError(f"jit(): input_signature names {name!r}, which is not a parameter "
                                     f"({', '.join(inputs)})")
            pairs = [(names.index(n), s) for n, s in signature.items()]
        else:
            items = list(signature) if isinstance(signature, (tuple, list)) else [signature]
            if len(items) > len(inputs):
                raise ValueError(f"jit(): input_signature has {len(items)} entries for {len(inputs)} parameters "
                                 f"({', '.join(inputs)})")
            pairs = [(first + k, s) for k, s in enumerate(items)]
        specs = {k: (names[k], *_spec(names[k], s)) for k, s in pairs if s is not None}
        return cls(specs, names)

    @property
    def dynamic(self) -> dict:
        """graphjit's `dynamic=`: the parameters with dynamic dimensions, and which."""
        out = {}
        for name, _, shape in self.specs.values():
            axes = True if shape is None else [k for k, d in enumerate(shape) if d is None]
            if axes:
                out[name] = axes
        return out

    def check(self, args: tuple, qualname: str) -> None:
        for k, (name, dtype, shape) in self.specs.items():
            a = args[k]
            if not isinstance(a, np.ndarray) or a.dtype != dtype or (shape is not None and (
                    a.ndim != len(shape) or any(d is not None and d != n for d, n in zip(shape, a.shape)))):
                got = f"{a.dtype} {a.shape}" if isinstance(a, np.ndarray) else type(a).__name__
                raise TypeError(f"{qualname}(): argument {name!r} does not match input_signature: expected "
                                f"{describe(dtype, shape)}, got {got}")


def _spec(name: str, placeholder) -> tuple:
    """(dtype, shape with None for dynamic dimensions, or None for a dynamic rank) of a Tensor placeholder."""
    if not hasattr(placeholder, "dtype") or not hasattr(placeholder, "shape"):
        raise TypeError(f"jit(): input_signature for {name!r} must be a Tensor (with a shape and a dtype), "
                        f"not {type(placeholder).__name__}")
    dtype = _numpy_dtype(placeholder.dtype, name)
    shape = placeholder.shape
    if shape is None:
        return dtype, None
    dims = tuple(None if d is None or d == -1 else int(d) for d in shape)
    if any(d is not None and d < 0 for d in dims):
        raise ValueError(f"jit(): input_signature for {name!r} has shape {tuple(shape)}; use None or -1 for a "
                         "dynamic dimension")
    return dtype, dims


def _numpy_dtype(dtype, name: str) -> np.dtype:
    try:
        return np.dtype(dtype)
    except TypeError:
        pass
    try:
        return np.dtype(str(dtype).rsplit(".", 1)[-1].lower())    # MindSpore's `Float32`, `mindspore.float32`
    except TypeError:
        raise TypeError(f"jit(): input_signature for {name!r} has dtype {dtype!r}, which is not a NumPy dtype") \
            from None


def describe(dtype: np.dtype, shape) -> str:
    """`float32[?, 3]`, `float32[...]` for a dynamic rank."""
    dims = "..." if shape is None else ", ".join("?" if d is None else str(d) for d in shape)
    return f"{dtype}[{dims}]"
