"""Dask arrays on the default (threaded) scheduler, no cluster: the construct corpus and loop kernels
give NumPy's results at O0/O1/O2 through the emitted code and the interpreter, results stay lazy
(graphjit computes nothing), and what would compute a lazy array or differ from NumPy is diagnosed
at the user's line. (A real cluster: tests/backends/test_dask_cluster.py.)"""

import copy
import re
import warnings

import dask
import dask.array as da
import numpy as np
import pytest

import graphjit
from graphjit.graph.diagnostics import CodegenError, GraphjitWarning
from programs import CASES
from xp_testing import assert_matches, code_of, loop_kernel_inputs, to_dask, to_numpy

_BRANCH = "cannot run on dask arrays: a run-time `if`/`while` on an array value would compute the lazy array"
# The corpus programs Dask cannot run as compiled code, and the error that says why.
REFUSED = {
    "runtime_if": _BRANCH, "returning_if": _BRANCH, "ternary": _BRANCH, "while_loop": _BRANCH,
    "numpy_calls": "`np.linalg.norm` cannot run on dask arrays",
    "tensor_call": "cannot run on dask arrays: graphjit.Tensor is a NumPy array",
}


class CountingScheduler:
    """A Dask scheduler that counts how often it is asked to compute (graphjit must never ask)."""

    def __init__(self):
        self.calls = 0

    def __call__(self, dsk, keys, **kwargs):
        self.calls += 1
        return dask.get(dsk, keys, **kwargs)


