"""ops/activations.py and the activation layers (nn/activation.py): values against hand-written NumPy
references (including inputs that would overflow a naive formula), compiled equal to eager at every
level and execution mode, gradients against finite differences, eagerly and compiled."""

import math

import numpy as np
import pytest

import graphjit as gj
from graphjit import nn, ops
from layer_testing import CONFIGS, assert_identical, check_gradient

X = np.array([[-3.0, -0.5, 0.0, 0.25, 2.0], [40.0, -40.0, 1.5, -1e-3, 7.0]])


def _softmax_ref(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


REFERENCES = {
    "relu": lambda x: np.where(x > 0, x, 0.0),
    "relu6": lambda x: np.clip(x, 0, 6),
    "sigmoid": lambda x: np.array([1 / (1 + math.exp(-v)) if v > -700 else 0.0 for v in x.ravel()]).reshape(x.shape),
    "tanh": np.tanh,
    "softmax": lambda x: _softmax_ref(x, -1),
    "log_softmax": lambda x: np.log(_softmax_ref(x, -1)),
    "gelu": lambda x: np.vectorize(lambda v: 0.5 * v * (1 + math.erf(v / math.sqrt(2))))(x),
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.2 * x),
    "silu": lambda x: x / (1 + np.exp(-x)),
    "softplus": lambda x: np.where(x > 20, x, np.log1p(np.exp(np.minimum(x, 20)))),
    "erf": np.vectorize(math.erf),
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_values_match_numpy_reference(name):
    np.testing.assert_allclose(getattr(ops, name)(X), REFERENCES[name](X), rtol=2e-7, atol=2e-7)


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_float32_stays_float32(name):
    assert getattr(ops, name)(X.astype(np.float32)).dtype == np.float32


def test_no_overflow_at_extreme_inputs():
    big = np.array([-1e4, -800.0, 0.0, 800.0, 1e4], dtype=np.float32)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        np.testing.assert_array_equal(ops.sigmoid(big), [0, 0, 0.5, 1, 1])
        np.testing.assert_allclose(ops.softmax(big), [0, 0, 0, 0, 1])
        assert np.isfinite(ops.log_softmax(big)).all()
        np.testing.assert_allclose(ops.softplus(big), [0, 0, math.log(2), 800, 1e4], rtol=1e-6)


def test_mindspore_documented_values():
    x = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    np.testing.assert_allclose(ops.gelu(x), [0.8413447, 1.9544997, 2.9959505], rtol=1e-6)
    np.testing.assert_allclose(ops.gelu(x, approximate="tanh"), [0.841192, 1.9545976, 2.9963627], rtol=1e-6)
    np.testing.assert_array_equal(ops.gelu(x, True), ops.gelu(x, "tanh"))
    np.testing.assert_array_equal(ops.gelu(x, False), ops.gelu(x))
    y = np.array([[-1.0, 4.0, -8.0], [2.0, -5.0, 9.0]], dtype=np.float32)
    np.testing.assert_allclose(ops.leaky_relu(y), [[-0.2, 4.0, -1.6], [2.0, -1.0, 9.0]], rtol=1e-6)


def test_softmax_axis_and_gelu_errors():
    np.testing.assert_allclose(ops.softmax(X, axis=0), _softmax_ref(X, 0))
    np.testing.assert_allclose(ops.log_softmax(X, 0), np.log(_softmax_ref(X, 0)), rtol=1e-12)
    assert ops.softmax(X, dtype=np.float32).dtype == np.float32
    with pytest.raises(ValueError, match="approximate must be 'none' or 'tanh'"):
        ops.gelu(X, approximate="fast")


@pytest.mark.parametrize("level, mode", CONFIGS)
@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_compiled_equals_eager(name, level, mode):
    fn = getattr(ops, name)
    jitted = gj.jit(fn, jit_level=level, exec_mode=mode)
    for x in (X.astype(np.float32), X.astype(np.float32) * 3):          # twice: the cached entry too
        assert_identical(jitted(x), fn(x))


def _loss_of(name):
    fn = getattr(ops, name)

    def loss(x):
        return (fn(x) * np.cos(x)).sum()
    return loss


SMOOTH = np.array([[-2.5, -0.7, 0.3, 1.1], [0.9, -1.3, 2.2, -0.05]])


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_gradient_matches_finite_differences(name):
    loss = _loss_of(name)
    check_gradient(loss, SMOOTH, gj.grad(loss)(SMOOTH))


@pytest.mark.parametrize("level", ["O0", "O2"])
@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_compiled_gradient_equals_eager_gradient(name, level):
    loss = _loss_of(name)
    eager = gj.grad(loss)(SMOOTH)
    compiled = gj.grad(gj.jit(loss, jit_level=level))(SMOOTH)
    np.testing.assert_allclose(compiled, eager, rtol=1e-12, atol=1e-14)


LAYERS = [(nn.ReLU(), ops.relu), (nn.ReLU6(), ops.relu6), (nn.Sigmoid(), ops.sigmoid), (nn.Tanh(), ops.tanh),
          (nn.Softmax(), ops.softmax), (nn.Softmax(0), lambda x: ops.softmax(x, 0)),
          (nn.LogSoftmax(), ops.log_softmax), (nn.GELU(), lambda x: ops.gelu(x, "tanh")),
          (nn.GELU(approximate=False), ops.gelu), (nn.LeakyReLU(0.1), lambda x: ops.leaky_relu(x, 0.1)),
          (nn.SiLU(), ops.silu), (nn.Softplus(), ops.softplus)]


@pytest.mark.parametrize("k", range(len(LAYERS)))
def test_layers_call_the_ops(k):
    layer, fn = LAYERS[k]
    x = X.astype(np.float32)
    assert_identical(layer(x), fn(x))
    assert_identical(gj.jit(layer.construct, jit_level="O2")(x), fn(x))


@pytest.mark.parametrize("name, cls", [("relu", nn.ReLU), ("ReLU", nn.ReLU), ("gelu", nn.GELU),
                                       ("softmax", nn.Softmax), ("logsoftmax", nn.LogSoftmax),
                                       ("leakyrelu", nn.LeakyReLU), ("silu", nn.SiLU), ("tanh", nn.Tanh),
                                       ("sigmoid", nn.Sigmoid)])
def test_dense_activation_names(name, cls):
    dense = nn.Dense(3, 4, activation=name)
    assert type(dense.activation) is cls
    x = np.ones((2, 3), np.float32)
    assert_identical(dense(x), cls()(x @ dense.weight.T + dense.bias))


def test_unknown_activation_is_one_clear_error():
    with pytest.raises(ValueError, match="unknown activation 'swoosh'"):
        nn.Dense(3, 4, activation="swoosh")
