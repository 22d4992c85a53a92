"""`Parameter` and `ParameterTuple`: the weights of a model, as MindSpore names them.

A Parameter is a NumPy array (a thin subclass) with a `name` and `requires_grad`. Compiled code
reads it through its access path at every call, like any array a model holds, so an optimizer
may change it in place between calls. What is computed from it is a plain array: arithmetic on a
Parameter (`w * 2`, `x @ w.T`) returns `numpy.ndarray`, so parameters never leak into results.
"""

from __future__ import annotations

import numpy as np

from .graph.guards import ARRAY_CLASSES


class Parameter(np.ndarray):
    """A named weight: `Parameter(data, name=None, requires_grad=True)`."""

    __graphjit_parameter__ = True

    def __new__(cls, default_input, name=None, requires_grad: bool = True, layerwise_parallel: bool = False,
                parallel_optimizer: bool = True):
        obj = np.array(default_input, copy=True).view(cls)
        obj.name = name
        obj.requires_grad = bool(requires_grad)
        return obj

    def __array_finalize__(self, obj) -> None:
        self.name = getattr(obj, "name", None)
        self.requires_grad = getattr(obj, "requires_grad", True)

    def __array_wrap__(self, array, context=None, return_scalar=False):
        """Results of ufuncs are plain arrays; an in-place update (`w -= lr * g`) stays this Parameter."""
        if array is self:
            return self
        plain = array.view(np.ndarray)
        return plain[()] if return_scalar else plain

    def __reduce__(self):
        return (_rebuild, (np.asarray(self), self.name, self.requires_grad))

    @property
    def data(self) -> "Parameter":
        return self

    def set_data(self, data) -> "Parameter":
        """Copy `data` into this Parameter (same shape), as MindSpore's `set_data` does."""
        self[...] = data
        return self

    def asnumpy(self) -> np.ndarray:
        return np.array(self, copy=True).view(np.ndarray)

    def __repr__(self) -> str:
        return f"Parameter (name={self.name}, shape={self.shape}, dtype={self.dtype}, " \
               f"requires_grad={self.requires_grad})"


ARRAY_CLASSES.add(Parameter)       # guards read a Parameter by dtype and shape, as an ndarray


def _rebuild(array, name, requires_grad):
    return Parameter(array, name, requires_grad)


class ParameterTuple(tuple):
    """A tuple of Parameters (what `weights=` and optimizers take)."""

    def __new__(cls, iterable=()):
        items = tuple(iterable)
        for k, p in enumerate(items):
            if not isinstance(p, Parameter):
                raise TypeError(f"ParameterTuple takes Parameters; item {k} is {type(p).__name__}")
        return super().__new__(cls, items)

    def clone(self, prefix: str, init: str = "same") -> "ParameterTuple":
        """New Parameters named `prefix.<name>`, copies of these (or zeros with `init='zeros'`)."""
        return ParameterTuple(Parameter(np.zeros_like(p) if init == "zeros" else p, f"{prefix}.{p.name}",
                                        p.requires_grad) for p in self)