@pytest.mark.parametrize("mode", ["auto", "no_sink"])
@pytest.mark.parametrize("level", ["O0", "O1", "O2"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_corpus_on_dask(name, level, mode):
    fn, make = CASES[name]
    args = make(np.random.default_rng(0))
    expected = fn(*copy.deepcopy(args))
    jitted = graphjit.jit(fn, jit_level=level, exec_mode=mode)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GraphjitWarning)   # the loops that stay loops (tested below)
        if name in REFUSED:
            with pytest.raises(CodegenError, match=re.escape(REFUSED[name])):
                jitted(*[to_dask(a) for a in args])
            return
        scheduler = CountingScheduler()
        with dask.config.set(scheduler=scheduler):
            actual = jitted(*[to_dask(a) for a in args])
        assert scheduler.calls == 0, "graphjit computed a Dask array"
    assert_matches(to_numpy(actual), expected)


# Loop kernels of tests/vector_programs.py that O2 turns into whole-array Dask code.
KERNELS = loop_kernel_inputs(9)
KERNELS["tri_lower_store"] = lambda g: (g.random((5, 5)), g.random((5, 5)))   # alias guard: `out is a` on Dask


@pytest.mark.parametrize("mode", ["auto", "no_sink"])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_vectorized_kernels_on_dask(name, mode):
    import vector_programs
    fn = getattr(vector_programs, name)
    args = KERNELS[name](np.random.default_rng(3))
    expected = fn(*copy.deepcopy(args))
    jitted = graphjit.jit(fn, jit_level="O2", exec_mode=mode)
    actual = jitted(*[to_dask(a, 3) for a in args])
    assert isinstance(actual, da.Array)
    assert_matches(to_numpy(actual), expected)


def test_the_result_is_lazy_and_keeps_dasks_chunks():
    @graphjit.jit
    def f(x, y):
        return np.tanh(x) * 2.0 + y.sum(axis=0)
    x = da.from_array(np.random.default_rng(0).random((8, 6)), chunks=(4, 3))
    out = f(x, x)
    eager = np.tanh(x) * 2.0 + x.sum(axis=0)
    assert isinstance(out, da.Array) and out.chunks == eager.chunks
    np.testing.assert_allclose(out.compute(), eager.compute())


def test_a_runtime_branch_on_an_array_value_names_the_line():
    def f(x):
        if x.sum() > 0:     # line of the `if`
            return x * 2
        return -x
    line = f.__code__.co_firstlineno + 1
    with pytest.raises(CodegenError) as info:
        graphjit.jit(f)(to_dask(np.ones(4)))
    assert _BRANCH in info.value.message
    assert info.value.span.line == line and info.value.span.file.endswith("test_dask_backend.py")


def test_a_python_value_of_a_lazy_array_is_diagnosed():
    def f(x):
        return x * float(x.max())
    with pytest.raises(CodegenError, match=re.escape("`float` cannot run on dask arrays: it turns a lazy array "
                                                     "into a Python value")):
        graphjit.jit(f)(to_dask(np.ones(4)))


def test_a_loop_that_stays_a_loop_warns_at_its_line():
    import programs
    x = to_dask(np.random.default_rng(0).random((4, 3)))
    with pytest.warns(GraphjitWarning, match="this loop stays a Python loop over dask arrays, one task per iteration"):
        out = graphjit.jit(programs.for_range_runtime, jit_level="O1")(x)
    assert_matches(to_numpy(out), programs.for_range_runtime(x.compute()))
    with warnings.catch_warnings():
        warnings.simplefilter("error", GraphjitWarning)   # at O2 the loop is whole-array code
        graphjit.jit(programs.for_range_runtime, jit_level="O2")(x)


def test_a_write_into_a_view_is_diagnosed_on_dask():
    def f(x):
        y = x.copy()
        row = y[0]
        row[1] = 5.0        # NumPy writes y; a Dask array has no views
        return y
    with pytest.raises(CodegenError, match="dask arrays have no views"):
        graphjit.jit(f)(to_dask(np.zeros((2, 3))))


def test_an_augmented_assignment_updates_every_name_of_the_array():
    def f(x):
        y = x * 1.0
        z = y
        z += 1.0            # NumPy: y changes too
        x += 2.0            # NumPy: the caller's array changes
        return y
    a = np.arange(4.0)
    expected_arg = a.copy()
    expected = f(expected_arg)
    jitted = graphjit.jit(f)
    assert "y[...] = y + 1.0" in code_of(jitted.source(to_dask(a)))
    d = to_dask(a)
    assert_matches(to_numpy(jitted(d)), expected)
    assert_matches(d.compute(), expected_arg)


def test_a_masked_value_of_unknown_size_is_diagnosed():
    def f(x, y):
        out = x.copy()
        m = y > 0.5
        out[m] = y[m]
        return out
    with pytest.raises(CodegenError, match=re.escape("write `a = np.where(m, b, a)`")):
        graphjit.jit(f)(to_dask(np.zeros(4)), to_dask(np.ones(4)))


def test_numpy_arguments_mixed_with_dask_become_dask_as_in_eager_code():
    def f(x, w):
        return np.maximum(x @ w, 0.0).sum(axis=1)
    rng = np.random.default_rng(0)
    x, w = rng.random((6, 4)), rng.random((4, 3))
    out = graphjit.jit(f)(to_dask(x), w)
    assert isinstance(out, da.Array)
    assert_matches(to_numpy(out), f(x, w))


def test_unknown_dimensions_are_dynamic():
    def f(x):
        return (x * 2.0).sum(), x.shape[0] + 0.0
    d = to_dask(np.arange(10.0))
    picked = d[d > 4.5]                 # Dask does not know its length
    assert np.isnan(picked.shape[0])
    jitted = graphjit.jit(f)
    assert "x.shape[0]" in jitted.source(picked)     # `?` to the analysis: read at run time
    total, n = jitted(picked)
    np.testing.assert_allclose(to_numpy(total), (np.arange(5.0, 10.0) * 2.0).sum())
    assert np.isnan(n)                  # as in eager Dask code: the dimension itself is unknown


def test_arrays_of_two_libraries_are_one_clear_error():
    import array_api_strict
    @graphjit.jit
    def f(x, y):
        return x + y
    with pytest.raises(TypeError, match="the array arguments belong to different libraries"):
        f(to_dask(np.ones(3)), array_api_strict.ones(3))


def test_arrays_inside_a_tuple_argument_are_run_time_values():
    def pair(xy):
        x, y = xy
        return np.sin(x) + y.sum(axis=0)
    rng = np.random.default_rng(0)
    a, b = rng.random((3, 2)), rng.random((3, 2))
    jitted = graphjit.jit(pair)
    assert "xp.sin(xy0)" in code_of(jitted.source((to_dask(a), to_dask(b))))
    assert_matches(to_numpy(jitted((to_dask(a), to_dask(b)))), pair((a, b)))
    assert_matches(to_numpy(jitted((to_dask(b), to_dask(a)))), pair((b, a)))   # nothing baked in


GLOBAL = da.from_array(np.arange(4.0), chunks=2)


def test_a_dask_array_read_from_a_global_is_read_at_each_call():
    def f(x):
        return np.sin(GLOBAL) + x
    jitted = graphjit.jit(f)
    x = to_dask(np.ones(4))
    assert "xp.sin(_g['GLOBAL'])" in code_of(jitted.source(x))
    assert_matches(to_numpy(jitted(x)), np.sin(np.arange(4.0)) + 1)
    GLOBAL[...] = GLOBAL * 0.0          # written in place: the next call sees it
    assert_matches(to_numpy(jitted(x)), np.ones(4))


def test_gradients_of_dask_inputs_stay_lazy():
    def loss(w, x):
        return ((x @ w) ** 2).sum()
    w, x = np.linspace(0.1, 0.3, 3), np.random.default_rng(0).random((4, 3))
    g = graphjit.grad(loss)(to_dask(w), to_dask(x))
    assert isinstance(g, da.Array)
    np.testing.assert_allclose(g.compute(), 2 * x.T @ (x @ w), rtol=1e-12)
