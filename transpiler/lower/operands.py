"""Graph operands of lowered values: constants, captured outer values, compile-time objects read through their paths."""

from __future__ import annotations

import warnings
from typing import Any, Optional

import numpy as np

from ...graph.diagnostics import LoweringError
from ...graph.ir import Node
from ...graph.literals import is_literal
from ...graph.paths import Path
from ...graph.shape_rules import after_metadata_write
from ...graph.spans import SourceSpan
from ...graph.types import type_of_value
from ..rules import LAX
from ..values import (MaybeUnbound, MethodVal, RangeVal, Seq, SourceFunc, Static, UNBOUND, Undefined, describe_value,
                      freeze, is_static)
from .control import Poisoned


class OperandLowering:
    """Turns any lowered value into a node of the graph being built, and adds nodes."""

    # --- nodes -----------------------------------------------------------------------------
    def emit(self, op: str, operands=(), attrs=None, span=None, name: str = "", regions=(), type=None) -> Node:
        if op == "setattr":
            self.attr_writes.add(attrs["name"])  # reads of it must be made at call time (see lower_function)
        nodes = [self.operand(v, span) for v in operands]
        self.budget.made += 1
        return self.scope.graph.add(op, nodes, attrs, type, span, name, regions)

    def operand(self, value: Any, span: Optional[SourceSpan]) -> Node:
        """Any value as a node of the current graph (constants made here, outer values captured)."""
        if isinstance(value, MaybeUnbound):  # flows on as is (into a loop, a branch); reads test it
            value = value.value
        if isinstance(value, Node):
            if value.op == "const" and value.graph is not self.scope.graph:
                return self.scope.graph.const(value.value, value.span)
            return self.scope.local(value)
        if isinstance(value, Static):
            v = value.value
            if isinstance(v, np.ndarray):
                return self.scope.local(self.latest_version(self.array_value(value, span)))
            if isinstance(v, (list, dict)) and value.path is not None and _is_static_data(v):
                # a container held outside the function: the very object, read at each call
                return self.scope.local(self.object_param(value))
            if isinstance(v, (list, tuple)) and any(isinstance(i, np.ndarray) for i in v):
                return self.operand(Seq([self.static_item(value, k) for k in range(len(v))],
                                        "tuple" if isinstance(v, tuple) else "list"), span)
            if isinstance(v, dict):
                return self.dict_value(v, span)
            if isinstance(v, list) or isinstance(v, tuple) and _has_mutable(v):
                # built at compile time, but a new list (dict) at each call, as Python builds it
                return self.operand(Seq([Static(i) for i in v], "list" if isinstance(v, list) else "tuple"), span)
            if isinstance(v, np.dtype) and is_literal(v):
                return self.emit("call", [Static(v.name)], {"fn": "numpy.dtype"}, span)
            if not is_literal(freeze(value.value)) and value.path is not None:
                return self.scope.local(self.object_param(value))
            self.budget.made += 1
            return self.scope.graph.const(freeze(value.value), span)
        if isinstance(value, Seq):
            return self.emit("tuple" if value.kind == "tuple" else "list", value.items, span=span)
        if isinstance(value, Undefined):
            error = Poisoned if value.poisoned else LoweringError
            raise error(f"`{value.name}` may be unbound here: {value.reason}", span)
        raise LoweringError(f"{describe_value(value)} cannot be used as a value here", span)

    def maybe_operand(self, value, span) -> Node:
        """A value flowing into a phi; at LAX a maybe-unbound name flows as its value-or-UNBOUND."""
        if isinstance(value, Undefined) and not value.poisoned and self.level == LAX:
            return self.operand(value.maybe, span) if value.maybe is not None else \
                self.scope.graph.const(UNBOUND, span)
        if value is None and self.level == LAX:
            return self.scope.graph.const(UNBOUND, span)
        return self.operand(value, span)

    def dict_value(self, items: dict, span) -> Node:
        """A dict built at each call (returned, or passed to a Python function): COMPATIBLE."""
        if not all(is_literal(k) for k in items):
            raise LoweringError("dict keys must be literals to build the dict at run time", span)
        values = [v if isinstance(v, (Node, Static, Seq)) else Static(v) for v in items.values()]
        if any(not is_static(v) or isinstance(v, Static) and isinstance(v.value, np.ndarray) for v in values):
            self.require("return_dict", span)
        return self.emit("dict", [self.operand(v, span) for v in values], {"keys": tuple(items)}, span)

    def object_param(self, value: Static) -> Node:
        """A compile-time object read through its path at each call (to call it or set attributes)."""
        key = str(value.path)
        if key not in self.params:
            self.params[key] = self.graph.add_param(key, type_of_value(value.value), value.path.flat_name())
            self.param_objects[self.params[key].id] = value.value
        return self.params[key]

    def runtime_container(self, value: Static):
        """A list/dict/set this compile changes, as a run-time value (read at call time), else `value`."""
        if value.path is not None and isinstance(value.value, (list, dict, set)) \
                and id(value.value) in self.runtime_objects:
            node = self.scope.local(self.object_param(value))
            self.param_objects[node.id] = value.value  # also the region argument that captures it
            return node
        return value

    def note_container_write(self, obj) -> None:
        if isinstance(obj, (list, dict, set)):
            self.container_writes.add(id(obj))

    def flush_warnings(self) -> None:
        seen = set()
        for message, category, file, line in self.pending_warnings:
            if (message, file, line) not in seen:
                seen.add((message, file, line))
                warnings.warn_explicit(message, category, file, line)

    def object_operand(self, value, span) -> Node:
        if isinstance(value, Static) and not isinstance(value.value, np.ndarray):
            if value.path is not None:
                return self.scope.local(self.object_param(value))
            self.consts.append(value.value)
            return self.scope.local(self.object_param(Static(value.value, Path("const", len(self.consts) - 1))))
        return self.operand(value, span)

    def array_value(self, value: Static, span) -> Node:
        """An array as a run-time value: read through its path at each call, or a fresh copy.

        An array reached from a compile-time object (a weight, a global, a dict argument's item)
        is a parameter read through its access path at every call. An array the compiler built
        itself (`np.mgrid[0:n, 0:m]` of compile-time ints) has no path: it is kept as a constant
        and each call works on its own copy of it, so a call that writes it never changes the next.
        """
        if value.path is None:
            self.consts.append(value.value)
            const = Static(value.value, Path("const", len(self.consts) - 1))
            return self.emit("copy", [self.array_value(const, span)], span=span)
        key = str(value.path)
        if key not in self.params:
            self.params[key] = self.graph.add_param(key, type_of_value(value.value), value.path.flat_name())
        if key in self.unstable_paths:
            # a loop or branch changes this array's shape or dtype: each read is typed as it may be then
            param, wide = self.params[key], self.params[key].type
            for name in sorted(self.unstable_paths[key]):
                wide = after_metadata_write(wide, name, None)
            return self.emit("refresh", [param], span=span, name=param.name, type=wide)
        return self.params[key]

    def reached(self, value: Any, span) -> Any:
        """A value found at compile time (a global, an attribute, an item): arrays become run-time.

        The rule (docs/architecture.md): arrays are mutable, so they are never compile-time values,
        whichever path they arrive by; only immutable values are folded, each under a guard.
        """
        if isinstance(value, Static) and isinstance(value.value, np.ndarray):
            node = self.scope.local(self.array_value(value, span))
            if value.path is not None:
                self.path_of[node.id] = str(value.path)
            return node
        return value

    def static_item(self, value: Static, key) -> Static:
        return Static(value.value[key], value.path.item(key) if value.path else None)

    def const_object(self, obj: Any, recipe: Optional[tuple] = None) -> Static:
        """An object built at compile time (a Cell made inside the function): reachable as `const[k]`.

        `recipe` (class, args, kwargs) says how it was built, for code that must rebuild it.
        """
        self.consts.append(obj)
        if recipe is not None:
            self.recipes[len(self.consts) - 1] = recipe
        return Static(obj, Path("const", len(self.consts) - 1))

    def latest_version(self, value: Node) -> Node:
        """`value`, or the `refresh` of it a metadata write made (`a.shape = s` in an inlined helper,
        `d["a"].shape = s`), when that node is visible from the graph being built."""
        while value.id in self.refreshed and _visible(self.refreshed[value.id], self.scope.graph):
            value = self.refreshed[value.id]
        return value


def _has_mutable(value) -> bool:
    """Does a compile-time tuple hold a list, dict or dtype (values a literal cannot carry)?"""
    if isinstance(value, (list, dict, np.dtype)):
        return True
    return isinstance(value, tuple) and any(_has_mutable(v) for v in value)


def _is_static_data(value) -> bool:
    """A plain container of compile-time data (not one holding graph values built by this compile)."""
    items = value.values() if isinstance(value, dict) else value
    return not any(isinstance(v, (Node, Seq, Static, RangeVal, MethodVal, SourceFunc)) for v in items)


def _visible(node: Node, graph) -> bool:
    """Is `node` defined in `graph` or in a graph enclosing it?"""
    while graph is not None:
        if node.graph is graph:
            return True
        graph = graph.parent.graph if graph.parent is not None else None
    return False
