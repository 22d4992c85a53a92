"""graphjit.dtype (MindSpore's `mstype`): the names are NumPy's types, so dtype comparisons with NumPy keep
working; MindSpore's spellings and helpers; `ops.cast` and `ops.dtype` eagerly and compiled."""

import numpy as np
import pytest

import graphjit
import graphjit.common.dtype as common_mstype
from graphjit import Tensor, ops
from graphjit import dtype as mstype

from eager_vs_compiled import run_both


def test_the_names_are_numpys_types():
    assert mstype.float32 is np.float32 is graphjit.float32
    assert mstype.int32 is np.int32 and mstype.bool_ is np.bool_ and mstype.uint8 is np.uint8
    assert mstype.float16 is graphjit.float16 and mstype.int64 is graphjit.int64
    assert (mstype.single, mstype.double, mstype.half) == (np.float32, np.float64, np.float16)
    assert (mstype.byte, mstype.short, mstype.intc, mstype.intp) == (np.int8, np.int16, np.int32, np.int64)
    assert mstype.complex64 is np.complex64 and mstype.complex128 is np.complex128
    assert common_mstype.float32 is mstype.float32 and common_mstype.__all__ == mstype.__all__


def test_kinds_and_groups():
    assert np.issubdtype(np.dtype("float32"), mstype.float_)
    assert np.issubdtype(np.dtype("int8"), mstype.int_) and not np.issubdtype(np.dtype("uint8"), mstype.int_)
    assert np.issubdtype(np.dtype("uint16"), mstype.uint) and np.issubdtype(np.dtype("int16"), mstype.number)
    assert mstype.float32 in mstype.float_type and mstype.int64 in mstype.int_type
    assert mstype.bool_ in mstype.all_types and mstype.bool_ not in mstype.number_type
    assert len(mstype.number_type) == 13          # as MindSpore's: 4 int, 4 uint, 3 float, 2 complex


def test_tensor_dtypes_compare_with_numpy_and_mstype():
    x = Tensor(np.array([[1, 2], [3, 4]]), mstype.int32)
    assert x.dtype == mstype.int32 == np.int32 and x.dtype == np.dtype("int32")
    assert Tensor([1.0]).dtype == mstype.float32
    assert Tensor([True]).dtype == mstype.bool_
    assert x.astype(mstype.float16).dtype == np.float16


def test_mindspore_spelling():
    assert mstype.name(mstype.float32) == "Float32" and mstype.name(np.dtype("int64")) == "Int64"
    assert mstype.name(mstype.bool_) == "Bool" and mstype.name(mstype.uint8) == "UInt8"
    assert mstype.name(mstype.complex64) == "Complex64"
    assert mstype.name("U3") == "str96"          # NumPy's name where MindSpore has none


def test_conversions():
    assert mstype.dtype_to_nptype(mstype.int32) is np.int32
    assert mstype.dtype_to_nptype(np.dtype("float16")) is np.float16
    assert mstype.dtype_to_pytype(mstype.float32) is float and mstype.dtype_to_pytype(mstype.uint8) is int
    assert mstype.dtype_to_pytype(mstype.bool_) is bool and mstype.dtype_to_pytype(mstype.float_) is float
    assert mstype.dtype_to_pytype(mstype.string) is str
    assert mstype.pytype_to_dtype(int) is np.int64 and mstype.pytype_to_dtype(float) is np.float64
    assert mstype.pytype_to_dtype(bool) is np.bool_ and mstype.pytype_to_dtype(np.dtype("int8")) is np.int8
    assert mstype.pytype_to_dtype(np.float16) is np.float16
    with pytest.raises(TypeError, match="takes a type"):
        mstype.pytype_to_dtype(3)
    with pytest.raises(NotImplementedError, match="has no MindSpore dtype"):
        mstype.pytype_to_dtype(dict)
    assert mstype.get_py_obj_dtype(Tensor([1.0])) is np.float32 and mstype.get_py_obj_dtype(3) is np.int64
    assert mstype.get_py_obj_dtype(float) is np.float64
    assert mstype.type_size_in_bytes(mstype.float64) == 8 and mstype.type_size_in_bytes(mstype.int16) == 2


def test_import_graphjit_stays_light():
    import subprocess
    import sys
    code = "import sys, graphjit; print(sorted(m for m in ('libcst', 'networkx', 'scipy') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# --- ops.cast and ops.dtype ---------------------------------------------------------------------------
def test_cast_eagerly():
    x = Tensor([1.7, -2.2])
    y = ops.cast(x, mstype.int32)
    assert type(y) is Tensor and y.dtype == mstype.int32 and y.tolist() == [1, -2]
    assert x.dtype == mstype.float32                       # a new Tensor; the input is unchanged
    z = ops.cast(3, mstype.float16)
    assert type(z) is Tensor and z.dtype == np.float16 and z.shape == ()
    plain = ops.cast(np.ones(2), mstype.bool_)
    assert type(plain) is np.ndarray and plain.dtype == np.bool_
    assert ops.dtype(x) == mstype.float32


def cast_twice(x):
    return ops.cast(ops.cast(x, graphjit.float16), graphjit.int32) + 1


def cast_of_a_number(x):
    return x * ops.cast(2, graphjit.float32)


@pytest.mark.parametrize("fn", [cast_twice, cast_of_a_number])
@pytest.mark.parametrize("level", ["STRICT", "COMPATIBLE"])
def test_cast_compiled_equals_eager(fn, level):
    x = np.array([[1.5, -2.25], [3.0, 1e5]], np.float32)
    run_both(fn, (x,), jit_config=graphjit.JitConfig(jit_syntax_level=level))
    tensor_result = graphjit.jit(fn)(Tensor(x))
    assert type(tensor_result) is Tensor and tensor_result.dtype == fn(Tensor(x)).dtype
