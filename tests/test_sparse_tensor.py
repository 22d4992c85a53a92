"""CSRTensor and COOTensor (sparse_tensor.py): MindSpore's constructors, attributes, conversions and
arithmetic with the result kinds MindSpore gives (its API examples as written), the chapter's sparse part,
bad input as one clear error; inside `jit` they compile and equal eager, or are one diagnostic at
STRICT/COMPATIBLE and run eagerly at LAX, never a stale or wrong result."""

import copy
import json
import pathlib
import pickle
import warnings

import numpy as np
import pytest

import graphjit
from graphjit import COOTensor, CSRTensor, Tensor
from graphjit import dtype as mstype

import mindspore_cases

LEVELS = ["STRICT", "COMPATIBLE", "LAX"]


def csr_example(values=(1.0, 2.0)):
    """MindSpore's: [[1, 0, 0, 0], [0, 2, 0, 0]]."""
    return CSRTensor(Tensor([0, 1, 2]), Tensor([0, 1]), Tensor(list(values), dtype=mstype.float32), (2, 4))


def coo_example(values=(1.0, 2.0)):
    """MindSpore's: [[0, 1, 0, 0], [0, 0, 2, 0], [0, 0, 0, 0]]."""
    return COOTensor(Tensor([[0, 1], [1, 2]], dtype=mstype.int32), Tensor(list(values), dtype=mstype.float32), (3, 4))


def dense(x):
    return np.asarray(x.to_dense()) if isinstance(x, (CSRTensor, COOTensor)) else np.asarray(x)


# --- construction and attributes -----------------------------------------------------------------
def test_csr_attributes():
    csr = csr_example()
    assert type(csr.indptr) is Tensor and csr.indptr.tolist() == [0, 1, 2]
    assert csr.indices.tolist() == [0, 1] and csr.values.tolist() == [1.0, 2.0]
    assert csr.shape == (2, 4) and csr.dtype == mstype.float32
    assert (csr.size, csr.itemsize, csr.ndim) == (2, 4, 2)
    np.testing.assert_array_equal(csr.to_dense(), [[1, 0, 0, 0], [0, 2, 0, 0]])
    assert type(csr.to_dense()) is Tensor
    indptr, indices, values, shape = csr.to_tuple()
    assert indptr is csr.indptr and shape == (2, 4)
    again = CSRTensor(csr_tensor=csr)
    np.testing.assert_array_equal(again.to_dense(), csr.to_dense())


def test_coo_attributes():
    coo = coo_example()
    assert coo.indices.tolist() == [[0, 1], [1, 2]] and coo.indices.dtype == mstype.int32
    assert coo.values.tolist() == [1.0, 2.0] and coo.shape == (3, 4) and coo.dtype == mstype.float32
    assert (coo.size, coo.itemsize, coo.ndim) == (2, 4, 2)
    np.testing.assert_array_equal(coo.to_dense(), [[0, 1, 0, 0], [0, 0, 2, 0], [0, 0, 0, 0]])
    assert COOTensor(coo_tensor=coo).to_tuple()[2] == (3, 4)


def test_csr_with_feature_dimensions():
    values = Tensor(np.arange(6.0).reshape(2, 3), mstype.float32)
    csr = CSRTensor(Tensor([0, 1, 2]), Tensor([3, 0]), values, (2, 4, 3))
    expected = np.zeros((2, 4, 3), np.float32)
    expected[0, 3], expected[1, 0] = [0, 1, 2], [3, 4, 5]
    np.testing.assert_array_equal(csr.to_dense(), expected)


