"""`Tensor`: MindSpore's tensor, a thin NumPy array subclass whose results stay Tensors.

Every NumPy result computed from a Tensor is a Tensor (`x + 1`, `np.exp(x)`, `x.sum()`, `x[0]`, ...),
a full reduction included (a 0-d Tensor, where NumPy gives a scalar), as MindSpore's results are: the
ufunc and array-function hooks below run NumPy on plain arrays and view the results as Tensors.
`np.array(x)`, `np.asarray(x)` and `x.asnumpy()` give plain arrays.

Compiled code does not pay for the hooks: the compiler views Tensor arguments as plain arrays on
entry and views the results that are Tensors in eager mode (graph/tensor_boundary.py) as Tensors on
exit, with `as_tensor` below. Dtypes are NumPy's (`graphjit.float32 is numpy.float32`), so
`x.dtype == ms.float32` and `Tensor(x, ms.int32)` read as in MindSpore.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .common.init_values import draws_random_numbers, initializer_object
from .graph.guards import ARRAY_CLASSES


class Tensor(np.ndarray):
    """`Tensor(input_data=None, dtype=None, shape=None, init=None)`: a copy of `input_data` as an array.

    Python floats give float32 as in MindSpore (NumPy arrays keep their dtype). With `init` (an initializer
    of common/initializer.py such as `One()` or `Normal()`, its name such as 'ones', or a number) and
    `shape`, the values are the initializer's, of `dtype` (float32 if not given); with `shape` alone, zeros.
    """

    __graphjit_op__ = "tensor"   # inside a graph: a new array that leaves the graph as a Tensor

    @staticmethod
    def __graphjit_effect__(*args, **kwargs) -> Optional[str]:
        """Why `Tensor(...)` in a graph must run as Python: an initializer that draws random numbers
        (each call draws new ones, in order, as eager code does); None for the others. The compiler passes
        the call's compile-time arguments (None for the others)."""
        data = kwargs.get("input_data", args[0] if args else None)
        init = kwargs.get("init", args[3] if len(args) > 3 else None)
        if data is None and init is not None and draws_random_numbers(init):
            return f"Tensor(init={init!r}) draws random numbers when it runs"
        return None

    def __new__(cls, input_data: Any = None, dtype: Any = None, shape: Any = None, init: Any = None):
        return tensor_data(input_data, dtype, shape, init).view(cls)

    def init_data(self) -> "Tensor":
        """The initialized Tensor: this one (graphjit fills a Tensor's values when it is made, where MindSpore
        waits for the first use)."""
        return self

    @staticmethod
    def from_numpy(array: np.ndarray) -> "Tensor":
        """A Tensor sharing `array`'s memory."""
        return np.asarray(array).view(Tensor)

    def asnumpy(self) -> np.ndarray:
        """This Tensor as a plain NumPy array, sharing its memory (as on MindSpore's CPU)."""
        return self.view(np.ndarray)

    def numpy(self) -> np.ndarray:
        """The same as `asnumpy()`."""
        return self.view(np.ndarray)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.get("out")
        if kwargs:
            kwargs = {k: plain_all(v) for k, v in kwargs.items()}     # out=, where=
        result = getattr(ufunc, method)(*(plain(a) for a in inputs), **kwargs)
        if out:   # written in place: the caller's own arrays (a Parameter stays a Parameter)
            return out[0] if len(out) == 1 else out
        return as_tensor(result)

    def __array_function__(self, func, types, args, kwargs):
        return as_tensor(func(*plain_all(args), **plain_all(kwargs)))

    def __getitem__(self, index):
        return as_tensor(np.ndarray.__getitem__(self, index))

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d Tensor")
        return (self[k] for k in range(len(self)))

    def argmax(self, *args, **kwargs):
        return as_tensor(np.ndarray.argmax(self, *args, **kwargs))

    def argmin(self, *args, **kwargs):
        return as_tensor(np.ndarray.argmin(self, *args, **kwargs))

    def __str__(self) -> str:
        return str(self.view(np.ndarray))

    def __repr__(self) -> str:
        values = np.array2string(self.view(np.ndarray), separator=", ")
        return f"Tensor(shape={list(self.shape)}, dtype={self.dtype}, value=\n{values})"


ARRAY_CLASSES.add(Tensor)   # guards read a Tensor held by a model by dtype and shape, as an ndarray


