"""The in-memory table: hits and misses per key component, guards, weights, threads, reports."""

import logging
import threading
import warnings

import numpy as np
import pytest

import graphjit as ms
from graphjit import nn


def double(x):
    return x * 2.0


def scaled(x, n):
    return x * n


def flatten_twice(x):
    return x.reshape(x.shape[0], -1) * 2.0


# Fixed weights (not drawn from the unseeded initializers): results are the same at every run.
WEIGHT = np.array([[0.5, -0.25, 0.125], [-1.0, 0.75, 0.375]], np.float32)
BIAS = np.array([0.25, -0.5], np.float32)


class Tiny(nn.Cell):
    def __init__(self, bias=True):
        super().__init__()
        self.dense = nn.Dense(3, 2, weight_init=WEIGHT.copy(), bias_init=BIAS.copy() if bias else None,
                              has_bias=bias)

    def construct(self, x):
        return self.dense(x)


MODEL = Tiny()
FACTOR = 2.0


def run_model(x):
    return MODEL(x)


def use_factor(x):
    return x * FACTOR


@pytest.fixture
def recompiles(caplog):
    caplog.set_level(logging.INFO, logger="graphjit.recompiles")
    return lambda: [r.getMessage() for r in caplog.records if r.name == "graphjit.recompiles"]


def test_hit_after_first_call():
    f = ms.jit(double)
    x = np.ones(3)
    for _ in range(3):
        np.testing.assert_array_equal(f(x), x * 2)
    info = f.cache_info()
    assert (info["compiles"], info["misses"], info["hits"], info["entries"]) == (1, 1, 2, 1)
    assert set(info) >= {"hits", "misses", "compiles", "disk_loads", "compile_seconds"}
    assert info["compile_seconds"] > 0


def test_miss_per_signature_component(recompiles):
    f = ms.jit(scaled)
    f(np.ones((4, 3)), 2)
    f(np.ones((4, 3)), 2)             # hit
    f(np.ones((5, 3)), 2)             # shape
    f(np.ones((5, 3), np.float32), 2)  # dtype
    f(np.ones((5, 3), np.float32), 3)  # value
    f(np.ones((5, 3), np.float32), 3.0)  # type of a scalar
    assert f.cache_info()["compiles"] == 5
    lines = recompiles()
    assert lines[0] == "recompiling scaled: x.shape changed (4, 3) → (5, 3)"
    assert lines[1] == "recompiling scaled: x.dtype changed float64 → float32"
    assert lines[2] == "recompiling scaled: n changed 2 → 3"
    assert lines[3] == "recompiling scaled: n changed 3 → 3.0"


def test_miss_per_config_component(recompiles):
    f = ms.jit(double)
    x = np.ones(3)
    f(x)
    try:
        ms.set_context(jit_config=ms.JitConfig(jit_level="O2"))
        f(x)
        ms.set_context(jit_config=ms.JitConfig(jit_level="O2", exec_mode="sink"))
        f(x)
        ms.set_context(jit_syntax_level=ms.STRICT)
        f(x)
        f(x)
    finally:
        ms.set_context(jit_config=ms.JitConfig(), jit_syntax_level=ms.LAX)
    f(x)  # back to the first configuration: its entry is still there
    assert f.cache_info()["compiles"] == 4
    assert recompiles() == ["recompiling double: jit_level changed O1 → O2",
                            "recompiling double: exec_mode changed auto → sink",
                            "recompiling double: jit_syntax_level changed LAX → STRICT"]


def test_static_argnums_key_by_value():
    def pick(x, axes):
        return x.sum(axis=axes)
    f = ms.jit(pick, static_argnums=(1,))
    x = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(f(x, (0, 2)), x.sum(axis=(0, 2)))
    np.testing.assert_array_equal(f(x, (0, 2)), x.sum(axis=(0, 2)))
    np.testing.assert_array_equal(f(x, axes=(1,)), x.sum(axis=(1,)))
    assert f.cache_info()["compiles"] == 2
    g = ms.jit(pick, static_argnames="axes")
    g(x, (0,))
    assert g.static_argnames == ("axes",)
    with pytest.raises(TypeError, match="hashable"):
        ms.jit(pick, static_argnums=0)(x, 1)
    with pytest.raises(ValueError, match="static_argnames"):
        ms.jit(pick, static_argnames="nope")


def test_dynamic_dims_compile_once_and_stay_shape_generic(recompiles):
    f = ms.jit(flatten_twice, dynamic=True)
    for batch in (64, 32, 1):
        x = np.ones((batch, 1, 28, 28), np.float32)
        np.testing.assert_array_equal(f(x), flatten_twice(x))
    assert f.cache_info()["compiles"] == 1
    source = f.source(np.ones((8, 1, 28, 28), np.float32))
    assert "64" not in source and "784" not in source, source
    f(np.ones((5, 28, 28), np.float32))  # another rank is another entry
    assert f.cache_info()["compiles"] == 2


