"""Optimizers: each update against a hand-written NumPy reference of MindSpore's formula, and the
jitted training step (forward, backward, update in one graph) equal to the eager one after many
steps, parameters and optimizer state alike, at O0/O1/O2, through the emitter and the interpreter."""

import warnings

import numpy as np
import pytest

import graphjit as ms
from graphjit import nn

STEPS = 6


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(4, 8)
        self.out = nn.Dense(8, 3)

    def construct(self, x):
        return self.out(np.maximum(self.dense(x), 0))


OPTIMIZERS = {
    "sgd": lambda p: nn.SGD(p, 0.1),
    "sgd_momentum": lambda p: nn.SGD(p, 0.1, momentum=0.9, dampening=0.2, weight_decay=0.01),
    "sgd_nesterov": lambda p: nn.SGD(p, 0.05, momentum=0.8, nesterov=True, loss_scale=2.0),
    "momentum": lambda p: nn.Momentum(p, 0.1, 0.9),
    "momentum_nesterov": lambda p: nn.Momentum(p, 0.1, 0.9, weight_decay=0.01, use_nesterov=True),
    "adam": lambda p: nn.Adam(p, 0.01),
    "adam_nesterov": lambda p: nn.Adam(p, 0.01, use_nesterov=True, weight_decay=0.01),
    "adam_weight_decay": lambda p: nn.AdamWeightDecay(p, 0.01, weight_decay=0.1),
    "adamw": lambda p: nn.AdamW(p, 0.01),
    "adamw_amsgrad": lambda p: nn.AdamW(p, 0.01, amsgrad=True, maximize=False, weight_decay=0.05),
}


def reference(name, params, grads_per_step):
    """MindSpore's formulas written out by hand in NumPy (float64), one step per gradient list."""
    p = [np.array(w, np.float64) for w in params]
    n = len(p)
    v, m, s, vmax = [np.zeros_like(w) for w in p], [np.zeros_like(w) for w in p], \
        [np.zeros_like(w) for w in p], [np.zeros_like(w) for w in p]
    for t, grads in enumerate(grads_per_step, start=1):
        g = [np.array(x, np.float64) for x in grads]
        for k in range(n):
            if name == "sgd":
                p[k] -= 0.1 * g[k]
            elif name == "sgd_momentum":
                gk = g[k] + 0.01 * p[k]
                v[k] = gk if t == 1 else 0.9 * v[k] + 0.8 * gk
                p[k] -= 0.1 * v[k]
            elif name == "sgd_nesterov":
                gk = g[k] / 2.0
                v[k] = gk if t == 1 else 0.8 * v[k] + gk
                p[k] -= 0.05 * (gk + 0.8 * v[k])
            elif name in ("momentum", "momentum_nesterov"):
                gk = g[k] + (0.01 * p[k] if name == "momentum_nesterov" else 0)
                v[k] = 0.9 * v[k] + gk
                p[k] -= 0.1 * (gk + 0.9 * v[k]) if name == "momentum_nesterov" else 0.1 * v[k]
            elif name in ("adam", "adam_nesterov"):
                gk = g[k] + (0.01 * p[k] if name == "adam_nesterov" else 0)
                m[k] = 0.9 * m[k] + 0.1 * gk
                s[k] = 0.999 * s[k] + 0.001 * gk * gk
                lr = 0.01 * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
                num = 0.9 * m[k] + 0.1 * gk if name == "adam_nesterov" else m[k]
                p[k] -= lr * num / (np.sqrt(s[k]) + 1e-8)
            elif name == "adam_weight_decay":
                m[k] = 0.9 * m[k] + 0.1 * g[k]
                s[k] = 0.999 * s[k] + 0.001 * g[k] * g[k]
                p[k] -= 0.01 * (m[k] / (np.sqrt(s[k]) + 1e-6) + 0.1 * p[k])
            else:
                decay = 0.01 if name == "adamw" else 0.05
                p[k] *= 1 - 0.01 * decay
                m[k] = 0.9 * m[k] + 0.1 * g[k]
                s[k] = 0.999 * s[k] + 0.001 * g[k] * g[k]
                s_hat = s[k] / (1 - 0.999 ** t)
                if name == "adamw_amsgrad":
                    vmax[k] = np.maximum(vmax[k], s_hat)
                    s_hat = vmax[k]
                p[k] -= 0.01 * (m[k] / (1 - 0.9 ** t)) / (np.sqrt(s_hat) + 1e-8)
    return p


def gradients(seed, shapes, steps):
    rng = np.random.default_rng(seed)
    return [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(steps)]


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_update_matches_numpy_reference(name):
    ms.set_seed(0)
    net = Net()
    opt = OPTIMIZERS[name](net.trainable_params())
    start = [np.array(p) for p in opt.parameters]
    grads = gradients(1, [p.shape for p in start], STEPS)
    for g in grads:
        opt(tuple(g))
    for got, want in zip(opt.parameters, reference(name, start, grads)):
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)
    assert int(opt.global_step[0]) == STEPS


