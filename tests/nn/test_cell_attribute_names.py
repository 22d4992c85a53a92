"""A sub-cell whose name is not an identifier (`setattr(self, "layer-1", nn.Dense(...))`) compiles and equals
eager: its weights are read through `getattr(self, 'layer-1')` (graph/paths.py)."""

import warnings

import numpy as np
import pytest

import graphjit as ms
from graphjit import nn
from graphjit.graph.paths import Path, parse_path


class Dashed(nn.Cell):
    def __init__(self):
        super().__init__()
        setattr(self, "layer-1", nn.Dense(3, 2))
        setattr(self, "class", nn.Dense(2, 2))     # a keyword: not `self.class` either

    def construct(self, x):
        x = getattr(self, "layer-1")(x)
        return getattr(self, "class")(x)


class Iterated(nn.Cell):
    def __init__(self):
        super().__init__()
        setattr(self, "layer-1", nn.Dense(3, 2))
        self.relu = nn.ReLU()

    def construct(self, x):
        for cell in self.cells():
            x = cell(x)
        return x


X = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(4, 3)


@pytest.fixture(autouse=True)
def _reset_context(monkeypatch, tmp_path):
    monkeypatch.setenv("GRAPHJIT_CACHE_DIR", str(tmp_path / "cache"))
    yield
    ms.set_context(jit_syntax_level=ms.LAX, jit_config=ms.JitConfig())


@pytest.mark.parametrize("level", [ms.LAX, ms.STRICT])
def test_a_sub_cell_named_by_getattr_compiles_and_equals_eager(level):
    ms.set_context(jit_syntax_level=level)
    net = Dashed()
    expected = net.construct(X)
    np.testing.assert_allclose(ms.jit(net.construct)(X), expected, rtol=1e-6)
    getattr(net, "layer-1").weight.set_data(np.ones((2, 3), np.float32))   # weights read at call time
    np.testing.assert_allclose(ms.jit(net.construct)(X), net.construct(X), rtol=1e-6)


def test_sub_cells_iterated_equal_eager_at_lax_and_are_a_compile_time_diagnostic_at_strict():
    net = Iterated()
    expected = net.construct(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(ms.jit(net.construct)(X), expected, rtol=1e-6)
    ms.set_context(jit_syntax_level=ms.STRICT)
    with pytest.raises(SyntaxError):      # raised while compiling: never a failure half-way through a call
        ms.jit(Iterated().construct)(X)


def test_a_path_through_a_non_identifier_attribute_round_trips():
    path = Path("arg", "self").attr("layer-1").attr("weight").item(0).attr("class")
    text = str(path)
    assert text == "getattr(getattr(self, 'layer-1').weight[0], 'class')"
    assert parse_path(text) == path
