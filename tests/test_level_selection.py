"""Which jit_syntax_level applies: set_context < JitConfig < fullgraph < GRAPHJIT_JIT_SYNTAX_LEVEL."""

import warnings

import numpy as np
import pytest

import graphjit as ms
from graphjit import nn


def uses_try(x):
    try:
        y = x * 2
    except ValueError:
        y = x
    return y


X = np.arange(3.0)


def compiles(fn, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            np.testing.assert_array_equal(ms.jit(fn, **options)(X), X * 2)
        except SyntaxError:
            return False
    return True


@pytest.fixture(autouse=True)
def _reset_context(monkeypatch):
    monkeypatch.delenv("GRAPHJIT_JIT_SYNTAX_LEVEL", raising=False)
    yield
    ms.set_context(jit_syntax_level=ms.LAX, jit_config=ms.JitConfig())


def test_default_is_lax_with_a_warning():
    with pytest.warns(UserWarning, match="GJ301"):
        np.testing.assert_array_equal(ms.jit(uses_try)(X), X * 2)


def test_context_level():
    ms.set_context(jit_syntax_level="strict")
    assert not compiles(uses_try)
    ms.set_context(jit_syntax_level=ms.COMPATIBLE)
    assert not compiles(uses_try)


def test_jit_config_beats_context():
    ms.set_context(jit_syntax_level=ms.STRICT)
    assert compiles(uses_try, jit_config=ms.JitConfig(jit_syntax_level="LAX"))
    ms.set_context(jit_syntax_level=ms.LAX)
    assert not compiles(uses_try, jit_config=ms.JitConfig(jit_syntax_level="STRICT"))


def test_context_jit_config_and_cell_config():
    ms.set_context(jit_config=ms.JitConfig(jit_syntax_level="STRICT"))
    assert not compiles(uses_try)

    class TryCell(nn.Cell):
        def construct(self, x):
            try:
                return x * 2
            except ValueError:
                return x

    cell = TryCell()
    cell.set_jit_config(ms.JitConfig(jit_syntax_level="LAX"))
    ms.set_context(mode=ms.GRAPH_MODE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(cell(X), X * 2)
    cell.set_jit_config(ms.JitConfig(jit_syntax_level="STRICT"))
    with pytest.raises(SyntaxError):
        cell(X)


def test_fullgraph_beats_jit_config():
    assert not compiles(uses_try, fullgraph=True, jit_config=ms.JitConfig(jit_syntax_level="LAX"))
    assert compiles(uses_try, fullgraph=False, jit_config=ms.JitConfig(jit_syntax_level="STRICT"))


def test_environment_beats_everything(monkeypatch):
    monkeypatch.setenv("GRAPHJIT_JIT_SYNTAX_LEVEL", "strict")
    assert not compiles(uses_try, fullgraph=False)
    monkeypatch.setenv("GRAPHJIT_JIT_SYNTAX_LEVEL", "LAX")
    assert compiles(uses_try, fullgraph=True)


def test_bad_level_names_are_rejected():
    with pytest.raises(ValueError):
        ms.set_context(jit_syntax_level="loose")
    with pytest.raises(ValueError):
        ms.JitConfig(jit_syntax_level="loose")


def test_error_lists_all_problems_as_objects():
    def several(x):
        global counter
        with open("f"):
            pass
        return {v for v in x}

    with pytest.raises(SyntaxError) as info:
        ms.jit(several, fullgraph=True)(X)
    codes = [d.code for d in info.value.diagnostics]
    assert codes == ["GJ202", "GJ302", "GJ321"]
    assert all(d.span.file.endswith("test_level_selection.py") for d in info.value.diagnostics)