def training_step(name, seed):
    ms.set_seed(seed)
    net = Net()
    opt = OPTIMIZERS[name](net.trainable_params())
    loss_fn = nn.CrossEntropyLoss()

    def forward(x, y):
        return loss_fn(net(x), y)
    grad_fn = ms.value_and_grad(forward, None, opt.parameters)

    def step(x, y):
        loss, grads = grad_fn(x, y)
        opt(grads)
        return loss
    return net, opt, step


def state(net, opt):
    return [(n, np.array(p)) for n, p in list(net.parameters_and_names()) + list(opt.parameters_and_names())]


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("level,exec_mode", [("O0", "auto"), ("O1", "auto"), ("O2", "auto"), ("O1", "no_sink")])
def test_jitted_step_equals_eager(name, level, exec_mode):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    y = rng.integers(0, 3, 5)
    eager_net, eager_opt, eager_step = training_step(name, 7)
    net, opt, step = training_step(name, 7)
    jitted = ms.jit(step, jit_config=ms.JitConfig(jit_level=level, exec_mode=exec_mode))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ms.GraphjitWarning)
        for _ in range(STEPS):
            np.testing.assert_allclose(jitted(x, y), eager_step(x, y), rtol=1e-6)
    for (n1, a), (n2, b) in zip(state(net, opt), state(eager_net, eager_opt)):
        assert n1 == n2
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7, err_msg=n1)
    assert jitted.cache_info()["compiles"] == 1


def test_update_is_inline_and_state_read_at_call_time():
    net, opt, step = training_step("adam", 0)
    x, y = np.ones((2, 4), np.float32), np.array([0, 1])
    jitted = ms.jit(step)
    jitted(x, y)
    source = jitted.source(x, y)
    assert "moment1" in source and "learning_rate" in source and "fallback" not in source
    opt.learning_rate.set_data(np.float32(0.0))                    # changed in place: no recompile
    before = [np.array(p) for p in opt.parameters]
    jitted(x, y)
    for a, b in zip(opt.parameters, before):
        np.testing.assert_array_equal(a, b)
    assert jitted.cache_info()["compiles"] == 1


def test_state_names_are_mindspores():
    net = Net()
    names = [n for n, _ in nn.Adam(net.trainable_params()).parameters_and_names()]
    assert names[:3] == ["learning_rate", "global_step", "moment1.dense.weight"]
    assert "moment2.out.bias" in names and "beta1_power" in names
    sgd = nn.SGD(net.trainable_params(), momentum=0.9)
    assert [n for n, _ in sgd.parameters_and_names()][2] == "accum.dense.weight"


def test_trainable_params_inside_jit():
    net = Net()

    @ms.jit
    def total(x):
        s = x.sum()
        for p in net.trainable_params():
            s = s + p.sum()
        return s
    with warnings.catch_warnings():
        warnings.simplefilter("error", ms.GraphjitWarning)
        np.testing.assert_allclose(total(np.zeros(2)), sum(p.sum() for p in net.trainable_params()), rtol=1e-5)
    net.out.bias.requires_grad = False                              # guarded: recompiles
    np.testing.assert_allclose(total(np.zeros(2)), sum(p.sum() for p in net.trainable_params()), rtol=1e-5)
    net.mask = np.ones(3, np.float32)          # a plain array: no requires_grad, trainable as in eager
    with warnings.catch_warnings():
        warnings.simplefilter("error", ms.GraphjitWarning)
        np.testing.assert_allclose(total(np.zeros(2)), sum(p.sum() for p in net.trainable_params()), rtol=1e-5)


@pytest.mark.parametrize("make,message", [
    (lambda p: nn.SGD(p, 0.1, nesterov=True), "nesterov"),
    (lambda p: nn.SGD(p, [0.1, 0.2]), "learning_rate"),
    (lambda p: nn.Adam(p, beta1=1.5), "beta1"),
    (lambda p: nn.SGD([{"params": p}]), "groups"),
    (lambda p: nn.SGD([np.ones(2)]), "Parameters"),
])
def test_clear_errors(make, message):
    with pytest.raises((TypeError, ValueError), match=message):
        make(Net().trainable_params())


def test_wrong_number_of_gradients():
    opt = nn.SGD(Net().trainable_params())
    with pytest.raises(ValueError, match="4 parameters but got 1"):
        opt((np.ones(2),))


@pytest.mark.parametrize("level", ["O0", "O1", "O2"])
def test_weight_gradient_is_laid_out_like_the_weight(level):
    """The cotangent of `w.T` in `x @ w.T` is `g.T @ x` (C order, like `w`), not `(x.T @ g).T`: equal
    values, and the optimizer's update over it runs without striding."""
    net = Net()
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)

    def loss(x):
        return (net(x) ** 2).sum()
    grad_fn = ms.grad(ms.jit(loss, jit_config=ms.JitConfig(jit_level=level)), None, net.trainable_params())
    grads = grad_fn(x)
    h = np.maximum(x @ net.dense.weight.T + net.dense.bias, 0)
    out = h @ net.out.weight.T + net.out.bias
    np.testing.assert_allclose(grads[2], (2 * out).T @ h, rtol=1e-5)
    assert all(g.flags.c_contiguous for g in grads)
    assert ").T\n" not in grad_fn.source(x)