@pytest.mark.parametrize("make, message", [
    (lambda: CSRTensor(Tensor([0, 1]), Tensor([0, 1]), Tensor([1.0, 2.0]), (2, 4)), "shape\\[0\\] \\+ 1 = 3"),
    (lambda: CSRTensor(Tensor([0, 2, 1]), Tensor([0, 1]), Tensor([1.0, 2.0]), (2, 4)), "must rise from 0"),
    (lambda: CSRTensor(Tensor([0, 1, 2]), Tensor([0, 4]), Tensor([1.0, 2.0]), (2, 4)), "in \\[0, 4\\)"),
    (lambda: CSRTensor(Tensor([0, 2, 2]), Tensor([1, 1]), Tensor([1.0, 2.0]), (2, 4)), "appears twice in one row"),
    (lambda: CSRTensor(Tensor([0, 1, 2]), Tensor([0, 1]), Tensor([1.0]), (2, 4)), "values must have shape"),
    (lambda: CSRTensor(Tensor([0.0, 1, 2]), Tensor([0, 1]), Tensor([1.0, 2.0]), (2, 4)), "int16, int32 or int64"),
    (lambda: CSRTensor(Tensor([0, 1, 2]), Tensor([0, 1]), Tensor([1.0, 2.0]), (2, -4)), "tuple of positive ints"),
    (lambda: CSRTensor(Tensor([0, 1, 2]), None, Tensor([1.0, 2.0]), (2, 4)), "indices is missing"),
    (lambda: CSRTensor(Tensor([0, 1, 2]), "0 1", Tensor([1.0, 2.0]), (2, 4)), "must be a Tensor, not str"),
    (lambda: CSRTensor(csr_tensor=coo_example()), "must be a CSRTensor"),
    (lambda: COOTensor(Tensor([[0, 1], [1, 2]]), Tensor([1.0, 2.0]), (3, 4, 5)), "shape \\(N, 3\\)"),
    (lambda: COOTensor(Tensor([[0, 1], [3, 2]]), Tensor([1.0, 2.0]), (3, 4)), "out of the shape"),
    (lambda: COOTensor(Tensor([[0, 1], [1, 2]]), Tensor([[1.0, 2.0]]), (3, 4)), "values must have shape \\(2,\\)"),
    (lambda: COOTensor(Tensor([[0, 1]], mstype.uint8), Tensor([1.0]), (3, 4)), "int16, int32 or int64"),
])
def test_bad_input_is_one_clear_error(make, message):
    with pytest.raises((TypeError, ValueError), match=message):
        make()


def test_immutable_copyable_picklable():
    csr, coo = csr_example(), coo_example()
    with pytest.raises(AttributeError, match="cannot be changed"):
        csr.shape = (4, 4)
    for value in (csr, coo):
        for again in (copy.deepcopy(value), pickle.loads(pickle.dumps(value))):
            assert type(again) is type(value)
            np.testing.assert_array_equal(again.to_dense(), value.to_dense())


def test_repr_names_dtypes_as_mindspore():
    assert repr(csr_example()) == (
        "CSRTensor(shape=[2, 4], dtype=Float32, indptr=Tensor(shape=[3], dtype=Int64, value=[0 1 2]), "
        "indices=Tensor(shape=[2], dtype=Int64, value=[0 1]), values=Tensor(shape=[2], dtype=Float32, value=[1. 2.]))")
    assert repr(coo_example()).startswith("COOTensor(shape=[3, 4], dtype=Float32, indices=Tensor(shape=[2, 2], "
                                          "dtype=Int32, value=[[0 1] [1 2]])")


# --- conversions and unary methods ------------------------------------------------------------------
def test_conversions_keep_the_elements():
    csr = CSRTensor(Tensor([0, 2, 2, 3]), Tensor([3, 0, 1]), Tensor([1.0, 2.0, 3.0]), (3, 4))
    coo = csr.to_coo()
    assert coo.indices.tolist() == [[0, 3], [0, 0], [2, 1]]
    np.testing.assert_array_equal(coo.to_dense(), csr.to_dense())
    back = coo.to_csr()
    assert back.indptr.tolist() == [0, 2, 2, 3]
    np.testing.assert_array_equal(back.to_dense(), csr.to_dense())
    unsorted = COOTensor(Tensor([[2, 0], [0, 1], [1, 1], [0, 0]]), Tensor([4.0, 1.0, 3.0, 2.0]), (3, 2))
    np.testing.assert_array_equal(unsorted.to_csr().to_dense(), unsorted.to_dense())


