"""graphjit.Tensor: MindSpore's constructor, attributes and printing; every NumPy result computed from a
Tensor is a Tensor; Parameters and Tensors together; compiled functions return what eager returns
(type included) at O0/O1/O2 through the emitter and the interpreter, while computing on plain arrays."""

import copy
import pickle
import warnings

import numpy as np
import pytest

import graphjit as ms
from graphjit import Parameter, Tensor

LEVELS = ["O0", "O1", "O2"]
MODES = ["auto", "no_sink"]


# --- the class ------------------------------------------------------------------------------------
def test_construction_follows_mindspore_dtypes():
    assert Tensor([1.0, 2.0]).dtype == ms.float32          # Python floats: float32
    assert Tensor([1, 2]).dtype == ms.int64
    assert Tensor(np.ones(2)).dtype == ms.float64           # NumPy data keeps its dtype
    assert Tensor(np.ones(2), ms.float32).dtype == ms.float32
    assert Tensor([1.5], dtype=ms.int32).dtype == ms.int32
    zeros = Tensor(shape=(2, 3), dtype=ms.int32)
    assert type(zeros) is Tensor and zeros.shape == (2, 3) and not zeros.any()
    with pytest.raises(TypeError, match="needs input_data, or shape="):
        Tensor()


def test_construction_copies_and_from_numpy_shares():
    data = np.zeros(3, np.float32)
    copied, shared = Tensor(data), Tensor.from_numpy(data)
    data[0] = 5
    assert copied[0] == 0 and shared[0] == 5


def test_attributes_and_dtypes():
    x = Tensor(np.arange(6).reshape(2, 3), ms.float32)
    assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6
    assert x.dtype == ms.float32 and x.astype(ms.int32).dtype == ms.int32
    assert type(x.astype(ms.int32)) is Tensor


def test_asnumpy_is_a_plain_array_sharing_memory():
    x = Tensor([1.0, 2.0])
    plain = x.asnumpy()
    assert type(plain) is np.ndarray
    plain[0] = 9
    assert x[0] == 9


def test_results_computed_from_tensors_are_tensors():
    x = Tensor(np.arange(6.0).reshape(2, 3))
    y = np.ones((2, 3))
    results = [x + 1, 1 - x, x * y, y @ x.T, np.exp(x), x.sum(), x.mean(), x.max(), x.argmax(), x.argmax(1),
               x[0], x[0, 1], x[x > 2], x.T, x.reshape(3, 2), np.where(x > 1, x, 0), np.concatenate([y, x]),
               x == x, -x, abs(x), x ** 2, np.zeros_like(x), x.clip(0, 1)]
    assert all(type(r) is Tensor for r in results), [type(r).__name__ for r in results]
    assert x.sum().shape == () and x[0, 1].shape == ()       # 0-d Tensors, as MindSpore's
    assert all(type(item) is Tensor and item.shape == () for item in x[0])
    for plain in (np.array(x), np.asarray(x), x.asnumpy(), np.full(2, x[0, 0])):
        assert type(plain) is np.ndarray
    assert type(x.tolist()) is list and type(x[0, 1].item()) is float


def test_ufunc_outputs_and_masks():
    t = Tensor([1.0, -2.0])
    out = np.zeros(2, np.float32)
    result = np.add(t, 1, out=out, where=Tensor([True, False]))
    assert result is out and type(out) is np.ndarray                 # written in place: the caller's array
    np.testing.assert_array_equal(out, [2.0, 0.0])
    quotient, remainder = np.divmod(t, 2)
    assert type(quotient) is Tensor and type(remainder) is Tensor


def test_tutorial_idioms():
    pred = Tensor(np.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]]), ms.float32)
    y = Tensor(np.array([1, 0, 0]))
    assert (pred.argmax(1) == y).asnumpy().sum() == 2
    loss = pred.mean()
    assert f"{loss.asnumpy():>7f}" == f"{float(loss):>7f}"
    assert float(loss) == pytest.approx(0.5)


def test_printing_shows_values():
    x = Tensor(np.array([[1.0, 2.0], [3.0, 4.0]]), ms.float32)
    assert str(x) == str(np.asarray(x))
    assert repr(x) == "Tensor(shape=[2, 2], dtype=float32, value=\n[[1., 2.],\n [3., 4.]])"
    assert str(x.sum()) == "10.0"


def test_copies_and_pickles_stay_tensors():
    x = Tensor([1.0, 2.0])
    for again in (copy.deepcopy(x), pickle.loads(pickle.dumps(x)), x.copy()):
        assert type(again) is Tensor
        np.testing.assert_array_equal(again, x)


# --- with Parameters ------------------------------------------------------------------------------
def test_parameters_and_tensors():
    w = Parameter(Tensor([1.0, 2.0]), name="w")
    assert type(w) is Parameter and w.name == "w" and w.dtype == ms.float32
    t = Tensor([3.0, 4.0])
    assert type(w * t) is Tensor and type(t - w) is Tensor     # a Parameter is a weight, results are Tensors
    assert type(w * 2) is np.ndarray                            # as before: weights never leak into results
    w -= t * 0.5                                                # an in-place update stays the Parameter
    assert type(w) is Parameter and w.name == "w"
    np.testing.assert_allclose(w, [-0.5, 0.0])


# --- compiled functions return what eager returns ---------------------------------------------------
def branches_and_loops(x, w, n):
    h = np.maximum(x @ w, 0)
    s = h.sum()
    if s > 0:
        h = h * 2
    for _ in range(n):
        h = h + 1
    return h, s, np.zeros(3), x.shape[0], np.array(h), np.full(2, s), h[0, 0], (h.argmax(1) == 0)


def made_inside(x):
    t = Tensor([1.0, 2.0, 3.0])
    return x + t, t * 2, np.ones(3) * 2


