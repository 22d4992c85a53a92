"""Eager against compiled, the check most tests end with: same result (dtype, shape, values), same
argument mutation, or the same exception with the same message."""

import copy

import numpy as np
import pytest

import graphjit


def assert_same(actual, expected):
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_same(a, e)
        return
    if isinstance(expected, (np.ndarray, np.generic, float, int)) and not isinstance(expected, bool):
        np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-12)
        assert np.asarray(actual).dtype == np.asarray(expected).dtype
        assert np.shape(actual) == np.shape(expected)
        return
    assert actual == expected


def run_both(fn, args, **jit_options):
    """Run eagerly and compiled; same result, same argument mutation, or the same exception."""
    eager_args = copy.deepcopy(args)
    jitted = graphjit.jit(fn, **jit_options)
    compiled_args = copy.deepcopy(args)
    try:
        expected = fn(*eager_args)
    except Exception as e:
        with pytest.raises(type(e)) as info:
            jitted(*compiled_args)
        assert str(info.value) == str(e)
        return jitted
    actual = jitted(*compiled_args)
    assert_same(actual, expected)
    for a, e in zip(compiled_args, eager_args):  # mutation of arguments matches too
        if isinstance(e, np.ndarray):
            np.testing.assert_array_equal(a, e)
    return jitted
