"""transpiler/lower/access.py: attributes and subscripts, known now from the type or read at run time."""

import numpy as np
import pytest

from lowering_testing import assert_eager_equals_compiled, assert_lowers_to

X3 = np.arange(3.0)


def runtime_index(x, k):
    return x[k:] + x[-1]


def attributes(x):
    return x.T, x.ndim, x.dtype


def test_runtime_index_parts_are_operands_of_getitem():
    assert_lowers_to(runtime_index, (X3, np.int64(1)), """
        graph runtime_index(%x: f64[3], %k: i64[]) -> f64[?]
          %0 = getitem(%x, %k) {index=[$1:]} : f64[?]
          %1 = getitem(%x) {index=[-1]} : f64[]
          %2 = add(%0, %1) : f64[?]
          return %2
    """)


def test_attributes_the_type_knows_are_compile_time():
    assert_lowers_to(attributes, (X3,), """
        graph attributes(%x: f64[3]) -> tuple(f64[3], int, object)
          %0 = T(%x) : f64[3]
          %1 = call('float64') {fn='numpy.dtype'} : object
          %2 = tuple(%0, 1, %1) : tuple(f64[3], int, object)
          return %2
    """)


@pytest.mark.parametrize("fn,args", [(runtime_index, (X3, np.int64(1))), (attributes, (X3,))])
def test_eager_equals_compiled(fn, args):
    assert_eager_equals_compiled(fn, *args)