def while_carried(x, y):
    k = 0
    while k < 3:
        x, y = y + 1, x * 2
        k += 1
    return x, y


def iterates(x):
    total = x[0] * 0
    for row in x:
        for item in row:
            total = total + item
    return total, [v for v in x[0]]


def returns_dict(x):
    return {"total": x.sum(), "plain": np.zeros(2)}


def returns_arguments(x, y):
    return x, y, (x, y)


def branches_on_the_class(x):
    # the class is asked at run time: a Tensor is not an np.ndarray by `type`
    if type(x) is np.ndarray:
        return x + 1
    return x - 1


def pair_argument(pair):
    return pair[0] + pair[1], pair[1] * 2


X = Tensor(np.arange(6.0).reshape(2, 3), ms.float32)
W = np.ones((3, 4), np.float32)
PLAIN = np.arange(6.0).reshape(2, 3)
PROGRAMS = {
    "branches_and_loops": (branches_and_loops, (X, W, 2)),
    "branches_and_loops_plain": (branches_and_loops, (PLAIN, W, 2)),
    "made_inside": (made_inside, (PLAIN,)),
    "while_tensor_first": (while_carried, (X, PLAIN)),
    "while_plain": (while_carried, (PLAIN, PLAIN)),
    "returns_arguments": (returns_arguments, (X, PLAIN)),
    "iterates": (iterates, (X,)),
    "pair_argument": (pair_argument, ((X, PLAIN),)),
    "class_of_a_tensor": (branches_on_the_class, (X,)),
    "class_of_a_plain_array": (branches_on_the_class, (PLAIN,)),
}


def assert_same(actual, expected):
    assert type(actual) is type(expected), (type(actual), type(expected))
    if isinstance(expected, (tuple, list)):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_same(a, e)
    elif isinstance(expected, dict):
        assert list(actual) == list(expected)
        for key in expected:
            assert_same(actual[key], expected[key])
    elif isinstance(expected, (np.ndarray, np.generic)):
        assert actual.dtype == expected.dtype and actual.shape == expected.shape
        np.testing.assert_array_equal(actual, expected)
    else:
        assert actual == expected


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("mode", MODES)
def test_compiled_returns_what_eager_returns(name, level, mode):
    fn, args = PROGRAMS[name]
    expected = fn(*args)
    jitted = ms.jit(fn, jit_config=ms.JitConfig(jit_level=level, exec_mode=mode, jit_syntax_level="STRICT"))
    assert_same(jitted(*args), expected)
    assert_same(jitted(*args), expected)


@pytest.mark.parametrize("mode", MODES)
def test_a_returned_dict_holds_what_eager_gives(mode):
    jitted = ms.jit(returns_dict, jit_config=ms.JitConfig(exec_mode=mode, jit_syntax_level="COMPATIBLE"))
    assert_same(jitted(X), returns_dict(X))


def test_compiled_code_computes_on_plain_arrays():
    jitted = ms.jit(branches_and_loops)
    source = jitted.source(X, W, 2)
    assert "np.asarray(x)" in source and "_tensor.as_tensor(" in source
    plain = ms.jit(branches_and_loops).source(PLAIN, W, 2)
    assert "as_tensor(" not in plain and "np.asarray(" not in plain         # no Tensor: nothing added


def test_an_argument_returned_is_the_callers_object():
    x, y, (x2, y2) = ms.jit(returns_arguments)(X, PLAIN)
    assert x is X and x2 is X and y is PLAIN


def test_tensor_and_plain_arguments_are_separate_entries():
    jitted = ms.jit(made_inside)
    assert type(jitted(X)[2]) is np.ndarray and type(jitted(PLAIN)[0]) is Tensor
    assert type(jitted(X)[0]) is Tensor
    assert jitted.cache_info()["compiles"] == 2


def keeps_python_code(x):
    plain = x.asnumpy()
    return x * 2, type(plain).__name__, plain.sum()


def asks_for_the_class(x):
    return isinstance(x, Tensor)


def test_python_code_left_to_eager_execution_sees_tensors():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = ms.jit(keeps_python_code, fullgraph=False)(X)
    assert_same(result, keeps_python_code(X))


def test_isinstance_against_tensor_is_never_guessed():
    with pytest.raises(ms.GraphSyntaxError, match="isinstance\\(\\) of an array against Tensor"):
        ms.jit(asks_for_the_class, fullgraph=True)(X)


def squared_loss(x, w):
    return ((x @ w) ** 2).sum()


def test_gradients_of_tensors_are_tensors():
    w = Tensor(np.ones((3, 4)), ms.float32)
    grads = ms.grad(squared_loss, (0, 1))(X, w)
    assert all(type(g) is Tensor for g in grads)
    value, grad = ms.value_and_grad(squared_loss)(X, w)
    assert type(value) is Tensor and type(grad) is Tensor
    np.testing.assert_allclose(grad, 2 * ((np.asarray(X) @ np.asarray(w)) @ np.asarray(w).T), rtol=1e-6)


def test_an_entry_loaded_from_disk_returns_tensors():
    first = ms.jit(made_inside)
    first(X)
    second = ms.jit(made_inside)
    assert_same(second(X), made_inside(X))
    assert second.cache_info()["disk_loads"] == 1


def test_network_in_graph_mode_returns_a_tensor():
    from graphjit import nn

    class Tiny(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(3, 2)

        def construct(self, x):
            return self.dense(x)

    net = Tiny()
    eager = net(X)
    ms.set_context(mode=ms.GRAPH_MODE)
    compiled = net(X)
    assert type(eager) is Tensor and type(compiled) is Tensor
    np.testing.assert_allclose(compiled, eager, rtol=1e-6)
