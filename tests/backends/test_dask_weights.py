"""NumPy weights, globals and arguments in code compiled for Dask arrays (backends/xp_origin.py): what
they compute alone stays NumPy, as in eager code (the Dask input meets them at an operation with it),
nothing computes during the call, and a write of a Dask value into a NumPy array (a hidden
`.compute()` in eager code) is refused at compile time at the user's line."""

import re
import warnings

import dask
import dask.array as da
import numpy as np
import pytest

import graphjit
from graphjit import nn
from graphjit.graph.diagnostics import CodegenError, GraphjitWarning
from xp_testing import assert_matches, code_of, to_dask, to_numpy

MODES = ("auto", "no_sink")
LEVELS = ("O0", "O1", "O2")


def forbid_compute(dsk, keys, **kwargs):
    """A Dask scheduler that fails: graphjit must never compute during a call."""
    raise AssertionError("graphjit computed a Dask array")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("level", LEVELS)
def test_batchnorm2d_in_eval_mode_runs_on_dask_as_eager(level, mode):
    bn = nn.BatchNorm2d(3)
    bn.moving_mean[...] = [0.5, -1.0, 2.0]
    bn.moving_variance[...] = [1.5, 0.25, 4.0]
    bn.set_train(False)
    x = np.random.default_rng(0).random((4, 3, 8, 8)).astype(np.float32)
    xd = da.from_array(x, chunks=(2, 3, 4, 4))
    eager = bn(xd)
    jitted = graphjit.jit(bn, jit_level=level, exec_mode=mode)
    with dask.config.set(scheduler=forbid_compute):
        out = jitted(xd)
    assert isinstance(out, da.Array) and out.chunks == eager.chunks
    np.testing.assert_array_equal(out.compute(scheduler="threads"), eager.compute(scheduler="threads"))


def test_the_weights_are_reshaped_by_numpy_in_the_variant():
    bn = nn.BatchNorm2d(3)
    bn.set_train(False)
    code = code_of(graphjit.jit(bn).source(to_dask(np.ones((2, 3, 4, 4), np.float32))))
    assert "self.moving_mean.reshape((3, 1, 1))" in code and "xp.reshape(self" not in code


W = np.linspace(0.5, 1.5, 6).reshape(2, 3)


@pytest.mark.parametrize("mode", MODES)
def test_numpy_globals_and_arguments_compute_as_numpy(mode):
    def f(x, b):
        w = np.reshape(W, (3, 2)) * np.float32(2.0)      # NumPy only: a NumPy array, as in eager code
        return x @ w + np.transpose(np.reshape(b, (2, 1)))
    rng = np.random.default_rng(1)
    x, b = rng.random((5, 3)), rng.random(2)
    jitted = graphjit.jit(f, exec_mode=mode)
    with dask.config.set(scheduler=forbid_compute):
        out = jitted(to_dask(x), b)
    assert isinstance(out, da.Array)
    assert_matches(to_numpy(out), f(x, b))


SWAPPED = np.arange(6.0)


def reshaped_global(x):
    return x + SWAPPED.reshape((2, 3))


@pytest.mark.parametrize("mode", MODES)
def test_a_global_swapped_between_numpy_and_dask_is_read_as_it_is_at_each_call(mode):
    """The variant writes a NumPy global's own computation as NumPy code; a Dask array put in its place
    between two calls must not run through that code (the class of the global is guarded)."""
    global SWAPPED
    jitted = graphjit.jit(reshaped_global, exec_mode=mode)
    x = to_dask(np.ones((2, 3)))
    try:
        for value in (np.arange(6.0), to_dask(np.arange(6.0) * 10), np.arange(6.0) * 3):
            SWAPPED = value
            with dask.config.set(scheduler=forbid_compute):
                out = jitted(x)
            assert isinstance(out, da.Array)
            assert_matches(to_numpy(out), to_numpy(reshaped_global(x)))
    finally:
        SWAPPED = np.arange(6.0)


def test_numpy_only_writes_stay_numpy_writes():
    state = {"acc": np.zeros(3)}

    def f(x, acc):
        acc[...] = acc * 0.5 + 1.0       # NumPy into NumPy: as in eager code
        acc += 1.0
        return x + acc
    x = np.arange(3.0)
    expected_acc = np.zeros(3)
    expected = f(x, expected_acc)
    out = graphjit.jit(f)(to_dask(x), state["acc"])
    assert_matches(to_numpy(out), expected)
    assert_matches(state["acc"], expected_acc)


@pytest.mark.parametrize("mode", MODES)
def test_batchnorm_in_training_mode_is_refused_at_the_write(mode):
    bn = nn.BatchNorm1d(16)
    bn.set_train(True)
    x = da.from_array(np.ones((8, 16), np.float32), chunks=(4, 8))
    with dask.config.set(scheduler=forbid_compute), pytest.raises(CodegenError) as info:
        graphjit.jit(bn, exec_mode=mode)(x)
    assert "writes a non-NumPy value into the NumPy array `self.moving_mean`" in info.value.message
    assert "cannot run on dask arrays" in info.value.message and "hidden .compute()" in info.value.message
    assert info.value.span.file.endswith("normalization.py")
    np.testing.assert_array_equal(bn.moving_mean, np.zeros(16))


STATE = np.zeros(4)


def _write(x):
    STATE[...] = x * 2.0


def _add(x):
    s = STATE
    s += x


