"""Jitted functions on Dask arrays, run by a real `dask.distributed.LocalCluster` (two worker processes).

What graphjit promises for Dask arrays (issue #15, docs/array-api.md): a jitted function called on Dask
arrays returns Dask arrays, built lazily exactly as the eager call builds them; graphjit never computes
anything itself. The test then computes the result on the cluster's workers and compares it with the
same function run eagerly on the NumPy arrays the Dask arrays were made from.

Covered: whole-array elementwise chains (O0/O1/O2), reductions, loop-style kernels that O2 vectorizes
(the loops of benchmarks/kernels.py and tests/vector_programs.py), and the seed Network's forward pass.

Laziness is checked strictly: during the jitted call, dask's scheduler is replaced by one that fails
the test, so any `.compute()`, `bool(...)`, `int(...)` or `float(...)` of a Dask array inside the
call (an `if` on an array value, a `.tolist()`, NumPy pulling the array onto the client) is caught.
The computation afterwards runs on the workers (a task stream shows it).

One cluster for the module: starting two worker processes costs seconds on a loaded machine.
"""

import importlib.util
import math
import sys

import dask
import dask.array as da
import numpy as np
import pytest
from dask.distributed import Client, LocalCluster, get_task_stream

import graphjit as ms
import vector_programs as V
from locations import BENCHMARKS, SAMPLES

RTOL = 1e-12
LEVELS = ("O0", "O1", "O2")


def _load(path, name):
    """A module by file path (benchmarks/ and samples/ are not packages)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


K = _load(BENCHMARKS / "kernels.py", "graphjit_dask_test_kernels")

# one worker of pytest-xdist runs the whole module, so the cluster starts once (pyproject: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("dask_cluster")


@pytest.fixture(scope="module")
def client():
    """Two single-threaded worker processes and a client that is every compute's default scheduler."""
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None,
                      memory_limit="1GiB") as cluster, Client(cluster) as c:
        yield c


def _no_compute(*args, **kwargs):
    raise AssertionError("the jitted call computed a Dask array; graphjit must leave results lazy")


def jit_o(fn, level):
    return ms.jit(fn, jit_config=ms.JitConfig(jit_level=level))


def call_lazily(jitted, *args):
    """Call `jitted` with every compute forbidden; every array it returns must be a Dask array."""
    with dask.config.set(scheduler=_no_compute):
        result = jitted(*args)
    for leaf in _leaves(result):
        if isinstance(leaf, (np.ndarray, np.generic)):
            raise AssertionError(f"the jitted call returned a NumPy value {leaf!r}, not a lazy Dask array")
    return result


def _leaves(value):
    return [leaf for item in value for leaf in _leaves(item)] if isinstance(value, (tuple, list)) else [value]


def compute_on_cluster(client, result):
    """Compute `result` (a Dask array or a tuple of them) on the workers; check that they ran tasks."""
    with get_task_stream(client) as stream:
        (values,) = dask.compute(result)
    assert stream.data, "no task ran on the cluster's workers"
    workers = {task["worker"] for task in stream.data}
    assert workers <= set(client.scheduler_info()["workers"])
    return values


def assert_same(got, want, rtol=RTOL):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w, rtol)
        return
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-12)


def dask_of(*arrays, chunks):
    return tuple(da.from_array(a, chunks=chunks) for a in arrays)


# --- whole-array code -------------------------------------------------------------------------
def chain(x, y):
    t = np.tanh(x) * 2.0 + np.exp(-y) * np.abs(x - y)
    u = np.where(t > 1.0, np.sqrt(np.abs(t)), t * t)
    return np.maximum(u - 0.5, 0.0) / (1.0 + y * y)


def reductions(x, y):
    return (x.sum(), (x * y).sum(axis=0), x.max(axis=1), np.sqrt((x * x).mean()), np.abs(x - y).min())


def matrix_chain(a, w, b):
    h = np.maximum(a @ w + b, 0.0)
    return (h * h).sum(axis=1)


@pytest.mark.parametrize("level", LEVELS)
def test_elementwise_chain(client, level, rng):
    x, y = rng.standard_normal(1000), rng.standard_normal(1000)
    dx, dy = dask_of(x, y, chunks=250)
    result = call_lazily(jit_o(chain, level), dx, dy)
    assert result.chunks == dx.chunks
    assert_same(compute_on_cluster(client, result), chain(x, y))


@pytest.mark.parametrize("level", LEVELS)
def test_reductions(client, level, rng):
    x, y = rng.standard_normal((60, 40)), rng.standard_normal((60, 40))
    dx, dy = dask_of(x, y, chunks=(20, 40))
    result = call_lazily(jit_o(reductions, level), dx, dy)
    assert isinstance(result, tuple) and len(result) == 5
    assert_same(compute_on_cluster(client, result), reductions(x, y))


def test_matrix_product_with_numpy_weights(client, rng):
    a = rng.standard_normal((64, 16))
    w, b = rng.standard_normal((16, 8)), rng.standard_normal(8)
    (da_,) = dask_of(a, chunks=(16, 16))
    result = call_lazily(jit_o(matrix_chain, "O2"), da_, w, b)
    assert_same(compute_on_cluster(client, result), matrix_chain(a, w, b))


# --- loops that O2 turns into whole-array code ------------------------------------------------
def _vec(n, rng):
    return (rng.standard_normal(n),)


