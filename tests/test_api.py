"""The public surface: jit spellings, modes, JitConfig, GRAPHJIT_DISABLE, errors."""

import numpy as np
import pytest

import graphjit as ms
from graphjit import nn


def double(x):
    return x * 2


class Tiny(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(3, 2, activation="relu")
        self.soft = nn.Softmax()

    def construct(self, x):
        return self.soft(self.dense(x))


def test_jit_spellings():
    x = np.arange(3.0)
    assert np.array_equal(ms.jit(double)(x), x * 2)
    assert np.array_equal(ms.jit()(double)(x), x * 2)
    assert np.array_equal(ms.jit(jit_config=ms.JitConfig(jit_level="O0"))(double)(x), x * 2)
    cell = Tiny()
    xs = np.ones((4, 3), np.float32)
    np.testing.assert_allclose(ms.jit(cell)(xs), cell.construct(xs), rtol=1e-6)
    np.testing.assert_allclose(ms.jit(cell.construct)(xs), cell.construct(xs), rtol=1e-6)


def test_jit_config_validation_and_exc_mode():
    assert ms.JitConfig(exc_mode="no_sink").exec_mode == "no_sink"
    with pytest.raises(ValueError, match="jit_level"):
        ms.JitConfig(jit_level="O9")
    with pytest.raises(ValueError, match="exec_mode"):
        ms.JitConfig(exec_mode="fast")
    with pytest.raises(TypeError):
        ms.jit(double, bogus=1)


def test_context_round_trip():
    ms.set_context(jit_syntax_level="strict")
    assert ms.get_context("jit_syntax_level") == ms.STRICT
    ms.set_context(jit_syntax_level=ms.LAX)
    with pytest.raises(ValueError):
        ms.set_context(mode=5)
    assert ms.get_context("mode") == ms.PYNATIVE_MODE


def test_graphjit_disable(monkeypatch):
    monkeypatch.setenv("GRAPHJIT_DISABLE", "1")
    calls = []

    def f(x):
        calls.append(1)
        return x + 1

    jitted = ms.jit(f)
    jitted(np.zeros(2))
    assert calls == [1] and jitted.cache_info()["compiles"] == 0


def test_cell_structure():
    cell = Tiny()
    names = list(cell.parameters_dict())
    assert names == ["dense.weight", "dense.bias"]
    assert cell.dense.weight.shape == (2, 3) and cell.dense.weight.dtype == np.float32
    seq = nn.SequentialCell([nn.ReLU(), nn.Tanh()])
    assert len(seq) == 2 and isinstance(seq[1], nn.Tanh)
    assert cell.set_train().training and cell.dense.training


def test_set_seed_is_deterministic():
    ms.set_seed(7)
    a = nn.Dense(4, 4).weight
    ms.set_seed(7)
    assert np.array_equal(a, nn.Dense(4, 4).weight)


def test_recompiles_per_signature():
    f = ms.jit(double)
    f(np.zeros(3))
    f(np.zeros(3))
    f(np.zeros(4))
    f(np.zeros(3, np.float32))
    assert f.cache_info()["compiles"] == 3


def test_unsupported_construct_names_its_location():
    def bad(x):
        with open("f") as fh:
            return x
    with pytest.raises(SyntaxError) as info:
        ms.jit(bad, fullgraph=True)(np.zeros(2))
    text = str(info.value)
    assert "`with`" in text and "test_api.py:" in text and "GJ302" in text


def test_error_has_no_internal_traceback():
    def bad(x):
        return undefined_name + x  # noqa: F821
    with pytest.raises(Exception) as info:
        ms.jit(bad, fullgraph=True)(np.zeros(2))
    assert "`undefined_name` is not defined" in str(info.value)
    assert info.value.__traceback__ is None or all(
        "graphjit/transpiler" not in str(tb.tb_frame.f_code.co_filename) for tb in _walk(info.value.__traceback__))


def _walk(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next


def test_method_binding_and_source():
    class Holder(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = np.ones(3)

        @ms.jit
        def construct(self, x):
            return x + self.w

    h = Holder()
    assert np.array_equal(h(np.zeros(3)), np.ones(3))
    assert "self.w" in h.construct.source(np.zeros(3))
    assert "param" in str(h.construct.graph(np.zeros(3)))
