"""Cases of the Tensor chapter's API written once for MindSpore and graphjit (`ms` is either module), and
how a result is described for comparing them. `record_mindspore.py` runs them on MindSpore 2.10 and writes
tests/golden/mindspore_tensor.json; test_tensor_init.py and test_sparse_tensor.py compare graphjit with it,
so the tests never need MindSpore."""

import numpy as np


def _csr(ms, values=(1.0, 2.0), dtype=None):
    return ms.CSRTensor(ms.Tensor([0, 1, 2], dtype=ms.int32), ms.Tensor([0, 1], dtype=ms.int32),
                        ms.Tensor(list(values), dtype=dtype or ms.float32), (2, 4))


def _csr2(ms):
    return ms.CSRTensor(ms.Tensor([0, 2, 3], dtype=ms.int32), ms.Tensor([1, 3, 0], dtype=ms.int32),
                        ms.Tensor([3.0, -4.0, 5.0], dtype=ms.float32), (2, 4))


def _coo(ms, values=(1.0, 2.0), dtype=None):
    return ms.COOTensor(ms.Tensor([[0, 1], [1, 2]], dtype=ms.int64), ms.Tensor(list(values), dtype=dtype or ms.float32),
                        (3, 4))


def _coo2(ms):
    return ms.COOTensor(ms.Tensor([[0, 0], [1, 2], [2, 3]], dtype=ms.int64), ms.Tensor([3.0, -4.0, 5.0],
                                                                                       dtype=ms.float32), (3, 4))


def _dense(ms, shape, start=1.0):
    return ms.Tensor(np.arange(start, start + np.prod(shape)).reshape(shape).astype(np.float32))


def _init(name):
    def case(ms):
        from importlib import import_module
        init = import_module(ms.__name__ + ".common.initializer")
        return ms.Tensor(shape=(2, 3), dtype=ms.float32, init=getattr(init, name)()).init_data()
    return case


def _initializer(spec, shape):
    def case(ms):
        from importlib import import_module
        init = import_module(ms.__name__ + ".common.initializer")
        value = getattr(init, spec)() if spec[0].isupper() else spec
        return init.initializer(value, shape, ms.float32).init_data()
    return case