LOOPS = {
    # name: (loop function, make_args(rng) -> NumPy args); array args are cut in two along every axis
    "conditional": (K.cond_loop, lambda r: _vec(1000, r)),
    "elem_chain": (V.elem_chain, lambda r: _vec(1000, r) + _vec(1000, r)),
    "dot": (V.dot, lambda r: _vec(1000, r) + _vec(1000, r)),
    "prefix": (V.prefix, lambda r: _vec(1000, r)),
    "ifelse_writes": (V.ifelse_writes, lambda r: _vec(1000, r)),
    "column_sums": (V.column_sums, lambda r: (r.standard_normal((100, 30)),)),
    "matvec": (V.matvec, lambda r: (r.standard_normal((60, 20)), r.standard_normal(20))),
    "jacobi2d": (V.jacobi2d, lambda r: (r.standard_normal((40, 30)),)),
}


def code_lines(source):
    return [line.strip() for line in source.splitlines() if line.strip() and not line.strip().startswith("#")]


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_vectorized_loop_kernel(client, name, rng):
    fn, make_args = LOOPS[name]
    args = make_args(rng)
    want = fn(*args)
    dargs = tuple(da.from_array(a, chunks=tuple((s + 1) // 2 for s in a.shape)) if isinstance(a, np.ndarray)
                  else a for a in args)
    jitted = jit_o(fn, "O2")
    result = call_lazily(jitted, *dargs)
    loops = [line for line in code_lines(jitted.source(*dargs)) if line.startswith(("for ", "while "))]
    assert not loops, f"O2 left a loop in {name}: on Dask arrays that is one task per element: {loops}"
    assert_same(compute_on_cluster(client, result), want, rtol=1e-9)


def test_refusal_computes_nothing(rng):
    """A loop graphjit cannot run lazily (math.exp raises where exp returns inf: the vectorized code tests
    the arguments first, an `if` on array values) is refused with graphjit's error, before any compute."""
    x, y = dask_of(rng.standard_normal(100), rng.standard_normal(100), chunks=50)
    with pytest.raises(ms.GraphjitError, match="dask"):
        call_lazily(jit_o(K.chain_loop, "O2"), 1.5, x, y)


def test_eager_loop_on_dask_is_what_compiling_avoids(rng):
    """The reason to compile: the same loop run eagerly on a Dask array builds one task per element."""
    x = rng.standard_normal(40)
    (dx,) = dask_of(x, chunks=10)
    with dask.config.set(scheduler="sync"):
        eager = K.cond_loop(dx)                  # each `if x[i] > 1.0` computes one element
    compiled = call_lazily(jit_o(K.cond_loop, "O2"), dx)
    assert len(compiled.dask) < len(eager.dask) / 4
    with dask.config.set(scheduler="sync"):
        assert_same(compiled.compute(), eager.compute())


# --- the seed Network -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def network():
    net = _load(SAMPLES / "network.py", "graphjit_dask_test_network")
    return net.Network()


def test_seed_network_forward(client, network, rng):
    x = rng.standard_normal((32, 1, 28, 28)).astype(np.float32)
    want = network(x)
    (dx,) = dask_of(x, chunks=(8, 1, 28, 28))
    result = call_lazily(ms.jit(network), dx)
    assert result.shape == (32, 10) and result.dtype == np.float32
    assert result.chunks[0] == (8, 8, 8, 8)
    got = compute_on_cluster(client, result)
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-4, atol=1e-5)


def test_seed_network_in_graph_mode(client, network, rng):
    x = rng.standard_normal((16, 1, 28, 28)).astype(np.float32)
    want = network(x)
    (dx,) = dask_of(x, chunks=(8, 1, 28, 28))
    ms.set_context(mode=ms.GRAPH_MODE)
    result = call_lazily(network, dx)
    np.testing.assert_allclose(compute_on_cluster(client, result), np.asarray(want), rtol=1e-4, atol=1e-5)


def test_numpy_inputs_still_get_numpy_results(client, rng):
    """A function that ran on Dask arrays still returns NumPy arrays for NumPy inputs (a variant each)."""
    x, y = rng.standard_normal(100), rng.standard_normal(100)
    jitted = jit_o(chain, "O2")
    lazy = call_lazily(jitted, *dask_of(x, y, chunks=50))
    eager = jitted(x, y)
    assert isinstance(eager, np.ndarray)
    assert_same(eager, chain(x, y))
    assert_same(compute_on_cluster(client, lazy), eager)
    assert math.isfinite(float(eager.sum()))


def test_nn_layers_and_loss(client, rng):
    """Dense, LayerNorm, activations and a loss from graphjit.nn, inlined into one graph, on Dask inputs."""
    from graphjit import nn
    body = nn.SequentialCell(nn.Dense(16, 8), nn.LayerNorm((8,)), nn.GELU(), nn.Dense(8, 4), nn.Tanh())
    loss = nn.CrossEntropyLoss()

    def forward(x, labels):
        logits = body(x)
        return nn.LogSoftmax()(logits), loss(logits, labels)

    x = rng.standard_normal((40, 16)).astype(np.float32)
    labels = rng.integers(0, 4, 40).astype(np.int32)
    want = forward(x, labels)
    dx, dlabels = da.from_array(x, chunks=(10, 16)), da.from_array(labels, chunks=10)
    result = call_lazily(ms.jit(forward), dx, dlabels)
    got = compute_on_cluster(client, result)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-4, atol=1e-5)
