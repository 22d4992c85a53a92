"""Run-time errors raised inside generated code keep their type and message and point at the user's line."""

import importlib
import traceback

import numpy as np
import pytest

import graphjit as ms
from graphjit import nn

SOURCE = '''import numpy as np


def bad_matmul(x, w):
    y = x + 1
    return y @ w


def bad_index(x):
    k = x.shape[0] + 2
    return x[k] * 2.0
'''


@pytest.fixture
def user(tmp_path, monkeypatch):
    (tmp_path / "errmod.py").write_text(SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("errmod")
    yield module
    import sys
    sys.modules.pop("errmod", None)


def eager_error(fn, *args):
    with pytest.raises(Exception) as info:
        fn(*args)
    return info.value


@pytest.mark.parametrize("calls", [1, 2])  # the first call (slow path) and a cache hit (fast path)
def test_shape_error_points_at_the_user_line(user, calls):
    jitted = ms.jit(user.bad_matmul)
    x, w = np.ones((2, 3)), np.ones((4, 5))
    if calls == 2:
        jitted(np.ones((2, 3)), np.ones((3, 5)))
    expected = eager_error(user.bad_matmul, x, w)
    with pytest.raises(ValueError) as info:
        jitted(x, w)
    error = info.value
    assert type(error) is type(expected) and str(error) == str(expected)
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    assert f'File "{user.__file__}", line 6, in bad_matmul\n    return y @ w\n' in text
    assert 'File "<graphjit:bad_matmul:' in text                 # the generated frame, below it
    assert "graphjit: raised by generated code <graphjit:bad_matmul:" in text  # and the line, as a note
    frames = traceback.extract_tb(error.__traceback__)
    user_frames = [f for f in frames if f.filename == user.__file__]
    assert [f.lineno for f in user_frames] == [6]


def test_index_error_keeps_type_and_message(user):
    jitted = ms.jit(user.bad_index)
    x = np.ones(3)
    expected = eager_error(user.bad_index, x)
    with pytest.raises(IndexError) as info:
        jitted(x)
    assert str(info.value) == str(expected)
    assert traceback.extract_tb(info.value.__traceback__)[-2].lineno == 11


def test_error_inside_an_inlined_cell_points_at_the_layer():
    dense = nn.Dense(3, 2)
    jitted = ms.jit(dense)
    with pytest.raises(ValueError) as info:
        jitted(np.ones((4, 5), np.float32))
    frames = traceback.extract_tb(info.value.__traceback__)
    mine = [f for f in frames if f.filename.endswith("layers.py")]
    assert mine and mine[0].name == "construct" and "x @ self.weight.T" in mine[0].line


def test_errors_from_the_interpreter_keep_their_note(user):
    jitted = ms.jit(user.bad_matmul, exec_mode="no_sink")
    with pytest.raises(ValueError) as info:
        jitted(np.ones((2, 3)), np.ones((4, 5)))
    assert any("errmod.py" in note for note in getattr(info.value, "__notes__", []))
