"""The op table's memory and in-place facts agree with what NumPy does.

`result` says what memory an op's result may share (the alias analysis reads nothing else):
a `fresh` result never shares memory with its operands, a `view` op can return memory of
operand 0, `views_any` of another. The in-place form of an infix op computes what the op does.
"""

import operator

import numpy as np
import pytest

from graphjit.graph.ops import OPS, REGION_OPS

X = np.arange(12.0).reshape(3, 4)
SQUARE = np.arange(9.0).reshape(3, 3)

FRESH_CASES = [
    ("add", (X, X), {}), ("exp", (X,), {}), ("sum", (X,), {"axis": 0}), ("mean", (X,), {"axis": 1}),
    ("argmax", (X,), {"axis": 0}), ("median", (X,), {"axis": 1}), ("cumsum", (X,), {"axis": 1}),
    ("sort", (X,), {}), ("roll", (X, 1), {}), ("concatenate", ((X, X),), {}), ("copy", (X,), {}),
    ("astype", (X,), {"dtype": np.float32}), ("correlate", (X[0], X[1]), {}), ("dot", (X, X.T), {}),
    ("where", (X > 3, X, 0.0), {}), ("zeros_like", (X,), {}), ("copy_flat", (X,), {}),
]
VIEW_CASES = [
    ("reshape", (X, (4, 3)), {}), ("T", (X,), {}), ("transpose", (X,), {}), ("ravel", (X,), {}),
    ("squeeze", (X[None],), {}), ("expand_dims", (X, 0), {}), ("diag", (SQUARE,), {}),
    ("asarray", (X,), {}), ("array", (X,), {"copy": False}), ("broadcast_to", (X[0], (3, 4)), {}),
    ("sliding_window_view", (X[0], 2), {}), ("flip", (X,), {}),
]


@pytest.mark.parametrize("name,args,kwargs", FRESH_CASES, ids=[c[0] for c in FRESH_CASES])
def test_a_fresh_result_shares_no_memory_with_its_operands(name, args, kwargs):
    assert OPS[name].result == "fresh"
    result = OPS[name](*args, **kwargs)
    assert not any(np.shares_memory(result, a) for a in args if isinstance(a, np.ndarray))


@pytest.mark.parametrize("name,args,kwargs", VIEW_CASES, ids=[c[0] for c in VIEW_CASES])
def test_a_view_op_may_return_memory_of_operand_0(name, args, kwargs):
    assert OPS[name].result == "view"
    assert np.shares_memory(OPS[name](*args, **kwargs), args[0])


def test_einsum_may_view_an_operand():
    assert OPS["einsum"].result == "views_any"
    assert np.shares_memory(OPS["einsum"]("ii->i", SQUARE), SQUARE)


def test_every_fact_takes_a_known_value():
    for name, d in OPS.items():
        assert d.result in ("", "fresh", "view", "views_any"), name
        assert d.reduction in ("", "reduce", "batched", "scan"), name
        assert d.creates in ("", "alloc", "build"), name
        assert not d.effect or not d.pure, name
        assert d.region == (name in REGION_OPS), name
    assert REGION_OPS == {"if", "for_range", "while"}


@pytest.mark.parametrize("name", sorted(n for n, d in OPS.items() if d.inplace_symbol))
def test_the_inplace_form_computes_the_op(name):
    d = OPS[name]
    assert d.emit == "infix" and d.inplace_symbol == d.symbol + "="
    a, b = (np.arange(1, 10).reshape(3, 3), np.arange(2, 11).reshape(3, 3) % 3 + 1)
    if name == "truediv":
        a, b = a.astype(float), b.astype(float)
    target = a.copy()
    result = d.inplace_fn(target, b)
    assert result is target
    np.testing.assert_array_equal(result, d(a, b))
    assert d.inplace_fn is getattr(operator, "i" + d.fn.__name__.rstrip("_"))