def test_astype_abs_neg():
    csr, coo = csr_example((1.0, -2.0)), coo_example((-1.0, 2.0))
    assert csr.astype(mstype.float64).dtype == mstype.float64 and coo.astype(mstype.int32).dtype == mstype.int32
    assert csr.abs().values.tolist() == [1.0, 2.0] and coo.abs().values.tolist() == [1.0, 2.0]
    assert (-csr).values.tolist() == [-1.0, 2.0] and (-coo).values.tolist() == [1.0, -2.0]
    assert type(csr.abs()) is CSRTensor and type(-coo) is COOTensor


def test_coalesce_sums_duplicates():
    # MindSpore's example: indices [[0, 1], [0, 1], [1, 2]] (given transposed), values [1, 5, 4]
    x_indices = Tensor([[0, 0, 1], [1, 1, 2]], dtype=mstype.int64)
    coo = COOTensor(x_indices.transpose(), Tensor([1, 5, 4], dtype=mstype.float32), (3, 3))
    np.testing.assert_array_equal(coo.to_dense()[0, 1], 6.0)      # to_dense adds duplicates too
    res = coo.coalesce()
    assert res.indices.tolist() == [[0, 1], [1, 2]] and res.values.tolist() == [6.0, 4.0]


# --- arithmetic: MindSpore's API examples --------------------------------------------------------------
def test_coo_add_example():
    input0 = COOTensor(Tensor([[0, 1], [1, 2]], dtype=mstype.int64), Tensor([1, 2], dtype=mstype.int32), (3, 4))
    input1 = COOTensor(Tensor([[0, 0], [1, 1]], dtype=mstype.int64), Tensor([3, 4], dtype=mstype.int32), (3, 4))
    out = input0.add(input1, Tensor(0, dtype=mstype.int32))
    assert out.indices.tolist() == [[0, 0], [0, 1], [1, 1], [1, 2]] and out.values.tolist() == [3, 1, 4, 2]
    assert out.dtype == mstype.int32
    small = input0.add(input1, Tensor(2, dtype=mstype.int32))    # |sum| < thresh is left out
    assert small.values.tolist() == [3, 4, 2]


def test_csr_examples():
    indptr, indices = Tensor([0, 1, 2], dtype=mstype.int32), Tensor([0, 1], dtype=mstype.int32)
    a = CSRTensor(indptr, indices, Tensor([2, 1], dtype=mstype.float32), (2, 4))
    b = CSRTensor(indptr, indices, Tensor([1, 2], dtype=mstype.float32), (2, 4))
    total = a.add(b, Tensor(1, mstype.float32), Tensor(1, mstype.float32))
    assert total.values.tolist() == [3.0, 3.0] and total.indptr.tolist() == [0, 1, 2]
    assert total.indptr.dtype == mstype.int32
    np.testing.assert_array_equal(a.mv(Tensor([[1], [1], [1], [1]], dtype=mstype.float32)), [[2.0], [1.0]])
    np.testing.assert_array_equal(a.mm(Tensor([[1., 2.], [1, 2.], [1, 2.], [1., 2.]], dtype=mstype.float32)),
                                  [[2.0, 4.0], [1.0, 2.0]])
    np.testing.assert_array_equal(a.sum(1), [[2.0], [1.0]])
    np.testing.assert_array_equal(a.sum(0), [[2.0, 1.0, 0.0, 0.0]])
    product = CSRTensor(Tensor([0, 1, 2]), Tensor([0, 1]), Tensor([1.0, 2.0]), (2, 2)).mm(
        CSRTensor(Tensor([0, 1, 1]), Tensor([1]), Tensor([3.0]), (2, 2)))
    assert type(product) is CSRTensor
    np.testing.assert_array_equal(product.to_dense(), [[0.0, 3.0], [0.0, 0.0]])


def _patterned(rng, shape, density=0.4, dtype=np.float32):
    d = rng.standard_normal(shape).astype(dtype)
    d[rng.random(shape) > density] = 0
    return d


