"""Global execution settings: `set_context`/`get_context`, modes, syntax levels, `JitConfig`.

A leaf module: the pipeline stages read it, it imports none of them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any

GRAPH_MODE = 0
PYNATIVE_MODE = 1
STRICT, COMPATIBLE, LAX = "STRICT", "COMPATIBLE", "LAX"
JIT_LEVELS = ("O0", "O1", "O2")
EXEC_MODES = ("auto", "sink", "no_sink")


def normalize_level(level: Any) -> str:
    """`graphjit.STRICT`, "strict", "STRICT" -> "STRICT"; "" means "not set"."""
    if level in (None, ""):
        return ""
    text = str(level).upper()
    if text not in (STRICT, COMPATIBLE, LAX):
        raise ValueError(f"jit_syntax_level must be STRICT, COMPATIBLE or LAX, not {level!r}")
    return text


@dataclass(frozen=True)
class JitConfig:
    """How `jit` compiles: optimization level, execution mode, syntax level, and whether loops that
    stay loops may run as Numba kernels at O2 (`numba`; graphjit's own option, needs Numba installed,
    see docs/numba.md)."""

    jit_level: str = "O1"
    exec_mode: str = "auto"
    jit_syntax_level: str = ""
    numba: bool = True

    def __init__(self, jit_level: str = "O1", exec_mode: str = "auto", jit_syntax_level: str = "",
                 exc_mode: str = None, numba: bool = True, **kwargs):
        if kwargs:
            raise TypeError(f"JitConfig got unexpected options: {', '.join(sorted(kwargs))}")
        mode = exc_mode if exc_mode is not None else exec_mode  # MindSpore spells it `exc_mode`
        if jit_level not in JIT_LEVELS:
            raise ValueError(f"jit_level must be one of {', '.join(JIT_LEVELS)}, not {jit_level!r}")
        if mode not in EXEC_MODES:
            raise ValueError(f"exec_mode must be one of {', '.join(EXEC_MODES)}, not {mode!r}")
        object.__setattr__(self, "jit_level", jit_level)
        object.__setattr__(self, "exec_mode", mode)
        object.__setattr__(self, "jit_syntax_level", normalize_level(jit_syntax_level))
        if not isinstance(numba, bool):
            raise TypeError(f"numba must be True or False, not {numba!r}")
        object.__setattr__(self, "numba", numba)

    @property
    def exc_mode(self) -> str:
        return self.exec_mode

    def replace(self, **changes) -> "JitConfig":
        return replace(self, **changes)


_CONTEXT: dict[str, Any] = {"mode": PYNATIVE_MODE, "jit_syntax_level": LAX, "jit_config": JitConfig(),
                            "device_target": "CPU", "recompile_warning": 8}

# NOTE [epoch]: compiled entries depend on compile-time objects (a Cell's hyper-parameters and
# sub-cells, the context's jit_config). Checking all of them on every call would cost microseconds,
# so whatever can change them bumps this counter instead: `set_context`, and `Cell.__setattr__` /
# `set_train` / `set_jit_config` on a Cell some compiled graph depends on. A jitted function's fast
# path compares one integer; after a bump its next call re-checks every guard once.
EPOCH = [0]


def bump_epoch() -> None:
    EPOCH[0] += 1


def set_context(**kwargs) -> None:
    """`set_context(mode=GRAPH_MODE, jit_syntax_level=STRICT, jit_config=JitConfig(...))`."""
    for key, value in kwargs.items():
        if key == "mode":
            if value not in (GRAPH_MODE, PYNATIVE_MODE):
                raise ValueError(f"mode must be GRAPH_MODE or PYNATIVE_MODE, not {value!r}")
        elif key == "jit_syntax_level":
            value = normalize_level(value) or LAX
        elif key == "jit_config":
            if isinstance(value, dict):
                value = JitConfig(**value)
            if not isinstance(value, JitConfig):
                raise TypeError("jit_config must be a JitConfig or a dict")
        elif key == "recompile_warning":
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError("recompile_warning must be an int >= 0 (0: never warn)")
        elif key not in ("device_target", "device_id", "save_graphs", "save_graphs_path"):
            raise ValueError(f"unknown context option {key!r}")
        _CONTEXT[key] = value
    bump_epoch()


def get_context(key: str) -> Any:
    if key not in _CONTEXT:
        raise ValueError(f"unknown context option {key!r}")
    return _CONTEXT[key]


# `os.environ.get` costs about a microsecond (it encodes the key each time); a jitted call checks
# GRAPHJIT_DISABLE on every call, so it reads the encoded mapping behind `os.environ` directly
# (kept in sync by `os.environ.__setitem__`, so `monkeypatch.setenv` and `os.environ[...] = ` work).
_ENV_DATA = getattr(os.environ, "_data", None)
try:
    DISABLE_KEY = os.environ.encodekey("GRAPHJIT_DISABLE")
    _OFF = {os.environ.encodevalue(""), os.environ.encodevalue("0")}
except AttributeError:  # pragma: no cover - not CPython's os.environ
    _ENV_DATA = None
if _ENV_DATA is None:  # pragma: no cover
    DISABLE_KEY, _OFF = "GRAPHJIT_DISABLE", {"", "0"}
    ENV_GET = os.environ.get
else:
    ENV_GET = _ENV_DATA.get  # ENV_GET(DISABLE_KEY) is None when GRAPHJIT_DISABLE is unset


def disabled() -> bool:
    """`GRAPHJIT_DISABLE=1`: run everything eagerly (read at every call, cheaply)."""
    value = ENV_GET(DISABLE_KEY)
    return value is not None and value not in _OFF
