"""`graphjit.dtype`: MindSpore's data types (`from mindspore import dtype as mstype`), as NumPy's.

`mstype.float32 is numpy.float32`, so `x.dtype == mstype.float32`, `Tensor(data, mstype.int32)`,
`np.zeros(3, mstype.float16)` and `x.astype(mstype.bool_)` all read as in MindSpore and cost nothing.
MindSpore prints a dtype as `Float32`; `name(dtype)` gives that spelling (Tensor and sparse tensor
reprs use it). NumPy has no bfloat16, so neither has graphjit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["bool_", "int8", "byte", "int16", "short", "int32", "intc", "int64", "intp", "uint8", "ubyte", "uint16",
           "ushort", "uint32", "uintc", "uint64", "uintp", "float16", "half", "float32", "single", "float64", "double",
           "complex64", "complex128", "number", "int_", "uint", "float_", "complex_", "string", "number_type",
           "int_type", "uint_type", "float_type", "signed_type", "complex_type", "all_types", "dtype_to_nptype",
           "dtype_to_pytype", "pytype_to_dtype", "get_py_obj_dtype", "type_size_in_bytes", "name"]

bool_ = np.bool_
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float16, float32, float64 = np.float16, np.float32, np.float64
complex64, complex128 = np.complex64, np.complex128
# MindSpore's other spellings of the same types
byte, short, intc, intp = int8, int16, int32, int64
ubyte, ushort, uintc, uintp = uint8, uint16, uint32, uint64
half, single, double = float16, float32, float64

# MindSpore's kinds of type (`Number()`, `Int()`, `UInt()`, `Float()`): NumPy's abstract scalar classes,
# so `np.issubdtype(x.dtype, mstype.float_)` asks whether `x` holds floats
number, int_, uint, float_, complex_ = np.number, np.signedinteger, np.unsignedinteger, np.floating, np.complexfloating
string = np.str_

int_type = (int8, int16, int32, int64)
uint_type = (uint8, uint16, uint32, uint64)
float_type = (float16, float32, float64)
complex_type = (complex64, complex128)
number_type = int_type + uint_type + float_type + complex_type
signed_type = int_type + float_type + complex_type
all_types = (bool_, int8, uint8, int16, int32, int64, float16, float32, float64, complex64, complex128)

# What MindSpore prints for each type: `print(x.dtype)` shows `Float32` there
_NAMES = {np.dtype(t): n for t, n in [
    (bool_, "Bool"), (int8, "Int8"), (int16, "Int16"), (int32, "Int32"), (int64, "Int64"), (uint8, "UInt8"),
    (uint16, "UInt16"), (uint32, "UInt32"), (uint64, "UInt64"), (float16, "Float16"), (float32, "Float32"),
    (float64, "Float64"), (complex64, "Complex64"), (complex128, "Complex128")]}

_KINDS = {int_: "i", uint: "u", float_: "f", complex_: "c"}
_PYTHON_TYPES = {bool: bool_, int: int64, float: float64, complex: complex128, str: string}


def name(dtype: Any) -> str:
    """MindSpore's spelling of a dtype: `name(np.float32) == "Float32"` (NumPy's name for the others)."""
    dt = np.dtype(dtype)
    return _NAMES.get(dt, dt.name)


def dtype_to_nptype(type_: Any) -> type:
    """The NumPy scalar type of a dtype (`dtype_to_nptype(mstype.int32) is np.int32`)."""
    return np.dtype(type_).type


def dtype_to_pytype(type_: Any) -> type:
    """The Python type of a dtype's elements: bool, int, float or complex (str for `string`)."""
    if type_ is string:
        return str
    kind = _KINDS.get(type_) or np.dtype(type_).kind
    return {"b": bool, "i": int, "u": int, "f": float, "c": complex}[kind]


def pytype_to_dtype(obj: Any) -> type:
    """The dtype of a Python or NumPy type: `int` -> int64, `float` -> float64, `np.float32` -> float32."""
    if isinstance(obj, np.dtype):
        return obj.type
    if not isinstance(obj, type):
        raise TypeError(f"pytype_to_dtype takes a type such as int or float, not {type(obj).__name__}")
    if obj in _PYTHON_TYPES:
        return _PYTHON_TYPES[obj]
    if issubclass(obj, np.generic):
        return obj
    raise NotImplementedError(f"the Python type {obj.__name__} has no MindSpore dtype")


def get_py_obj_dtype(obj: Any) -> type:
    """The dtype of a value: an array's (or Tensor's) element type, else its Python type's."""
    if isinstance(obj, (np.ndarray, np.generic)):
        return obj.dtype.type
    return pytype_to_dtype(obj if isinstance(obj, type) else type(obj))


def type_size_in_bytes(dtype: Any) -> int:
    """Bytes of one element (`type_size_in_bytes(mstype.float32) == 4`)."""
    return np.dtype(dtype).itemsize