def test_dynamic_per_argument_axis(recompiles):
    f = ms.jit(flatten_twice, dynamic={"x": [0]})
    f(np.ones((64, 784)))
    f(np.ones((32, 784)))
    assert f.cache_info()["compiles"] == 1
    f(np.ones((32, 10)))
    assert f.cache_info()["compiles"] == 2
    # explained against the most recently created entry
    assert recompiles() == ["recompiling flatten_twice: x.shape changed (64, 784) → (32, 10) (axes [1] are not dynamic)"]


def test_replacing_a_global_cell_recompiles(recompiles):
    global MODEL
    saved = MODEL
    f = ms.jit(run_model)
    x = np.ones((4, 3), np.float32)
    np.testing.assert_allclose(f(x), MODEL.construct(x), rtol=1e-6)
    try:
        MODEL = Tiny()
        MODEL.dense.bias[...] = [3.0, -2.0]   # (fixed weights: make the new model's result differ)
        np.testing.assert_allclose(f(x), MODEL.construct(x), rtol=1e-6)  # the very next call sees it
    finally:
        MODEL = saved
    info = f.cache_info()
    # a new entry; the generated code itself fits the new model (same structure) and is reused
    assert info["entries"] == 2 and info["compiles"] + info["reuses"] == 2
    assert recompiles()[0].startswith("recompiling run_model: guard failed: global 'MODEL' was replaced")


def test_weights_changed_in_place_or_reassigned_need_no_recompile():
    f = ms.jit(run_model)
    x = np.ones((4, 3), np.float32)
    weight, bias = MODEL.dense.weight, MODEL.dense.bias.copy()
    try:
        before = f(x)
        np.testing.assert_array_equal(before, np.tile(WEIGHT.sum(axis=1) + BIAS, (4, 1)))
        MODEL.dense.bias += 1.0
        # float32 sums: compare with an absolute tolerance (a result may be near zero)
        np.testing.assert_allclose(f(x), before + 1.0, rtol=0, atol=1e-6)
        MODEL.dense.weight = np.zeros((2, 3), np.float32)
        np.testing.assert_allclose(f(x), MODEL.construct(x), rtol=0, atol=1e-6)
        np.testing.assert_array_equal(f(x), np.tile(BIAS + 1.0, (4, 1)))
        assert f.cache_info()["compiles"] == 1
    finally:
        MODEL.dense.weight = weight
        MODEL.dense.bias[...] = bias


def test_changing_a_hyper_parameter_recompiles(recompiles):
    cell = Tiny()
    f = ms.jit(cell)
    x = np.ones((4, 3), np.float32)
    f(x)
    cell.dense.has_bias = False
    np.testing.assert_allclose(f(x), x @ cell.dense.weight.T, rtol=1e-6)
    assert f.cache_info()["compiles"] == 2
    assert recompiles() == ["recompiling Tiny.construct: guard failed: self.dense.has_bias changed True → False"]


def test_a_weight_of_another_shape_recompiles():
    cell = Tiny()
    f = ms.jit(cell)
    f(np.ones((4, 3), np.float32))
    cell.dense.weight = np.ones((2, 5), np.float32)
    np.testing.assert_allclose(f(np.ones((4, 5), np.float32)), np.full((4, 2), 5.0) + cell.dense.bias, rtol=1e-6)
    assert f.cache_info()["compiles"] == 2


def test_appending_to_a_sequential_cell_recompiles():
    seq = nn.SequentialCell([nn.ReLU()])
    f = ms.jit(seq)
    x = np.array([-1.0, 2.0])
    f(x)
    seq.append(nn.Tanh())
    np.testing.assert_allclose(f(x), np.tanh(np.maximum(x, 0)))
    assert f.cache_info()["compiles"] == 2


def test_a_list_on_a_cell_changed_in_place_recompiles():
    class Powers(nn.Cell):
        def __init__(self):
            super().__init__()
            self.powers = [1, 2]

        def construct(self, x):
            out = x * 0
            for p in self.powers:
                out = out + x ** p
            return out

    cell = Powers()
    f = ms.jit(cell)
    x = np.arange(3.0)
    f(x)
    cell.powers.append(3)  # no assignment to the cell: checked on every call
    np.testing.assert_allclose(f(x), x + x ** 2 + x ** 3)
    assert f.cache_info()["compiles"] == 2


def test_global_scalar_and_closure_changes_recompile():
    global FACTOR
    f = ms.jit(use_factor)
    x = np.ones(2)
    assert f(x)[0] == 2.0
    FACTOR = 5.0
    try:
        assert f(x)[0] == 5.0
    finally:
        FACTOR = 2.0
    assert f(x)[0] == 2.0  # the first entry again
    assert f.cache_info()["compiles"] == 2

    k = 3.0

    def closure(x):
        return x * k

    g = ms.jit(closure)
    assert g(x)[0] == 3.0
    k = 4.0
    assert g(x)[0] == 4.0


