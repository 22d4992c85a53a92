"""The tutorial's four usages: GRAPH results equal PYNATIVE results with the same seed."""

import importlib.util
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import graphjit as ms

SAMPLES = pathlib.Path(__file__).parent.parent / "samples"
X = np.ones([64, 1, 28, 28], dtype=np.float32)


def load(name):
    spec = importlib.util.spec_from_file_location(f"sample_{name}", SAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def eager_network_output(module, seed=0):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_seed(seed)
    return module.Network().construct(X) if not hasattr(module.Network.construct, "__graphjit_fn__") \
        else module.Network.construct.__graphjit_fn__(module.Network(), X)


def test_jit_function():
    m = load("jit_function")
    ms.set_seed(0)
    graph_out = m.run(X)             # builds Network once, at compile time
    ms.set_seed(0)
    eager_out = m.run.__wrapped__(X)  # the plain function builds it now
    np.testing.assert_allclose(graph_out, eager_out, rtol=1e-6)
    assert graph_out.shape == (64, 10) and graph_out.dtype == np.float32
    assert m.run.cache_info()["compiles"] == 1
    np.testing.assert_allclose(m.run(X), graph_out)  # later calls reuse the compiled network


def test_jit_transform():
    m = load("jit_transform")
    ms.set_seed(0)
    graph_out = m.run_with_jit(X)
    ms.set_seed(0)
    eager_out = m.run(X)
    np.testing.assert_allclose(graph_out, eager_out, rtol=1e-6)


def test_jit_construct():
    m = load("jit_construct")
    ms.set_seed(0)
    model = m.Network()
    graph_out = model(X)
    eager_out = m.Network.construct.__wrapped__(model, X)
    np.testing.assert_allclose(graph_out, eager_out, rtol=1e-6)
    assert "def construct(self, x)" in model.construct.source(X)


@pytest.mark.parametrize("level", ["O0", "O1", "O2"])
def test_graph_mode(level):
    m = load("graph_mode")
    ms.set_seed(0)
    model = m.Network()
    ms.set_context(mode=ms.PYNATIVE_MODE)
    eager_out = model(X)
    ms.set_context(mode=ms.GRAPH_MODE, jit_config=ms.JitConfig(jit_level=level))
    try:
        graph_out = model(X)
        again = model(X)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE, jit_config=ms.JitConfig())
    np.testing.assert_allclose(graph_out, eager_out, rtol=1e-6)
    np.testing.assert_array_equal(graph_out, again)


def test_weights_are_read_at_call_time():
    m = load("graph_mode")
    model = m.Network()
    jitted = ms.jit(model)
    before = jitted(X)
    model.dense_relu_sequential[4].bias += 1.0          # in place
    np.testing.assert_allclose(jitted(X), before + 1.0, rtol=1e-6)
    model.dense_relu_sequential[4].bias = np.zeros(10, np.float32)  # reassigned
    np.testing.assert_allclose(jitted(X), model.construct(X), rtol=1e-6)
    assert jitted.cache_info()["compiles"] == 1


@pytest.mark.parametrize("name", ["network", "jit_function", "jit_transform", "jit_construct", "graph_mode"])
def test_sample_runs_as_script(name):
    out = subprocess.run([sys.executable, str(SAMPLES / f"{name}.py")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("[[")