def tensor_data(input_data: Any = None, dtype: Any = None, shape: Any = None, init: Any = None) -> np.ndarray:
    """The plain array `Tensor(input_data, dtype, shape, init)` holds: a copy of `input_data` (Python floats
    become float32), or `shape` filled by the initializer `init` (zeros without one)."""
    if input_data is None:
        return _initial_values(dtype, shape, init, sample=True)
    if init is not None:
        raise TypeError("Tensor() takes input_data or init, not both")
    array = np.array(input_data, dtype=dtype)
    if dtype is None and array.dtype == np.float64 and not isinstance(input_data, (np.ndarray, np.generic)):
        array = array.astype(np.float32)
    if shape is not None and tuple(array.shape) != _shape_tuple(shape):
        raise ValueError(f"Tensor(): input_data has shape {tuple(array.shape)}, not the shape {_shape_tuple(shape)} "
                         "given (with input_data, leave shape out)")
    return array


def tensor_type_probe(input_data: Any = None, dtype: Any = None, shape: Any = None, init: Any = None) -> np.ndarray:
    """An array of the shape and dtype `tensor_data` gives, without drawing an initializer's random numbers
    (what the compiler evaluates to learn the type of `Tensor(...)` in a graph)."""
    if input_data is None:
        return _initial_values(dtype, shape, init, sample=False)
    return tensor_data(input_data, dtype, shape, init)


def _initial_values(dtype: Any, shape: Any, init: Any, sample: bool) -> np.ndarray:
    if shape is None:
        raise TypeError("Tensor() needs input_data, or shape= (with dtype= and init=) for initialized values")
    dtype = np.float32 if dtype is None else dtype
    if init is None:
        return np.zeros(_shape_tuple(shape), dtype=dtype)
    initializer = initializer_object(init)      # a bad name or kind of init fails here, before any draw
    if not sample:
        return np.zeros(_shape_tuple(shape), dtype=dtype)
    return initializer(_shape_tuple(shape), dtype)


def _shape_tuple(shape: Any) -> tuple:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    if isinstance(shape, (tuple, list)) and all(isinstance(d, (int, np.integer)) and not isinstance(d, bool)
                                                 for d in shape):
        return tuple(int(d) for d in shape)
    raise TypeError(f"Tensor(): shape must be an int or a tuple or list of ints, not {shape!r}")


def plain(value: Any) -> Any:
    """An array subclass (Tensor, Parameter) viewed as a plain ndarray; anything else unchanged."""
    if isinstance(value, np.ndarray) and type(value) is not np.ndarray:
        return value.view(np.ndarray)
    return value


def plain_all(value: Any) -> Any:
    """`plain` through tuples, lists and dicts (`np.concatenate([x, y])`, keyword arguments)."""
    if isinstance(value, (tuple, list)):
        return type(value)(plain_all(v) for v in value)
    if isinstance(value, dict):
        return {k: plain_all(v) for k, v in value.items()}
    return plain(value)


def as_tensor(value: Any, mask: Any = True) -> Any:
    """Arrays and NumPy scalars in `value` as Tensors (views, 0-d for scalars), through tuples and lists.

    `mask` (a bool, or a tuple of masks for a tuple) says which parts are Tensors; the compiler passes
    the parts of a compiled function's result that eager execution gives as Tensors.
    """
    if type(value) is np.ndarray and mask is True:     # the common case first: one plain array
        return value.view(Tensor)
    if mask is False or type(value) is Tensor:
        return value
    if isinstance(value, np.ndarray):
        return value.view(Tensor)
    if isinstance(value, np.generic):
        return np.asarray(value).view(Tensor)
    if isinstance(value, (tuple, list)):
        masks = mask if isinstance(mask, tuple) else (mask,) * len(value)
        return type(value)(as_tensor(v, m) for v, m in zip(value, masks))
    return value


def tensor_mask(value: Any) -> Any:
    """Which parts of a value are Tensors: True or False, or a tuple of masks for a tuple or list
    (graph/tensor_boundary.py reads an argument's mask)."""
    if type(value) is Tensor:
        return True
    if isinstance(value, (tuple, list)):
        return tuple(tensor_mask(v) for v in value)
    return False


def any_tensor(mask: Any) -> bool:
    return any(any_tensor(m) for m in mask) if isinstance(mask, tuple) else bool(mask)