def _csr_of(d):
    rows, cols = np.nonzero(d)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=d.shape[0]))])
    return CSRTensor(Tensor(indptr), Tensor(cols), Tensor(d[rows, cols]), d.shape)


def _coo_of(d):
    rows, cols = np.nonzero(d)
    return COOTensor(Tensor(np.stack([rows, cols], 1)), Tensor(d[rows, cols]), d.shape)


def test_csr_arithmetic_against_dense(rng):
    a_d, b_d, y = _patterned(rng, (5, 6)), _patterned(rng, (5, 6)), rng.standard_normal((5, 6)).astype(np.float32)
    a, b = _csr_of(a_d), _csr_of(b_d)
    for result, expected in [(a + b, a_d + b_d), (a - b, a_d - b_d), (a * Tensor(y), a_d * y),
                             (Tensor(y) * a, a_d * y), (a * Tensor(y[0]), a_d * y[0]), (-a, -a_d)]:
        assert type(result) is CSRTensor and result.dtype == np.float32
        np.testing.assert_allclose(dense(result), expected, rtol=1e-6)
    quotient = a / Tensor(y)
    assert type(quotient) is CSRTensor
    np.testing.assert_allclose(dense(quotient), np.where(a_d != 0, a_d / y, 0), rtol=1e-6)
    assert (a + b).indices.dtype == a.indices.dtype


def test_csr_times_a_scalar_gives_the_values_as_mindspore_does():
    csr = csr_example()
    for scaled in (csr * 2, csr * 2.0, csr * Tensor(2.0), Tensor(2.0) * csr, csr * Tensor([[2.0]])):
        assert type(scaled) is Tensor and scaled.tolist() == [2.0, 4.0] and scaled.dtype == mstype.float32
    assert (csr / 4).tolist() == [0.25, 0.5]
    ints = CSRTensor(Tensor([0, 1, 2]), Tensor([0, 1]), Tensor([2, 1], dtype=mstype.int32), (2, 4))
    assert (ints * 2).dtype == mstype.int32 and (ints * 2.0).dtype == mstype.float32   # MindSpore's promotion
    assert (ints * Tensor(2)).dtype == mstype.int32                                   # MindSpore 2.10 too
    assert (ints / 2).dtype == mstype.float32
    with pytest.raises(ValueError, match=r"shape \(1, 1, 1\) cannot broadcast"):   # one element, but 3-D
        csr * Tensor(np.ones((1, 1, 1)))
    with pytest.raises(ValueError, match=r"shape \(3,\) cannot broadcast"):
        csr * Tensor(np.ones(3))


def test_coo_arithmetic_against_dense(rng):
    a_d, b_d, y = _patterned(rng, (4, 5)), _patterned(rng, (4, 5)), rng.standard_normal((4, 5)).astype(np.float32)
    a, b = _coo_of(a_d), _coo_of(b_d)
    for result, kind, expected in [(a + b, COOTensor, a_d + b_d), (a - b, COOTensor, a_d - b_d),
                                   (a + Tensor(y), Tensor, a_d + y), (Tensor(y) + a, Tensor, a_d + y),
                                   (a - Tensor(y), Tensor, a_d - y), (Tensor(y) - a, Tensor, y - a_d),
                                   (y + a, Tensor, a_d + y), (a * Tensor(y), COOTensor, a_d * y),
                                   (Tensor(y) * a, COOTensor, a_d * y), (-a, COOTensor, -a_d)]:
        assert type(result) is kind and result.dtype == np.float32
        np.testing.assert_allclose(dense(result), expected, rtol=1e-6)
    np.testing.assert_allclose(dense(a / Tensor(y)), np.where(a_d != 0, a_d / y, 0), rtol=1e-6)


