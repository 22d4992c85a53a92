"""Binding a name: in the frame, or in the module for a `global` name."""

from __future__ import annotations

from ...graph.ir import Node


def assign_name(state, name: str, value, frame) -> None:
    """Bind `name` to `value` in the frame (a `global` name: a store to the module at run time)."""
    if name in frame.declared_globals:
        state.written_globals.add((id(frame.globals), name))
        state.emit("store_global", [value], {"name": name, "scope": globals_scope(state, frame)})
        return
    if isinstance(value, Node) and not value.name and value.op not in ("const", "arg", "param"):
        value.name = name
    frame.env[name] = value


def globals_scope(state, frame):
    """How generated code reaches this frame's module globals: `_g`, or a compile-time object."""
    if frame.globals is state.root_globals:
        return "globals"
    return state.const_object(frame.globals).path.root
