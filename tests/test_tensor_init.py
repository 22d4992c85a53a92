"""Tensor(shape=..., dtype=..., init=...) holds the initializer's values (it was silently zeros): every
initializer of common/initializer.py, by object and by name; init_data(); the bad forms; inside `jit`
(deterministic initializers compile, random ones run as an ordered Python call or are refused at STRICT);
and MindSpore's Tensor chapter (tutorials/beginner/tensor) as written, with `mindspore` -> `graphjit`."""

import json
import math
import pathlib
import textwrap

import numpy as np
import pytest

import graphjit
from graphjit import Tensor
from graphjit.common import initializer as init

import mindspore_cases
from graphjit.common.initializer import (Constant, Dirac, HeNormal, HeUniform, Identity, Normal, One, Orthogonal,
                                         Sparse, TruncatedNormal, Uniform, VarianceScaling, XavierNormal,
                                         XavierUniform, Zero)


# --- Tensor(init=...) -----------------------------------------------------------------------------
@pytest.mark.parametrize("spec, expected", [(One(), 1), ("ones", 1), (Zero(), 0), ("zeros", 0), (Constant(2.5), 2.5),
                                            (3, 3), ("One", 1)])
def test_constant_initializers_fill_the_tensor(spec, expected):
    t = Tensor(shape=(2, 3), dtype=graphjit.float32, init=spec)
    assert type(t) is Tensor and t.shape == (2, 3) and t.dtype == np.float32
    np.testing.assert_array_equal(t, np.full((2, 3), expected, np.float32))


@pytest.mark.parametrize("spec", [Normal(), "normal", Uniform(), "uniform", TruncatedNormal(), "truncatedNormal",
                                  HeUniform(), "he_uniform", HeNormal(), XavierUniform(), "xavier_uniform",
                                  XavierNormal(), Orthogonal(), "orthogonal", VarianceScaling(), "varianceScaling",
                                  Sparse(0.5)])
def test_random_initializers_are_never_zeros(spec):
    t = Tensor(shape=(40, 30), dtype=graphjit.float32, init=spec)
    assert t.dtype == np.float32 and t.shape == (40, 30)
    assert np.count_nonzero(t) > 0.4 * t.size and np.all(np.isfinite(t))


def test_shape_forms_dtype_default_and_init_data():
    for shape in (4, [4], (4,)):
        assert Tensor(shape=shape, dtype=graphjit.int32, init=One()).tolist() == [1, 1, 1, 1]
    t = Tensor(shape=(2,), init="ones")
    assert t.dtype == np.float32                     # MindSpore's default dtype
    assert t.init_data() is t                        # filled when made: init_data has nothing left to do
    assert Tensor(shape=(2, 2), dtype=graphjit.float64, init=One()).dtype == np.float64
    assert Tensor(None, graphjit.float16, (3,), One()).tolist() == [1, 1, 1]   # positionally, as MindSpore's


def test_normal_draws_follow_the_seed_and_the_parameters():
    graphjit.set_seed(7)
    a = Tensor(shape=(200, 50), dtype=graphjit.float32, init=Normal(sigma=2.0, mean=1.0))
    graphjit.set_seed(7)
    b = Tensor(shape=(200, 50), dtype=graphjit.float32, init=Normal(sigma=2.0, mean=1.0))
    np.testing.assert_array_equal(a, b)
    assert abs(float(a.mean()) - 1.0) < 0.1 and abs(float(a.std()) - 2.0) < 0.1
    c = Tensor(shape=(200, 50), dtype=graphjit.float32, init=Normal(sigma=2.0, mean=1.0))
    assert not np.array_equal(b, c)                  # the next draw, not the same numbers again


def test_bad_forms_are_one_clear_error():
    with pytest.raises(ValueError, match="unknown initializer 'bogus'"):
        Tensor(shape=(2,), dtype=graphjit.float32, init="bogus")
    with pytest.raises(TypeError, match="input_data or init, not both"):
        Tensor([1.0, 2.0], init=One())
    with pytest.raises(TypeError, match="needs input_data, or shape="):
        Tensor(init=One())
    with pytest.raises(TypeError, match="shape must be an int or a tuple or list of ints"):
        Tensor(shape=(2.5,), init=One())
    with pytest.raises(ValueError, match=r"input_data has shape \(2,\), not the shape \(3,\)"):
        Tensor([1.0, 2.0], shape=(3,))
    assert Tensor([1.0, 2.0], shape=(2,)).tolist() == [1.0, 2.0]