def test_what_mindspore_does_not_define_is_a_clear_error():
    csr, coo = csr_example(), coo_example()
    with pytest.raises(TypeError, match="COOTensor \\* int is not supported: .* COOTensor\\(x.indices, x.values \\* s"):
        coo * 2
    with pytest.raises(TypeError, match="int \\* CSRTensor is not supported"):      # as MindSpore
        2 * csr
    with pytest.raises(TypeError, match="CSRTensor \\+ Tensor is not supported"):
        csr + Tensor(np.ones((2, 4)))
    with pytest.raises(TypeError, match="CSRTensor \\* COOTensor is not supported"):
        csr * coo
    with pytest.raises(ValueError, match="the Tensor has shape \\(2,\\), not the sparse shape"):
        coo * Tensor([1.0, 2.0])
    with pytest.raises(ValueError, match="not one shape"):
        csr + CSRTensor(Tensor([0, 0, 0, 0]), Tensor(np.zeros(0, np.int64)), Tensor(np.zeros(0, np.float32)), (3, 4))
    with pytest.raises(TypeError):
        Tensor(np.ones((3, 4))) / coo


# --- the chapter's sparse part, as written (MindSpore 2.0 to 2.5) --------------------------------------
def test_the_chapter_sparse_part_as_written(capsys):
    import graphjit
    from graphjit import Tensor, CSRTensor, COOTensor

    indptr = Tensor([0, 1, 2])
    indices = Tensor([0, 1])
    values = Tensor([1, 2], dtype=graphjit.float32)
    shape = (2, 4)

    # Make a CSRTensor
    csr_tensor = CSRTensor(indptr, indices, values, shape)

    print(csr_tensor.astype(graphjit.float64).dtype)

    indices = Tensor([[0, 1], [1, 2]], dtype=graphjit.int32)
    values = Tensor([1, 2], dtype=graphjit.float32)
    shape = (3, 4)

    # Make a COOTensor
    coo_tensor = COOTensor(indices, values, shape)

    print(coo_tensor.values)
    print(coo_tensor.indices)
    print(coo_tensor.shape)
    print(coo_tensor.astype(graphjit.float64).dtype)  # COOTensor to float64

    # MindSpore prints Float64 for the dtypes: NumPy's spelling is float64
    assert capsys.readouterr().out == "float64\n[1. 2.]\n[[0 1]\n [1 2]]\n(3, 4)\nfloat64\n"
    np.testing.assert_array_equal(csr_tensor.to_dense(), [[1, 0, 0, 0], [0, 2, 0, 0]])
    np.testing.assert_array_equal(coo_tensor.to_dense(), [[0, 1, 0, 0], [0, 0, 2, 0], [0, 0, 0, 0]])


# --- inside jit ---------------------------------------------------------------------------------------
def values_times(c, x):
    return c.values * x + c.shape[0]


def densified(c, x):
    return c.to_dense() + x


def sparse_times_dense(c, x):
    return c * x


def scaled_values(c, x):
    return c * 2 + x


def coo_plus_dense(c, x):
    return c + x


def attribute_of_a_sum(c, x):
    return (c + c).values + x


def summed(c, x):
    return c.sum(1) + x


def times_vector(c, x):
    return c.mv(x)


def absolute_values(c, x):
    return c.abs().values + x


def made_inside(x):
    return CSRTensor(Tensor([0, 1, 2]), Tensor([0, 1]), x, (2, 4)).to_dense()


def _jit(fn, level):
    return graphjit.jit(fn, jit_config=graphjit.JitConfig(jit_syntax_level=level))


def _assert_same(actual, expected):
    assert type(actual) is type(expected)
    if isinstance(expected, (CSRTensor, COOTensor)):
        for a, e in zip(actual.to_tuple(), expected.to_tuple()):
            _assert_same(a, e)
    elif isinstance(expected, np.ndarray):
        assert actual.dtype == expected.dtype
        np.testing.assert_array_equal(actual, expected)
    else:
        assert actual == expected


