"""`Parameter` and `ParameterTuple` (parameter.py): a named array whose arithmetic gives plain arrays."""

import pickle

import numpy as np
import pytest

import graphjit as gj


def test_a_parameter_is_a_named_copy_whose_arithmetic_gives_plain_arrays():
    data = np.arange(6.0).reshape(2, 3)
    w = gj.Parameter(data, "w", requires_grad=False)
    assert w.name == "w" and w.requires_grad is False and not np.shares_memory(w, data)
    assert type(w * 2) is np.ndarray and type(np.ones(3) @ w.T) is np.ndarray and type(w.sum()) is np.float64
    assert isinstance(w.T, gj.Parameter) and w.T.name == "w"        # a view stays a view of the parameter
    same = w
    w -= 1.0                                                         # an optimizer's in-place update
    assert w is same and isinstance(w, gj.Parameter) and w[0, 0] == -1.0
    assert type(w.asnumpy()) is np.ndarray and not np.shares_memory(w.asnumpy(), w)
    w.set_data(np.zeros((2, 3)))
    assert w.data is w and not w.any()
    assert "name=w" in repr(w)


def test_a_parameter_pickles_with_its_name():
    w = gj.Parameter(np.ones(3, np.float32), "layer.weight")
    back = pickle.loads(pickle.dumps(w))
    assert isinstance(back, gj.Parameter) and back.name == "layer.weight" and back.dtype == np.float32
    np.testing.assert_array_equal(back, w)


def test_parameter_tuple_takes_parameters_only_and_clones():
    a, b = gj.Parameter(np.ones(2), "a"), gj.Parameter(np.ones(3), "b")
    params = gj.ParameterTuple([a, b])
    assert params == (a, b)
    with pytest.raises(TypeError, match="item 1 is ndarray"):
        gj.ParameterTuple([a, np.ones(2)])
    moments = params.clone("moments", init="zeros")
    assert [p.name for p in moments] == ["moments.a", "moments.b"] and not any(p.any() for p in moments)
    assert all(not np.shares_memory(m, p) for m, p in zip(moments, params))