CASES = {
    # Tensor: data, dtype, init
    "tensor_of_ints": lambda ms: ms.Tensor([1, 0, 1, 0]),
    "tensor_of_floats": lambda ms: ms.Tensor([1.5, 2.0]),
    "tensor_of_bools": lambda ms: ms.Tensor([True, False]),
    "tensor_with_dtype": lambda ms: ms.Tensor(np.array([[1, 2], [3, 4]]), ms.int32),
    "tensor_of_float64_numpy": lambda ms: ms.Tensor(np.array([1.0, 2.0])),
    "tensor_shape_only": lambda ms: ms.Tensor(shape=(2, 2), dtype=ms.float32),
    "tensor_numpy": lambda ms: ms.Tensor([1.0, 2.0]).numpy(),
    "tensor_int32_times_int": lambda ms: ms.Tensor(np.array([2, 1], np.int32)) * 2,
    "tensor_int32_times_0d": lambda ms: ms.Tensor(np.array([2, 1], np.int32)) * ms.Tensor(2),
    "tensor_init_one": _init("One"),
    "tensor_init_zero": _init("Zero"),
    "tensor_init_constant": lambda ms: ms.Tensor(shape=(3,), dtype=ms.float32,
                                                 init=__import__(ms.__name__ + ".common.initializer",
                                                                 fromlist=["Constant"]).Constant(2.5)).init_data(),
    "tensor_init_int_shape": lambda ms: ms.Tensor(shape=3, dtype=ms.int32, init=__import__(
        ms.__name__ + ".common.initializer", fromlist=["One"]).One()).init_data(),
    "tensor_init_identity": _init("Identity"),
    "tensor_data_and_init": lambda ms: ms.Tensor([1.0], init=__import__(
        ms.__name__ + ".common.initializer", fromlist=["One"]).One()),
    "initializer_ones": _initializer("ones", [1, 2, 3]),
    "initializer_identity": _initializer("Identity", [2, 3]),
    "initializer_dirac": _initializer("Dirac", [2, 2, 3]),
    "ones_like": lambda ms: ms.ops.ones_like(ms.Tensor([1, 0, 1, 0])),
    "cast": lambda ms: ms.ops.cast(ms.Tensor([1.7, -2.2]), ms.int32),
    "cast_of_a_number": lambda ms: ms.ops.cast(3, ms.float16),
    "attributes": lambda ms: (lambda x: (x.shape, x.itemsize, x.nbytes, x.ndim, x.size, x.strides))(
        ms.Tensor(np.array([[1, 2], [3, 4]]), ms.int32)),
    "floordiv_mod": lambda ms: (lambda x, y: (y % x, y // x, y / x))(ms.Tensor(np.array([1, 2, 3]), ms.float32),
                                                                      ms.Tensor(np.array([4, 5, 6]), ms.float32)),
    # CSRTensor
    "csr_attributes": lambda ms: (lambda c: (c.shape, c.size, c.itemsize, c.ndim, c.dtype))(_csr(ms)),
    "csr_to_dense": lambda ms: _csr2(ms).to_dense(),
    "csr_astype": lambda ms: _csr(ms).astype(ms.float64),
    "csr_abs": lambda ms: _csr2(ms).abs(),
    "csr_neg": lambda ms: -_csr2(ms),
    "csr_times_int": lambda ms: _csr(ms) * 2,
    "csr_times_float": lambda ms: _csr(ms) * 2.0,
    "csr_times_0d": lambda ms: _csr(ms) * ms.Tensor(2.0),
    "int_times_csr": lambda ms: 2 * _csr(ms),
    "csr_times_dense": lambda ms: _csr2(ms) * _dense(ms, (2, 4)),
    "dense_times_csr": lambda ms: _dense(ms, (2, 4)) * _csr2(ms),
    "csr_times_row": lambda ms: _csr2(ms) * _dense(ms, (4,)),
    "csr_div_dense": lambda ms: _csr2(ms) / _dense(ms, (2, 4)),
    "csr_div_int": lambda ms: _csr(ms) / 4,
    "csr_int_times_int": lambda ms: _csr(ms, (2, 1), ms.int32) * 2,
    "csr_int_times_float": lambda ms: _csr(ms, (2, 1), ms.int32) * 2.0,
    "csr_int_times_0d_int": lambda ms: _csr(ms, (2, 1), ms.int32) * ms.Tensor(2),
    "csr_int_div_int": lambda ms: _csr(ms, (2, 1), ms.int32) / 2,
    "csr_half_times_float": lambda ms: _csr(ms, (2, 1), ms.float16) * 2.5,
    "csr_int_times_float_tensor": lambda ms: _csr(ms, (2, 1), ms.int32) * _dense(ms, (2, 4)),
    "csr_plus_csr": lambda ms: _csr(ms) + _csr2(ms),
    "csr_minus_csr": lambda ms: _csr(ms) - _csr2(ms),
    "csr_plus_dense": lambda ms: _csr(ms) + _dense(ms, (2, 4)),
    "csr_to_coo": lambda ms: _csr2(ms).to_coo(),
    "csr_sum_1": lambda ms: _csr2(ms).sum(1),
    "csr_mv": lambda ms: _csr2(ms).mv(ms.Tensor([[1.0], [2.0], [3.0], [4.0]])),
    "csr_mm": lambda ms: _csr2(ms).mm(_dense(ms, (4, 2))),
    "csr_add_method": lambda ms: _csr(ms).add(_csr2(ms), ms.Tensor(2.0), ms.Tensor(-1.0)),
    # COOTensor
    "coo_attributes": lambda ms: (lambda c: (c.shape, c.size, c.itemsize, c.ndim, c.dtype))(_coo(ms)),
    "coo_to_dense": lambda ms: _coo2(ms).to_dense(),
    "coo_astype": lambda ms: _coo(ms).astype(ms.float64),
    "coo_abs": lambda ms: _coo2(ms).abs(),
    "coo_neg": lambda ms: -_coo2(ms),
    "coo_plus_coo": lambda ms: _coo(ms) + _coo2(ms),
    "coo_minus_coo": lambda ms: _coo(ms) - _coo2(ms),
    "coo_plus_dense": lambda ms: _coo(ms) + _dense(ms, (3, 4)),
    "dense_plus_coo": lambda ms: _dense(ms, (3, 4)) + _coo(ms),
    "coo_minus_dense": lambda ms: _coo(ms) - _dense(ms, (3, 4)),
    "dense_minus_coo": lambda ms: _dense(ms, (3, 4)) - _coo(ms),
    "coo_times_dense": lambda ms: _coo2(ms) * _dense(ms, (3, 4)),
    "dense_times_coo": lambda ms: _dense(ms, (3, 4)) * _coo2(ms),
    "coo_div_dense": lambda ms: _coo2(ms) / _dense(ms, (3, 4)),
    "coo_times_int": lambda ms: _coo(ms) * 2,
    "coo_to_csr": lambda ms: _coo2(ms).to_csr(),
    "coo_int32_to_csr": lambda ms: ms.COOTensor(ms.Tensor([[2, 1], [0, 3], [0, 0]], dtype=ms.int32),
                                                ms.Tensor([3.0, -4.0, 5.0], dtype=ms.float32), (3, 4)).to_csr(),
    "coo_coalesce": lambda ms: ms.COOTensor(ms.Tensor([[0, 1], [0, 1], [1, 2]], dtype=ms.int64),
                                            ms.Tensor([1.0, 5.0, 4.0], dtype=ms.float32), (3, 3)).coalesce(),
    "coo_add_method": lambda ms: _coo(ms, (1, 2), ms.int32).add(
        ms.COOTensor(ms.Tensor([[0, 0], [1, 1]], dtype=ms.int64), ms.Tensor([3, 4], dtype=ms.int32), (3, 4)),
        ms.Tensor(0, dtype=ms.int32)),
}


def dtype_name(dtype) -> str:
    """NumPy's name of a dtype, MindSpore's or NumPy's (`Float32` -> `float32`)."""
    text = str(dtype)
    return {"Bool": "bool"}.get(text, text.lower())


def describe(value):
    """A JSON-able account of a result: kind, dtype, shape and values (sparse parts too), or the error."""
    kind = type(value).__name__
    if kind in ("CSRTensor", "COOTensor"):
        parts = ("indptr", "indices", "values") if kind == "CSRTensor" else ("indices", "values")
        return {"kind": kind, "shape": list(value.shape), "dtype": dtype_name(value.dtype),
                **{p: describe(getattr(value, p)) for p in parts}}
    if hasattr(value, "asnumpy"):
        array = value.asnumpy()
        return {"kind": "Tensor", "dtype": dtype_name(value.dtype), "shape": list(array.shape),
                "value": array.tolist()}
    if isinstance(value, tuple):
        return {"kind": "tuple", "items": [describe(v) for v in value]}
    if isinstance(value, (bool, int, float, str)):
        return {"kind": type(value).__name__, "value": value}
    if isinstance(value, np.generic):
        return {"kind": "number", "value": value.item()}
    if "dtype" in kind.lower() or kind in ("Float", "Int", "UInt", "Bool", "Complex"):
        return {"kind": "dtype", "value": dtype_name(value)}
    return {"kind": kind, "value": repr(value)}


def run(ms, name: str):
    """`describe` of case `name` on module `ms`, or the error it raised."""
    try:
        return describe(CASES[name](ms))
    except Exception as e:
        return {"kind": "error", "type": type(e).__name__, "message": str(e).splitlines()[0][:200]
                if str(e) else ""}


# Where graphjit gives a result and MindSpore 2.10 raises, on purpose: case -> why
GRAPHJIT_ONLY = {
    "coo_to_csr": "MindSpore's CPU kernel takes int32 row indices only; graphjit takes int16, int32 and int64",
}

# Where graphjit's result differs from MindSpore 2.10's, known and not (yet) changed: case -> why. The tests
# check they still differ, so an entry goes when its difference does.
DIFFERENT = {
    "tensor_int32_times_0d": "a Tensor computes as NumPy does, eagerly and compiled alike: int32 values times a "
                             "0-d int64 Tensor are int64 (NEP 50), MindSpore keeps int32 (its 0-d Tensors are weak)",
}


def assert_same(graphjit_result: dict, mindspore_result: dict, name: str) -> None:
    """graphjit's result is MindSpore's: same kind, dtype, shape and values; where MindSpore raises, graphjit
    raises too (the exception's class may differ: MindSpore's `coo * 2` is an AttributeError of its
    internals, graphjit's a TypeError saying what `*` takes)."""
    ms_kind, gj_kind = mindspore_result["kind"], graphjit_result["kind"]
    if name in DIFFERENT:
        try:
            assert_same(graphjit_result, mindspore_result, name + " (still different?)")
        except AssertionError:
            return
        raise AssertionError(f"{name} now equals MindSpore: remove it from DIFFERENT")
    if ms_kind == "error":
        if name in GRAPHJIT_ONLY:
            assert gj_kind != "error", f"{name}: {graphjit_result}"
            return
        assert gj_kind == "error", f"{name}: MindSpore raises {mindspore_result}, graphjit gives {graphjit_result}"
        return
    assert gj_kind == ms_kind, f"{name}: {gj_kind} where MindSpore gives {ms_kind}: {graphjit_result}"
    if ms_kind in ("CSRTensor", "COOTensor"):
        assert graphjit_result["shape"] == mindspore_result["shape"] and \
            graphjit_result["dtype"] == mindspore_result["dtype"], name
        for part in ("indptr", "indices", "values"):
            if part in mindspore_result:
                assert_same(graphjit_result[part], mindspore_result[part], f"{name}.{part}")
    elif ms_kind == "Tensor":
        assert (graphjit_result["dtype"], graphjit_result["shape"]) == \
            (mindspore_result["dtype"], mindspore_result["shape"]), f"{name}: {graphjit_result} vs {mindspore_result}"
        np.testing.assert_allclose(np.array(graphjit_result["value"], dtype=float),
                                   np.array(mindspore_result["value"], dtype=float), rtol=1e-6, err_msg=name)
    elif ms_kind == "tuple":
        assert len(graphjit_result["items"]) == len(mindspore_result["items"]), name
        for k, (g, m) in enumerate(zip(graphjit_result["items"], mindspore_result["items"])):
            assert_same(g, m, f"{name}[{k}]")
    else:
        assert graphjit_result == mindspore_result, f"{name}: {graphjit_result} vs {mindspore_result}"