CASES = {   # function, sparse argument, dense argument, the levels it compiles at (the others: diagnostic)
    "values_times": (values_times, csr_example, np.ones(2, np.float32), LEVELS),
    "csr_to_dense": (densified, csr_example, np.ones((2, 4), np.float32), LEVELS),
    "coo_to_dense": (densified, coo_example, np.ones((3, 4), np.float32), ["COMPATIBLE", "LAX"]),  # np.add.at
    "csr_times_dense": (sparse_times_dense, csr_example, Tensor(np.full((2, 4), 3.0, np.float32)), LEVELS),
    "csr_times_scalar": (scaled_values, csr_example, np.ones(2, np.float32), LEVELS),
    "coo_plus_dense": (coo_plus_dense, coo_example, np.ones((3, 4), np.float32), LEVELS),
    "attribute_of_a_sum": (attribute_of_a_sum, coo_example, np.ones(2, np.float32), ["LAX"]),
    "csr_sum": (summed, csr_example, np.ones((2, 1), np.float32), LEVELS),
    "csr_mv": (times_vector, csr_example, np.ones((4, 1), np.float32), ["COMPATIBLE", "LAX"]),   # np.add.at
    "sparse_method_result": (absolute_values, csr_example, np.ones(2, np.float32), ["LAX"]),
}


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_sparse_arguments_compile_and_equal_eager_or_are_one_diagnostic(name, level):
    fn, make, x, compiled_at = CASES[name]
    sparse = make()
    jitted = _jit(fn, level)
    if level not in compiled_at:
        with pytest.raises(graphjit.GraphSyntaxError) as info:
            jitted(sparse, x)
        assert "Traceback" not in str(info.value)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", graphjit.GraphjitWarning)
        _assert_same(jitted(sparse, x), fn(sparse, x))
        # its arrays changed in place between calls: read again, never folded at compile time
        sparse.values[...] = sparse.values * 10 - 3
        _assert_same(jitted(sparse, x), fn(sparse, x))
        other = make((5.0, -7.0))                     # another sparse tensor of the same kind
        _assert_same(jitted(other, x), fn(other, x))


def test_the_diagnostics_say_what_cannot_compile():
    with pytest.raises(graphjit.GraphSyntaxError, match="`.values` of a Python object made at run time"):
        _jit(attribute_of_a_sum, "COMPATIBLE")(coo_example(), np.ones(2, np.float32))
    with pytest.raises(graphjit.GraphSyntaxError, match="CSRTensor\\(\\) with run-time arguments"):
        _jit(made_inside, "COMPATIBLE")(np.ones(2, np.float32))
    with pytest.raises(graphjit.GraphSyntaxError, match="ufunc.at on run-time values needs the Python interpreter"):
        _jit(densified, "STRICT")(coo_example(), np.ones((3, 4), np.float32))


def test_made_inside_runs_eagerly_at_lax():
    x = np.array([5.0, 6.0], np.float32)
    with pytest.warns(graphjit.GraphjitFallbackWarning, match="CSRTensor\\(\\) with run-time arguments"):
        result = _jit(made_inside, "LAX")(x)
    _assert_same(result, made_inside(x))


# --- MindSpore 2.10 as the oracle (tests/golden/mindspore_tensor.json, written by tests/record_mindspore.py) --
ORACLE = json.loads((pathlib.Path(__file__).parent / "golden" / "mindspore_tensor.json").read_text())
SPARSE_CASES = sorted(name for name in mindspore_cases.CASES if "csr" in name or "coo" in name)


def test_the_recording_has_every_case_and_mindspore_ran_each():
    assert ORACLE["mindspore"] == "2.10.0" and set(ORACLE["cases"]) == set(mindspore_cases.CASES), \
        "run tests/record_mindspore.py with MindSpore installed"
    unrun = {name: r for name, r in ORACLE["cases"].items() if r["kind"] == "error" and
             r["type"] in ("crash", "RuntimeError")}
    assert not unrun, f"MindSpore could not run these cases, so they check nothing: {unrun}"


@pytest.mark.parametrize("name", SPARSE_CASES)
def test_sparse_results_are_mindspores(name):
    mindspore_cases.assert_same(mindspore_cases.run(graphjit, name), ORACLE["cases"][name], name)