def _index(x):
    return W.ravel()[x > 0.5]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn, what", [(_write, "writes a non-NumPy value into the NumPy array"),
                                      (_add, "writes a non-NumPy value into the NumPy array"),
                                      (_index, "indexes the NumPy array")])
def test_a_dask_value_into_a_numpy_array_is_refused_at_the_users_line(fn, what, mode):
    with dask.config.set(scheduler=forbid_compute), pytest.raises(CodegenError, match=re.escape(what)) as info:
        graphjit.jit(fn, exec_mode=mode)(to_dask(np.ones(4)))
    assert info.value.span.file.endswith("test_dask_weights.py")
    assert info.value.span.line in {c.co_firstlineno + k for c in [fn.__code__] for k in (1, 2, 3)}
    assert not STATE.any()


def _kernels():
    import sys
    from locations import BENCHMARKS
    sys.path.insert(0, str(BENCHMARKS))
    import kernels
    return kernels


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("name, fn, line", [("chain_loop", "exp", "math.exp(-y[i])"),
                                            ("pairwise_loop", "sqrt", "math.sqrt(s)")])
def test_a_math_function_on_dask_is_named_with_its_numpy_spelling(name, fn, line, level, mode):
    """At O2 the vectorizer guards `math.<fn>` (which raises where NumPy returns inf/nan) with a run-time
    test: the refusal names the call the user wrote, not an `if` they did not write."""
    kernel = getattr(_kernels(), name)
    x = to_dask(np.random.default_rng(0).random((6, 3)) if name == "pairwise_loop" else np.ones(6))
    args = (x,) if name == "pairwise_loop" else (2.0, x, x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GraphjitWarning)
        with dask.config.set(scheduler=forbid_compute), pytest.raises(CodegenError) as info:
            graphjit.jit(kernel, jit_level=level, exec_mode=mode)(*args)
    message = info.value.message
    assert f"`math.{fn}` cannot run on dask arrays" in message and f"write `np.{fn}`" in message
    assert "`if`" not in message.split(":")[0]
    span = info.value.span
    assert span.file.endswith("kernels.py")
    assert line in open(span.file).read().splitlines()[span.line - 1]



BUF = np.zeros(4)


@pytest.mark.parametrize("mode", MODES)
def test_numpy_functions_on_dask_values_never_compute(mode):
    def into_numpy(x):
        np.copyto(BUF, x)               # eager code would compute x into BUF
        return x

    def as_array(x):
        return np.asarray(x) + 1.0      # the namespace's asarray: stays lazy

    def numpy_only(x):
        np.copyto(BUF, BUF + 1.0)       # NumPy into NumPy: runs as in eager code
        return x + BUF
    x = to_dask(np.ones(4))
    with dask.config.set(scheduler=forbid_compute):
        with pytest.raises(CodegenError, match=re.escape("`np.copyto` cannot run on dask arrays")):
            graphjit.jit(into_numpy, exec_mode=mode)(x)
        lazy = graphjit.jit(as_array, exec_mode=mode)(x)
        BUF[...] = 0.0
        both = graphjit.jit(numpy_only, exec_mode=mode)(x)
    assert isinstance(lazy, da.Array) and isinstance(both, da.Array)
    assert_matches(to_numpy(lazy), np.full(4, 2.0))
    assert_matches(BUF, np.ones(4))
    assert_matches(to_numpy(both), np.full(4, 2.0))


class ConvNet(nn.Cell):
    """Conv2d, MaxPool2d and AvgPool2d: windows of the input (`sliding_window_view`, Dask's own on Dask
    arrays); MaxPool2d gathers by a 4-d integer index (flat on Dask)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.pool = nn.MaxPool2d(2, 2)
        self.avg = nn.AvgPool2d(2, 2)

    def construct(self, x):
        y = np.maximum(self.conv(x), 0.0)
        return self.pool(y), self.avg(y)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("level", LEVELS)
def test_conv2d_and_pooling_run_on_dask_as_on_numpy(level, mode):
    net = ConvNet()
    x = np.random.default_rng(0).random((2, 3, 8, 8)).astype(np.float32)
    jitted = graphjit.jit(net, jit_level=level, exec_mode=mode)
    with dask.config.set(scheduler=forbid_compute):
        out = jitted(da.from_array(x, chunks=(1, 3, 4, 4)))
    for got, expected in zip(out, net(x)):
        assert isinstance(got, da.Array)
        np.testing.assert_allclose(got.compute(scheduler="threads"), expected, rtol=1e-5, atol=1e-6)


def test_a_reshape_to_one_length_is_a_shape_tuple():
    def f(x):
        return x.reshape(x.size) * 2.0
    x = np.arange(6.0).reshape(2, 3)
    jitted = graphjit.jit(f)
    assert "xp.reshape(x, (6,))" in code_of(jitted.source(to_dask(x)))
    assert_matches(to_numpy(jitted(to_dask(x))), f(x))


@pytest.mark.parametrize("mode", MODES)
def test_a_gather_by_a_2d_index_is_flat_on_dask(mode):
    def f(v, idx):
        return v[idx] * 2.0
    v, idx = np.arange(10.0), np.array([[1, 2, 9], [0, 0, 5]])
    jitted = graphjit.jit(f, exec_mode=mode)
    assert "v[idx.reshape(-1)].reshape((2, 3))" in code_of(jitted.source(to_dask(v, 3), to_dask(idx, 1)))
    for index in (to_dask(idx, 1), idx):
        with dask.config.set(scheduler=forbid_compute):
            out = jitted(to_dask(v, 3), index)
        assert_matches(to_numpy(out), f(v, idx))
