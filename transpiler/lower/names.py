"""Lowering names: locals, closure variables, globals (this module's or a helper's) and builtins."""

from __future__ import annotations

import builtins
import sys
import types
from typing import Any

import libcst as cst

from ...graph.diagnostics import LoweringError, UndefinedNameError
from ...graph.paths import Path
from ..values import MaybeUnbound, SourceFunc, Static, Undefined
from .bind import globals_scope
from .control import Poisoned
from .loops import read_maybe_unbound


def lower_name(state, node: cst.Name, frame) -> Any:
    return state.lookup(node.value, frame, state.span(node, frame))


def lookup(state, name: str, frame, span) -> Any:
    if name in frame.declared_globals or (name not in frame.env and name not in frame.closure
                                          and (id(frame.globals), name) in state.runtime_globals):
        # declared `global` here, or written by a helper's `global`: read at call time
        return state.emit("load_global", [], {"name": name, "scope": globals_scope(state, frame)}, span, name=name)
    if name in frame.env:
        value = frame.env[name]
        if isinstance(value, Undefined):
            if value.poisoned:
                raise Poisoned(f"`{name}` is not available: {value.reason}", span)
            raise LoweringError(f"`{name}` may be unbound here: {value.reason}", span)
        if isinstance(value, MaybeUnbound):
            return read_maybe_unbound(state, name, value, frame, span)
        if isinstance(value, Static) and getattr(type(value.value), "__graphjit_unresolved__", False):
            raise value.value.error(span)   # a default of a file read without running it, known only then
        return value
    if name in frame.closure:
        try:
            value = frame.closure[name].cell_contents
        except ValueError:
            raise LoweringError(f"free variable `{name}` is unbound", span) from None
        if isinstance(value, SourceFunc):
            return value
        is_root = frame.closure is state.root_closure
        path = Path("closure", name) if is_root else foreign_closure(state, frame, name)
        state.guards.read(path, value)
        return state.reached(state.runtime_container(Static(value, path)), span)
    if name in frame.globals:
        if getattr(type(frame.globals[name]), "__graphjit_unresolved__", False):
            raise frame.globals[name].error(span)
        is_root = frame.globals is state.root_globals
        value = frame.globals[name]
        if is_root:
            state.guards.read(Path("globals", name), value)
            return state.reached(state.runtime_container(Static(value, Path("globals", name))), span)
        module = module_of(state, frame)
        if module is not None:
            state.guards.read(Path("module", module.__name__).attr(name), value, module)
        return state.reached(state.runtime_container(Static(value, foreign_global(state, frame, name))), span)
    if name in ("True", "False", "None"):
        return Static({"True": True, "False": False, "None": None}[name])
    if hasattr(builtins, name):
        return Static(getattr(builtins, name))
    raise UndefinedNameError(f"name `{name}` is not defined", span)


def module_of(state, frame):
    """The module whose globals an inlined helper reads (None if it is not a module's)."""
    module = sys.modules.get(frame.globals.get("__name__"))
    return module if module is not None and getattr(module, "__dict__", None) is frame.globals else None


def foreign_global(state, frame, name: str):
    """A global of another module (an inlined helper's): reached through that module object."""
    value = frame.globals[name]
    if isinstance(value, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type, int, float,
                          str, bool, type(None))) or callable(value) and not hasattr(value, "__dict__"):
        return None  # nothing run-time can be reached through it
    module_name = frame.globals.get("__name__")
    module = sys.modules.get(module_name)
    if module is None or getattr(module, "__dict__", None) is not frame.globals:
        return None
    static = state.const_object(module)
    return static.path.attr(name)


def foreign_closure(state, frame, name: str):
    """A closure variable of an inlined helper: reached through its cell, kept as a compile-time object."""
    return state.const_object(frame.closure[name]).path.attr("cell_contents")