# --- the initializers MindSpore has that nn/init.py lacked ------------------------------------------
def test_identity_dirac_orthogonal_sparse_variance_scaling():
    np.testing.assert_array_equal(init.initializer(Identity(), (2, 3)), np.eye(2, 3))
    np.testing.assert_array_equal(init.initializer("identity", (3, 3)), np.eye(3))
    d = init.initializer(Dirac(groups=2), (6, 4, 3, 3))
    assert d.sum() == 6 and d[0, 0, 1, 1] == 1 and d[3, 0, 1, 1] == 1 and d[2, 2, 1, 1] == 1
    x = np.random.default_rng(0).random((1, 4, 7, 7))
    # a Dirac weight is a convolution that passes its input through: channel k of the output is channel k
    w = init.initializer(Dirac(), (4, 4, 3, 3), np.float64)
    out = sum(w[:, :, i, j] @ x[0, :, i:i + 5, j:j + 5].reshape(4, -1) for i in range(3) for j in range(3))
    np.testing.assert_allclose(out.reshape(4, 5, 5), x[0, :, 1:6, 1:6])
    q = init.initializer(Orthogonal(gain=2.0), (3, 5), np.float64)
    np.testing.assert_allclose(q @ q.T, 4 * np.eye(3), atol=1e-12)
    q = init.initializer("orthogonal", (6, 2, 2), np.float64).reshape(6, 4)
    np.testing.assert_allclose(q.T @ q, np.eye(4), atol=1e-12)
    s = init.initializer(Sparse(sparsity=0.5, sigma=1.0), (10, 4))
    assert all(np.count_nonzero(s[:, col] == 0) >= 5 for col in range(4))
    u = init.initializer(VarianceScaling(2.0, "fan_avg", "uniform"), (30, 10), np.float64)
    assert np.abs(u).max() <= math.sqrt(3 * 2.0 / 20)
    t = init.initializer(VarianceScaling(distribution="truncated_normal"), (300, 100), np.float64)
    assert np.abs(t).max() <= 2 * math.sqrt(1 / 100) / 0.87962566103423978 + 1e-12
    assert abs(t.std() - math.sqrt(1 / 100)) < 0.05 * math.sqrt(1 / 100)   # the cut is divided out
    with pytest.raises(ValueError, match="Identity initializes 2-D tensors"):
        init.initializer(Identity(), (2, 2, 2))
    with pytest.raises(ValueError, match="not divisible by groups=4"):
        init.initializer(Dirac(groups=4), (6, 4, 3, 3))
    with pytest.raises(ValueError, match="mode must be 'fan_in', 'fan_out' or 'fan_avg'"):
        VarianceScaling(mode="fan")


def test_initializer_makes_a_tensor():
    t = init.initializer("ones", [1, 2, 3], graphjit.float32)
    assert type(t) is Tensor and t.shape == (1, 2, 3) and t.init_data() is t and t.asnumpy().sum() == 6
    data = Tensor(np.zeros([1, 2, 3]), graphjit.float32)
    assert init.initializer(data, [1, 2, 3], graphjit.float32).shape == (1, 2, 3)
    assert init.initializer(0, [1, 2, 3]).dtype == np.float32
    with pytest.raises(ValueError, match="the array has shape"):
        init.initializer(data, [3, 2])


def test_nn_init_is_the_same_module_for_layers():
    from graphjit.nn import init as nn_init
    assert nn_init.Normal is Normal and nn_init.initializer is init.initializer
    assert callable(nn_init.initialize) and callable(nn_init.he_uniform) and callable(nn_init.set_seed)


# --- inside jit ------------------------------------------------------------------------------------
def ones_inside(x):
    return x + Tensor(shape=(2, 3), dtype=graphjit.float32, init=One())


def constant_inside(x):
    return x * Tensor(shape=(3,), dtype=graphjit.float64, init=Constant(2.0))


def two_normals_inside(x):
    a = Tensor(shape=(2, 3), dtype=graphjit.float32, init=Normal())
    b = Tensor(shape=(2, 3), dtype=graphjit.float32, init="normal")
    return x + a, b


def _same(a, b):
    if isinstance(b, tuple):
        assert isinstance(a, tuple) and len(a) == len(b)
        for p, q in zip(a, b):
            _same(p, q)
        return
    assert type(a) is type(b) and a.dtype == b.dtype
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("level", ["STRICT", "COMPATIBLE", "LAX"])
@pytest.mark.parametrize("fn", [ones_inside, constant_inside])
def test_deterministic_initializers_compile(fn, level):
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    jitted = graphjit.jit(fn, jit_config=graphjit.JitConfig(jit_syntax_level=level))
    _same(jitted(x), fn(x))
    assert "tensor_data(" in jitted.source(x)        # the graph's `tensor` op, no Python call


