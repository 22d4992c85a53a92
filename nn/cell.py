"""`Cell`: the base of every layer and model; `__call__` honours GRAPH/PYNATIVE mode.

Sub-cells and parameters (NumPy arrays) are registered in attribute order as ordinary instance
attributes, so compiled code reads a weight as `self.dense.weight` with no lookup overhead.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Iterator

import numpy as np

from .. import context as _ctx
from ..parameter import Parameter


# NOTE [watched cells]: a Cell that some compiled graph read at compile time carries this
# attribute (set by the guard checks). Assigning anything to it except a weight of the same dtype
# and shape then bumps the context epoch, so jitted functions re-check their guards once instead
# of re-reading every hyper-parameter on every call. In-place changes to a list or dict held by a
# cell are not seen this way; those are checked on every call (see graph/guards.py).
WATCHED = "_graphjit_watched"


def _same_weight(old, new) -> bool:
    return type(old) in (np.ndarray, Parameter) and type(new) in (np.ndarray, Parameter) and old.dtype == new.dtype \
        and old.shape == new.shape


class Cell:
    """Base class of layers and models: define `construct`, call the instance."""

    __graphjit_cell__ = True

    def __init__(self, auto_prefix: bool = True, flags=None):
        object.__setattr__(self, "_cells", OrderedDict())
        object.__setattr__(self, "_params", OrderedDict())
        object.__setattr__(self, "training", False)
        object.__setattr__(self, "_jit_config", None)
        object.__setattr__(self, "_graph_call", None)
        object.__setattr__(self, "_auto_prefix", auto_prefix)  # False: sub-cells' names take no prefix here
        object.__setattr__(self, "_names", ((), ()))   # (parameter names, cell names), replaced on each change

    def __setattr__(self, name: str, value) -> None:
        if "_cells" not in self.__dict__:
            raise AttributeError(f"{type(self).__name__}.__init__ must call super().__init__() "
                                 "before assigning attributes")
        if WATCHED in self.__dict__ and not _same_weight(self.__dict__.get(name), value):
            _ctx.bump_epoch()  # a hyper-parameter or sub-cell a compiled graph read has changed
        cells, params = self.__dict__["_cells"], self.__dict__["_params"]
        cells.pop(name, None)
        params.pop(name, None)
        if isinstance(value, Cell):
            cells[name] = value
            for _ in value.parameters_and_names(name if self._auto_prefix else ""):  # full names from now on
                pass
        elif isinstance(value, np.ndarray) and not name.startswith("_"):
            params[name] = value
            if isinstance(value, Parameter) and value.name is None:
                value.name = name
        object.__setattr__(self, "_names", (tuple(params), tuple(cells)))
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if WATCHED in self.__dict__:
            _ctx.bump_epoch()
        self.__dict__["_cells"].pop(name, None)
        self.__dict__["_params"].pop(name, None)
        object.__setattr__(self, "_names", (tuple(self._params), tuple(self._cells)))
        object.__delattr__(self, name)

    def construct(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define construct()")

    def __call__(self, *args, **kwargs):
        if _ctx.get_context("mode") == _ctx.GRAPH_MODE and not _ctx.disabled() \
                and not hasattr(type(self).construct, "__graphjit_fn__"):
            call = self.__dict__.get("_graph_call")
            if call is None:
                from ..api import JitFunction
                call = JitFunction(type(self).construct).__get__(self)
                object.__setattr__(self, "_graph_call", call)
            return call(*args, **kwargs)
        return self.construct(*args, **kwargs)

    # --- structure -------------------------------------------------------------------------
    def cells_and_names(self, prefix: str = "") -> Iterator[tuple]:
        yield prefix, self
        for name, cell in self._cells.items():
            yield from cell.cells_and_names(f"{prefix}.{name}" if prefix else name)

    def name_cells(self) -> "OrderedDict[str, Cell]":
        return OrderedDict(self._cells)

    def cells(self) -> list:
        return list(self._cells.values())

    def parameters_and_names(self, prefix: str = "") -> Iterator[tuple]:
        """(MindSpore-style name, Parameter) for every weight: `dense_relu_sequential.0.weight`. A
        Parameter that has no name, or one its full name ends with (`weight`, `0.weight`), takes the
        full one; a name the user gave stays."""
        for name, value in self._params.items():
            full = f"{prefix}.{name}" if prefix else name
            if isinstance(value, Parameter) and (value.name is None or full == value.name
                                                 or full.endswith("." + value.name)):
                value.name = full
            yield full, value
        for name, cell in self._cells.items():
            full = (f"{prefix}.{name}" if prefix else name) if self._auto_prefix else prefix
            yield from cell.parameters_and_names(full)

    def parameters(self) -> list:
        return self._parameter_list()

    def _parameter_list(self) -> list:
        """Every weight, in definition order. Built without generators, so compiled code calling it
        unrolls it into reads of the weights through their paths; the names come from `_names`, a
        tuple replaced (never mutated) on every change, so a compiled graph sees a new weight."""
        param_names, cell_names = self._names
        return [getattr(self, name) for name in param_names] \
            + [p for name in cell_names for p in self._cells[name]._parameter_list()]

    def trainable_params(self, recurse: bool = True) -> list:
        """The Parameters that take gradients (`requires_grad`), in definition order."""
        return [p for p in self._parameter_list() if getattr(p, "requires_grad", True)]

    def parameters_dict(self) -> "OrderedDict[str, np.ndarray]":
        return OrderedDict(self.parameters_and_names())

    def set_train(self, mode: bool = True) -> "Cell":
        """Training (`mode=True`) or evaluation mode for this cell and every sub-cell (`training`);
        returns the cell. Compiled graphs read `training` under a guard: a switch is seen at the next call."""
        for _, cell in self.cells_and_names():
            object.__setattr__(cell, "training", mode)
        _ctx.bump_epoch()  # `self.training` may have been read at compile time
        return self

    def set_grad(self, requires_grad: bool = True) -> "Cell":
        """MindSpore's `set_grad`: marks the cell as one whose gradients will be taken. Gradients
        here are a graph transform of whatever function is differentiated, so this only records
        the flag (`requires_grad`) and returns the cell."""
        object.__setattr__(self, "requires_grad", bool(requires_grad))
        return self

    def set_jit_config(self, jit_config) -> None:
        """Compile this cell's `construct` with `jit_config` (GRAPH mode and `@jit` alike)."""
        object.__setattr__(self, "_jit_config", jit_config)
        object.__setattr__(self, "_graph_call", None)
        _ctx.bump_epoch()

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        """MindSpore 2.x's form: `Name(extra)`, or `Name(` with one `(child): ...` line per sub-cell and `)`."""
        name, extra = type(self).__name__, self.extra_repr()
        if not self._cells:
            return f"{name}({extra})"
        lines = [f"{name}("] + [f"  {line}" for line in extra.splitlines()]
        for child, cell in self._cells.items():
            sub = repr(cell).replace("\n", "\n  ")
            lines.append(f"  ({child}): {sub}")
        lines.append(")")
        return "\n".join(lines)