def test_one_compile_serves_another_instance_of_the_same_structure():
    class Holder(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = np.ones(3)

        @ms.jit
        def construct(self, x):
            return x + self.w

    a, b = Holder(), Holder()
    b.w = np.full(3, 2.0)
    np.testing.assert_array_equal(a(np.zeros(3)), np.ones(3))
    np.testing.assert_array_equal(b(np.zeros(3)), np.full(3, 2.0))
    info = Holder.construct.cache_info()
    assert info["compiles"] == 1 and info["entries"] == 2


def test_eight_threads_on_a_cold_function_compile_once():
    f = ms.jit(flatten_twice)
    xs = [np.full((4, 2, 2), float(k)) for k in range(8)]
    barrier = threading.Barrier(8)
    results, errors = [None] * 8, []

    def work(k):
        try:
            barrier.wait()
            for _ in range(20):
                results[k] = f(xs[k])
        except Exception as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k in range(8):
        np.testing.assert_array_equal(results[k], flatten_twice(xs[k]))
    info = f.cache_info()
    assert info["compiles"] == 1 and info["entries"] == 1 and info["hits"] + info["misses"] == 160


def test_recompile_warning_suggests_dynamic_dims(recompiles):
    f = ms.jit(flatten_twice)
    ms.set_context(recompile_warning=3)
    try:
        with pytest.warns(ms.GraphjitWarning) as record:
            for batch in (8, 16, 24, 32, 40):
                f(np.ones((batch, 4)))
    finally:
        ms.set_context(recompile_warning=8)
    assert len(record) == 1
    text = str(record[0].message)
    assert "recompiled 3 times" in text and "dynamic=True" in text and "{'x': [0]}" in text
    assert len(recompiles()) == 4


def test_recompile_warning_for_changing_scalar_values():
    f = ms.jit(scaled)
    ms.set_context(recompile_warning=2)
    try:
        with pytest.warns(ms.GraphjitWarning, match="take new values"):
            for n in range(4):
                f(np.ones(2), n)
    finally:
        ms.set_context(recompile_warning=8)


def test_disable_still_runs_eagerly(monkeypatch):
    f = ms.jit(double)
    x = np.ones(2)
    f(x)
    monkeypatch.setenv("GRAPHJIT_DISABLE", "1")
    calls = []

    def spy(x):
        calls.append(1)
        return x * 2.0

    g = ms.jit(spy)
    g(x)
    f(x)  # compiled before: GRAPHJIT_DISABLE is read on every call
    assert calls == [1] and g.cache_info()["compiles"] == 0 and f.cache_info()["hits"] == 0


def test_keyword_and_default_arguments_reach_the_fast_path():
    def with_default(x, scale=2.0, *, shift=0.0):
        return x * scale + shift

    f = ms.jit(with_default)
    x = np.ones(2)
    np.testing.assert_array_equal(f(x), x * 2)
    np.testing.assert_array_equal(f(x=x), x * 2)
    np.testing.assert_array_equal(f(x, shift=1.0), x * 2 + 1)
    assert f.cache_info()["compiles"] == 2
    assert "def __call__(_gj_self, x, scale=_gj_D, *, shift=_gj_D)" in type(f).__call__.__graphjit_source__
    with_default.__defaults__ = (3.0,)        # defaults are data, read at each call as Python does
    with_default.__kwdefaults__["shift"] = 5.0
    np.testing.assert_array_equal(f(x), x * 3 + 5)


def test_log_topics_from_the_environment(capsys, monkeypatch):
    from graphjit import log
    monkeypatch.setenv("GRAPHJIT_LOG", "recompiles")
    log.refresh()
    try:
        f = ms.jit(double)
        f(np.ones(2))
        f(np.ones(3))
    finally:
        monkeypatch.delenv("GRAPHJIT_LOG")
        log.refresh()
    err = capsys.readouterr().err
    assert "graphjit.recompiles: recompiling double: x.shape changed (2,) → (3,)" in err
    assert "graphjit.cache" not in err
    assert set(log.TOPICS) >= {"recompiles", "cache", "passes", "fallback"}


def test_ufunc_methods_do_not_fail_their_guard_at_every_call():
    # `np.add.outer is np.add.outer` is False: a bound method is made at each access
    def outer(a):
        return np.add.outer(a, a)

    f = ms.jit(outer)
    for _ in range(5):
        np.testing.assert_array_equal(f(np.arange(3.0)), np.add.outer(np.arange(3.0), np.arange(3.0)))
    assert f.cache_info()["compiles"] == 1 and f.cache_info()["recompiles"] == 0
