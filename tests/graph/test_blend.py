"""`select` (graph/blend.py) is `np.where` bit for bit: same dtype, same bits (NaN payloads, -0.0),
on every path (the branch-free blend on big arrays with mixed conditions, `np.where` otherwise)."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from graphjit.graph import blend
from graphjit.graph.blend import select


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


DTYPES = [np.float64, np.float32, np.int64, np.int32, np.int16, np.uint8, np.bool_, np.float16]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(DTYPES), st.integers(0, 64), st.floats(0, 1), st.data())
def test_select_is_where_bit_for_bit(dtype, n, density, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    cond = rng.random(n) < density
    a = data.draw(hnp.arrays(dtype, n))
    b_scalar = data.draw(st.booleans())
    b = data.draw(hnp.from_dtype(np.dtype(dtype))) if b_scalar else data.draw(hnp.arrays(dtype, n))
    same_bits(select(cond, a, b), np.where(cond, a, b))
    same_bits(select(cond, b, a), np.where(cond, b, a))


@pytest.fixture
def small(monkeypatch):
    monkeypatch.setattr(blend, "MIN_ELEMENTS", 1)   # the blend path on the small arrays hypothesis makes


@pytest.mark.usefixtures("small")
@settings(max_examples=150, deadline=None)
@given(st.sampled_from(DTYPES), st.integers(1, 40), st.data())
def test_the_blend_path_is_where_bit_for_bit(dtype, n, data):
    cond = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    a = data.draw(hnp.arrays(dtype, n))
    b = data.draw(hnp.arrays(dtype, n))
    same_bits(select(cond, a, b), np.where(cond, a, b))
    same_bits(select(cond, a, 1), np.where(cond, a, 1))             # a Python scalar: NEP 50 casts
    same_bits(select(cond, 0.5, b), np.where(cond, 0.5, b))


def test_special_values_and_mixed_dtypes():
    cond = np.tile([True, False], 4096)
    a = np.tile([np.nan, -0.0, np.inf, -np.inf], 2048)
    b = -a
    same_bits(select(cond, a, b), np.where(cond, a, b))
    same_bits(select(cond, np.arange(8192), b), np.where(cond, np.arange(8192), b))   # int64 and float64
    same_bits(select(cond, a.astype(np.float32), 2.5), np.where(cond, a.astype(np.float32), 2.5))
    two_d = np.tile(cond, (3, 1))
    same_bits(select(two_d, a, 7.0), np.where(two_d, a, 7.0))          # a row broadcast against the condition
    same_bits(select(cond[:1], a, b), np.where(cond[:1], a, b))         # the condition broadcast: np.where


def test_complex_and_object_arrays_use_where():
    cond = np.tile([True, False], 2048)
    c = np.arange(4096) * (1 + 1j)
    same_bits(select(cond, c, 0), np.where(cond, c, 0))
    o = np.array([object()] * 4096)
    assert (select(cond, o, None) == np.where(cond, o, None)).all()


@pytest.mark.usefixtures("small")
@pytest.mark.parametrize("scalar", [300, -1, 2 ** 63, 1.5, 1e300, True])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.uint64, np.float32, np.bool_])
def test_python_scalars_convert_as_where_converts_them(scalar, dtype):
    cond = np.tile([True, False], 64)
    array = (np.arange(128) % 100).astype(dtype)
    try:
        expected = np.where(cond, array, scalar)
    except OverflowError:
        with pytest.raises(OverflowError):
            select(cond, array, scalar)
        return
    same_bits(select(cond, array, scalar), expected)
    same_bits(select(cond, scalar, array), np.where(cond, scalar, array))
