"""nn/normalization.py: BatchNorm1d/2d and LayerNorm against hand-written NumPy references; moving
statistics updated in place inside the compiled graph, equal to eager after several training steps at
every level and execution mode; `set_train` switches seen at the next call; gradients of the input,
gamma and beta by finite differences, eagerly and compiled."""

import numpy as np
import pytest

import graphjit as gj
from graphjit import nn
from layer_testing import CONFIGS, assert_identical, check_gradient, run_layer_both


def bn_reference(x, axes, shape, gamma, beta, mean, var, eps=1e-5):
    return (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * gamma.reshape(shape) + beta.reshape(shape)


def _data(shape, seed=0):
    return (np.random.default_rng(seed).standard_normal(shape) * 2 + 1).astype(np.float32)


LAYOUTS = [  # (make, input shape, reduced axes, statistics shape)
    (lambda: nn.BatchNorm1d(3), (6, 3), (0,), (3,)),
    (lambda: nn.BatchNorm1d(3), (4, 3, 5), (0, 2), (3, 1)),
    (lambda: nn.BatchNorm2d(3), (2, 3, 4, 5), (0, 2, 3), (3, 1, 1)),
    (lambda: nn.BatchNorm2d(3, data_format="NHWC"), (2, 4, 5, 3), (0, 1, 2), (3,)),
]


@pytest.mark.parametrize("k", range(len(LAYOUTS)))
def test_batchnorm_training_step_matches_reference(k):
    make, shape, axes, stat_shape = LAYOUTS[k]
    bn = make().set_train()
    bn.gamma[...] = np.linspace(0.5, 2, 3)
    bn.beta[...] = np.linspace(-1, 1, 3)
    x = _data(shape)
    y = bn(x)
    mean, var = x.mean(axis=axes), x.var(axis=axes)
    n = x.size // 3
    np.testing.assert_allclose(y, bn_reference(x, axes, stat_shape, bn.gamma, bn.beta, mean, var), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(bn.moving_mean, 0.1 * mean, rtol=1e-5, atol=1e-6)            # 0.9 * 0 + 0.1 * mean
    np.testing.assert_allclose(bn.moving_variance, 0.9 + 0.1 * var * n / (n - 1), rtol=1e-5)  # 0.9 * 1 + ...


@pytest.mark.parametrize("k", range(len(LAYOUTS)))
def test_batchnorm_eval_uses_moving_statistics(k):
    make, shape, axes, stat_shape = LAYOUTS[k]
    bn = make().set_train(False)
    bn.moving_mean[...] = [0.5, -1.0, 2.0]
    bn.moving_variance[...] = [4.0, 0.25, 1.0]
    x = _data(shape)
    expected = bn_reference(x, axes, stat_shape, bn.gamma, bn.beta, bn.moving_mean, bn.moving_variance)
    np.testing.assert_allclose(bn(x), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(bn.moving_mean, [0.5, -1.0, 2.0])                          # untouched


def test_use_batch_statistics_overrides_the_mode():
    x = _data((5, 3))
    on = nn.BatchNorm1d(3, use_batch_statistics=True).set_train(False)
    y = on(x)
    np.testing.assert_allclose(y.mean(axis=0), 0, atol=1e-5)
    assert np.abs(on.moving_mean).sum() > 0                                                  # updated
    off = nn.BatchNorm1d(3, use_batch_statistics=False).set_train(True)
    np.testing.assert_allclose(off(x), x / np.sqrt(1 + 1e-5), rtol=1e-6)
    np.testing.assert_array_equal(off.moving_mean, 0)


def test_batchnorm_parameters_and_defaults():
    bn = nn.BatchNorm2d(4)
    assert [n for n, _ in bn.parameters_and_names()] == ["gamma", "beta", "moving_mean", "moving_variance"]
    assert [p.name for p in bn.trainable_params()] == ["gamma", "beta"]
    assert (bn.eps, bn.momentum, bn.use_batch_statistics, bn.data_format) == (1e-5, 0.9, None, "NCHW")
    np.testing.assert_array_equal(bn.moving_variance, 1)
    assert not nn.BatchNorm1d(2, affine=False).trainable_params()
    custom = nn.BatchNorm1d(2, gamma_init=0.5, moving_var_init="zeros")
    np.testing.assert_array_equal(custom.gamma, 0.5)
    np.testing.assert_array_equal(custom.moving_variance, 0)


@pytest.mark.parametrize("bad, message", [
    (dict(num_features=0), "num_features must be a positive int"),
    (dict(num_features=3, momentum=1.5), "momentum must be in"),
    (dict(num_features=3, data_format="NCW"), "data_format must be"),
])
def test_batchnorm_bad_arguments(bad, message):
    with pytest.raises(ValueError, match=message):
        nn.BatchNorm2d(**bad)


def test_batchnorm_wrong_rank_is_one_clear_error():
    with pytest.raises(ValueError, match="BatchNorm2d takes 4-dimensional inputs"):
        nn.BatchNorm2d(3)(np.ones((2, 3), np.float32))


@pytest.mark.parametrize("level, mode", CONFIGS)
@pytest.mark.parametrize("k", range(len(LAYOUTS)))
def test_compiled_equals_eager_across_steps_and_mode_switches(k, level, mode):
    make, shape, _, _ = LAYOUTS[k]
    eager, compiled = run_layer_both(make, [_data(shape)], level, mode, train_modes=(True, False, True, False), calls=3)
    assert np.abs(compiled.moving_mean).sum() > 0                                            # 6 training steps


class BNNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(4, 3, weight_init="normal")
        self.bn = nn.BatchNorm1d(3)
        self.ln = nn.LayerNorm((3,))

    def construct(self, x):
        return self.ln(self.bn(self.dense(x)))


@pytest.mark.parametrize("level, mode", CONFIGS)
def test_network_compiled_equals_eager_switching_train(level, mode):
    run_layer_both(BNNet, [_data((5, 4))], level, mode, train_modes=(True, False, True), calls=2)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("jitted", [False, True])
def test_batchnorm_gradients_by_finite_differences(training, jitted):
    bn = nn.BatchNorm2d(2, gamma_init=np.array([1.5, 0.5]), beta_init=np.array([0.1, -0.2]), dtype=np.float64)
    bn.moving_mean[...] = [0.3, -0.1]
    bn.moving_variance[...] = [2.0, 0.5]
    bn.set_train(training)
    x = np.random.default_rng(2).standard_normal((3, 2, 2, 2))
    w = np.random.default_rng(3).standard_normal((3, 2, 2, 2))
    saved = (bn.moving_mean.copy(), bn.moving_variance.copy())

    def loss(x):
        bn.moving_mean[...], bn.moving_variance[...] = saved     # every evaluation sees the same statistics
        return (bn(x) * w).sum()
    fn = gj.jit(loss, jit_level="O2") if jitted else loss
    gx, (gg, gb) = gj.grad(fn, 0, [bn.gamma, bn.beta])(x)
    check_gradient(loss, x, gx)
    gamma0, beta0 = bn.gamma.copy(), bn.beta.copy()

    def of_gamma(g):
        bn.gamma[...] = g
        value = loss(x)
        bn.gamma[...] = gamma0
        return value

    def of_beta(b):
        bn.beta[...] = b
        value = loss(x)
        bn.beta[...] = beta0
        return value
    check_gradient(of_gamma, gamma0.copy(), gg)
    check_gradient(of_beta, beta0.copy(), gb)


def test_layernorm_matches_reference_and_defaults():
    ln = nn.LayerNorm((4,))
    assert ln.epsilon == 1e-7 and ln.begin_norm_axis == -1 and ln.begin_params_axis == -1
    ln.gamma[...] = [1.0, 2.0, 0.5, 1.0]
    ln.beta[...] = [0.0, 1.0, 0.0, -1.0]
    x = _data((2, 3, 4))
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    np.testing.assert_allclose(ln(x), (x - mean) / np.sqrt(var + 1e-7) * ln.gamma + ln.beta, rtol=1e-5, atol=1e-6)


def test_layernorm_over_several_axes():
    ln = nn.LayerNorm((3, 4), begin_norm_axis=1, begin_params_axis=1)
    x = _data((2, 3, 4))
    mean, var = x.mean((1, 2), keepdims=True), x.var((1, 2), keepdims=True)
    np.testing.assert_allclose(ln(x), (x - mean) / np.sqrt(var + 1e-7), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="normalized_shape \\(3, 4\\) must be the input's shape"):
        ln(_data((2, 4, 3)).reshape(2, 3, 4, 1))


@pytest.mark.parametrize("level, mode", CONFIGS)
def test_layernorm_compiled_equals_eager(level, mode):
    run_layer_both(lambda: nn.LayerNorm((3, 4), begin_norm_axis=1, begin_params_axis=1), [_data((2, 3, 4))],
                   level, mode, train_modes=(True, False))


@pytest.mark.parametrize("jitted", [False, True])
def test_layernorm_gradients_by_finite_differences(jitted):
    ln = nn.LayerNorm((4,), gamma_init="normal", beta_init="normal", dtype=np.float64)
    x = np.random.default_rng(4).standard_normal((3, 4))
    w = np.random.default_rng(5).standard_normal((3, 4))

    def loss(x):
        return (ln(x) * w).sum()
    fn = gj.jit(loss, jit_level="O1") if jitted else loss
    gx, (gg, gb) = gj.grad(fn, 0, [ln.gamma, ln.beta])(x)
    check_gradient(loss, x, gx)
    np.testing.assert_allclose(gb, w.sum(0), rtol=1e-12)
    normalized = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-7)
    np.testing.assert_allclose(gg, (normalized * w).sum(0), rtol=1e-10)


@pytest.mark.parametrize("level", ["O0", "O1", "O2"])
def test_training_steps_with_value_and_grad_update_moving_statistics_once_per_step(level):
    def make():
        gj.set_seed(0)
        return BNNet().set_train()
    eager_net, compiled_net = make(), make()
    xs = [_data((6, 4), seed=k) for k in range(3)]

    def steps(net, jitted):
        def loss(x):
            return (net(x) ** 2).mean()
        fn = gj.jit(loss, jit_level=level) if jitted else loss
        step = gj.value_and_grad(fn, None, net.trainable_params())
        out = []
        for x in xs:
            value, grads = step(x)
            for p, g in zip(net.trainable_params(), grads):
                p -= 0.1 * g                                     # the optimizer's in-place update
            out.append(value)
        return out
    eager_values, compiled_values = steps(eager_net, False), steps(compiled_net, True)
    np.testing.assert_allclose(compiled_values, eager_values, rtol=1e-6)
    for (name, a), (_, b) in zip(eager_net.parameters_and_names(), compiled_net.parameters_and_names()):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-7, err_msg=name)
    assert not np.allclose(compiled_net.bn.moving_mean, 0)


@pytest.mark.parametrize("jitted", [False, True])
def test_one_value_and_grad_call_updates_the_statistics_once(jitted):
    bn = nn.BatchNorm1d(3).set_train()
    x = _data((5, 3))

    def loss(x):
        return (bn(x) ** 2).sum()
    gj.value_and_grad(gj.jit(loss, jit_level="O2") if jitted else loss, None, bn.trainable_params())(x)
    np.testing.assert_allclose(bn.moving_mean, 0.1 * x.mean(0), rtol=1e-5)