@pytest.mark.parametrize("level", ["COMPATIBLE", "LAX"])
def test_random_initializers_draw_at_every_call_in_eager_order(level):
    x = np.ones((2, 3), np.float32)
    jitted = graphjit.jit(two_normals_inside, jit_config=graphjit.JitConfig(jit_syntax_level=level))
    for seed in (3, 4):
        graphjit.set_seed(seed)
        compiled = jitted(x)
        graphjit.set_seed(seed)
        _same(compiled, two_normals_inside(x))
    assert not np.array_equal(compiled[0] - 1, compiled[1])   # two draws, not one merged


def test_random_initializers_are_refused_at_strict():
    jitted = graphjit.jit(two_normals_inside, jit_config=graphjit.JitConfig(jit_syntax_level="STRICT"))
    with pytest.raises(graphjit.GraphSyntaxError, match=r"Tensor\(init=Normal\(sigma=0.01, mean=0.0\)\) draws "
                                                        r"random numbers when it runs"):
        jitted(np.ones((2, 3), np.float32))


# --- the chapter, as MindSpore prints it -----------------------------------------------------------
# tutorials/source_en/beginner/tensor.md (MindSpore 2.x), the dense part; the sparse part is in
# tests/test_sparse_tensor.py. The chapter's output, but tensor2 (random numbers, checked apart).
CHAPTER_OUTPUT = """\
[1 0 1 0] (4,) Int64
[1 0 1 0] (4,) Int64
tensor1:
 [[1. 1.]
 [1. 1.]]
tensor2:
Ones Tensor:
 [1 1 1 1]

Zeros Tensor:
 [0 0 0 0]

x_shape: (2, 2)
x_dtype: Int32
x_itemsize: 4
x_nbytes: 16
x_ndim: 2
x_size: 4
x_strides: (8, 4)
First row: [0. 1.]
value of bottom right corner: 3.0
Last column: [1. 3.]
First column: [0. 2.]
add: [5. 7. 9.]
sub: [-3. -3. -3.]
mul: [ 4. 10. 18.]
div: [4.  2.5 2. ]
mod: [0. 1. 0.]
floordiv: [4. 2. 2.]
[[0. 1.]
 [2. 3.]
 [4. 5.]
 [6. 7.]]
shape:
 (4, 2)
[[[0. 1.]
  [2. 3.]]

 [[4. 5.]
  [6. 7.]]]
shape:
 (2, 2, 2)
t: [1. 1. 1. 1. 1.] <class 'mindspore.common.tensor.Tensor'>
n: [1. 1. 1. 1. 1.] <class 'numpy.ndarray'>
t: [1. 1. 1. 1. 1.]
n: [1. 1. 1. 1. 1.]
n: [2. 2. 2. 2. 2.] <class 'numpy.ndarray'>
t: [2. 2. 2. 2. 2.] <class 'mindspore.common.tensor.Tensor'>
"""


