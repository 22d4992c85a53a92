"""`graphjit transpile`: reads files without running them; the printed module runs and matches eager."""

import importlib.util
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

import graphjit as ms
from graphjit.cli import main

from locations import SAMPLES

X = np.ones([64, 1, 28, 28], dtype=np.float32)


def transpile(*args):
    result = CliRunner().invoke(main, ["transpile", *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


def import_generated(text, tmp_path, name="generated"):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_sample(name):
    spec = importlib.util.spec_from_file_location(f"s_{name}", SAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["network", "jit_construct", "graph_mode"])
def test_cell_module_runs_and_matches(name, tmp_path):
    code, out, err = transpile(SAMPLES / f"{name}.py")
    assert code == 0, err
    generated = import_generated(out, tmp_path)
    sample = load_sample(name)
    model = sample.Network()
    construct = getattr(sample.Network.construct, "__graphjit_fn__", sample.Network.construct)
    np.testing.assert_allclose(generated.Network_construct(model, X), construct(model, X), rtol=1e-6)


@pytest.mark.parametrize("name,fn", [("jit_function", "run"), ("jit_transform", "run_with_jit")])
def test_function_module_runs_and_matches(name, fn, tmp_path):
    code, out, err = transpile(SAMPLES / f"{name}.py")
    assert code == 0, err
    ms.set_seed(0)
    generated = import_generated(out, tmp_path)   # builds its Network once, as the graph does
    sample = load_sample(name)
    ms.set_seed(0)
    eager = getattr(sample.run, "__wrapped__", sample.run)(X)
    np.testing.assert_allclose(getattr(generated, fn)(X), eager, rtol=1e-6)


def test_does_not_run_the_file(tmp_path):
    path = tmp_path / "side_effect.py"
    marker = tmp_path / "ran"
    path.write_text(f"""
import numpy as np
import graphjit as ms
open({str(marker)!r}, "w").write("ran")

@ms.jit
def f(x):
    return np.exp(x) + 1
""")
    code, out, err = transpile(path)
    assert code == 0, err
    assert not marker.exists()
    assert "def f(x):" in out and "np.exp(x) + 1" in out


def test_input_specializes(tmp_path):
    code, out, _ = transpile(SAMPLES / "network.py", "--input", "x=f32[64,1,28,28]")
    assert code == 0
    assert "x.reshape((64, -1))" in out
    code, generic, _ = transpile(SAMPLES / "network.py")
    assert "x.reshape(x.shape[:1] + (-1,))" in generic


def test_emit_graph_and_output_file(tmp_path):
    target = tmp_path / "out.txt"
    result = CliRunner().invoke(main, ["transpile", str(SAMPLES / "network.py"), "--emit", "graph",
                                       "--input", "x=f32[64,1,28,28]", "-o", str(target)])
    assert result.exit_code == 0
    text = target.read_text()
    assert text.startswith("graph Network_construct(%self: object, %x: f32[64,1,28,28]) -> f32[64,10]")
    from graphjit.graph import parse
    assert str(parse(text)) == text


@pytest.mark.parametrize("setup,expected", [
    (None, "no such file"),
    ("", "the file is empty"),
    ("def f(:\n", "syntax error"),
    ("import numpy as np\nx = 1\n", "nothing to transpile"),
])
def test_bad_input_one_line_nonzero(tmp_path, setup, expected):
    path = tmp_path / "input.py"
    if setup is not None:
        path.write_text(setup)
    proc = subprocess.run([sys.executable, "-m", "graphjit", "transpile", str(path)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode != 0
    assert expected in proc.stderr.lower()
    assert "Traceback" not in proc.stderr
    first = proc.stderr.strip().splitlines()[0]
    assert "input.py" in first


def test_unresolvable_names_get_a_diagnostic(tmp_path):
    path = tmp_path / "model.py"
    path.write_text("""
import numpy as np
import graphjit as ms
from somewhere import make_weights

W = make_weights()

@ms.jit
def f(x):
    return x @ W
""")
    code, out, err = transpile(path, "--level", "strict")
    assert code == 1
    assert "cannot know `W` without running the module: it comes from a call to make_weights" in err
    assert "model.py:6" in err
    assert "Traceback" not in err
    code, out, err = transpile(path)  # LAX: the statement reads W at run time, as a fallback block
    assert code == 0 and "warning[" in err and "def f(x):" in out


def test_console_script_and_module_entry():
    proc = subprocess.run([sys.executable, "-m", "graphjit", "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "transpile" in proc.stdout