def the_chapter():
    """The chapter's code blocks in order, as the tutorial prints them (MindSpore 2.0's `ops.ones` block of
    "Tensor to NumPy" too), with `mindspore` -> `graphjit`."""
    import numpy as np
    import graphjit
    from graphjit import ops
    from graphjit import Tensor, CSRTensor, COOTensor  # noqa: F401

    data = [1, 0, 1, 0]
    x_data = Tensor(data)
    print(x_data, x_data.shape, x_data.dtype)

    np_array = np.array(data)
    x_np = Tensor(np_array)
    print(x_np, x_np.shape, x_np.dtype)

    from graphjit.common.initializer import One, Normal

    # Initialize a tensor with ones
    tensor1 = graphjit.Tensor(shape=(2, 2), dtype=graphjit.float32, init=One())
    # Initialize a tensor from normal distribution
    tensor2 = graphjit.Tensor(shape=(2, 2), dtype=graphjit.float32, init=Normal())

    print("tensor1:\n", tensor1)
    print("tensor2:\n", tensor2)

    from graphjit import ops

    x_ones = ops.ones_like(x_data)
    print(f"Ones Tensor: \n {x_ones} \n")

    x_zeros = ops.zeros_like(x_data)
    print(f"Zeros Tensor: \n {x_zeros} \n")

    x = Tensor(np.array([[1, 2], [3, 4]]), graphjit.int32)

    print("x_shape:", x.shape)
    print("x_dtype:", x.dtype)
    print("x_itemsize:", x.itemsize)
    print("x_nbytes:", x.nbytes)
    print("x_ndim:", x.ndim)
    print("x_size:", x.size)
    print("x_strides:", x.strides)

    tensor = Tensor(np.array([[0, 1], [2, 3]]).astype(np.float32))

    print("First row: {}".format(tensor[0]))
    print("value of bottom right corner: {}".format(tensor[1, 1]))
    print("Last column: {}".format(tensor[:, -1]))
    print("First column: {}".format(tensor[..., 0]))

    x = Tensor(np.array([1, 2, 3]), graphjit.float32)
    y = Tensor(np.array([4, 5, 6]), graphjit.float32)

    output_add = x + y
    output_sub = x - y
    output_mul = x * y
    output_div = y / x
    output_mod = y % x
    output_floordiv = y // x

    print("add:", output_add)
    print("sub:", output_sub)
    print("mul:", output_mul)
    print("div:", output_div)
    print("mod:", output_mod)
    print("floordiv:", output_floordiv)

    data1 = Tensor(np.array([[0, 1], [2, 3]]).astype(np.float32))
    data2 = Tensor(np.array([[4, 5], [6, 7]]).astype(np.float32))
    output = ops.concat((data1, data2), axis=0)

    print(output)
    print("shape:\n", output.shape)

    data1 = Tensor(np.array([[0, 1], [2, 3]]).astype(np.float32))
    data2 = Tensor(np.array([[4, 5], [6, 7]]).astype(np.float32))
    output = ops.stack([data1, data2])

    print(output)
    print("shape:\n", output.shape)

    t = Tensor([1., 1., 1., 1., 1.])
    print(f"t: {t}", type(t))
    n = t.asnumpy()
    print(f"n: {n}", type(n))

    t = ops.ones(5, graphjit.float32)
    print(f"t: {t}")
    n = t.asnumpy()
    print(f"n: {n}")

    n = np.ones(5)
    t = Tensor.from_numpy(n)

    np.add(n, 1, out=n)
    print(f"n: {n}", type(n))
    print(f"t: {t}", type(t))
    return tensor2


def test_the_tensor_chapter_as_written(capsys):
    tensor2 = the_chapter()
    lines = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    at = lines.index("tensor2:")
    drawn, lines = lines[at + 1:at + 3], lines[:at + 1] + lines[at + 3:]
    assert drawn == [line.rstrip() for line in (" " + str(tensor2)).splitlines()]
    assert tensor2.shape == (2, 2) and tensor2.dtype == np.float32
    assert np.all(tensor2 != 0) and np.all(np.abs(tensor2) < 0.1)   # N(0, 0.01^2), never zeros
    # the differences from MindSpore's printout: NumPy spells dtypes in lower case and Tensor is graphjit's
    expected = [line.rstrip() for line in CHAPTER_OUTPUT.replace("Int64", "int64").replace("Int32", "int32")
                .replace("mindspore.common.tensor.Tensor", "graphjit.tensor.Tensor").splitlines()]
    assert lines == expected, "\n".join(lines)


def test_the_chapter_api_beside_its_code():
    from graphjit import ops
    a, b = Tensor(np.array([[0, 1], [2, 3]], np.float32)), Tensor(np.array([[4, 5], [6, 7]], np.float32))
    assert type(ops.cat((a, b))) is Tensor and ops.cat((a, b), axis=1).shape == (2, 4)
    assert ops.stack([a, b], axis=1).shape == (2, 2, 2)
    assert ops.mul(a, b).tolist() == (a * b).tolist() == [[0, 5], [12, 21]]
    plain = a.numpy()
    assert type(plain) is np.ndarray and np.shares_memory(plain, a)
    assert type(Tensor(plain)) is Tensor and not np.shares_memory(Tensor(plain), plain)   # a copy
    assert ops.zeros_like(a).dtype == np.float32 and ops.ones_like(Tensor([1, 0])).dtype == np.int64


def test_the_chapter_imports():
    source = textwrap.dedent("""
        import graphjit
        from graphjit import ops
        from graphjit import Tensor, CSRTensor, COOTensor
        from graphjit.common.initializer import One, Normal
        from graphjit import dtype as mstype
        import graphjit.common.dtype
    """)
    exec(compile(source, "<chapter imports>", "exec"), {})


# --- MindSpore 2.10 as the oracle (tests/golden/mindspore_tensor.json, written by tests/record_mindspore.py) --
ORACLE = json.loads((pathlib.Path(__file__).parent / "golden" / "mindspore_tensor.json").read_text())
DENSE_CASES = sorted(name for name in mindspore_cases.CASES if "csr" not in name and "coo" not in name)


@pytest.mark.parametrize("name", DENSE_CASES)
def test_tensor_results_are_mindspores(name):
    mindspore_cases.assert_same(mindspore_cases.run(graphjit, name), ORACLE["cases"][name], name)
