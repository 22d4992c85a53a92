"""Portability: the construct corpus (tests/programs.py) and vectorized loop kernels run on
`array_api_strict` arrays, which have nothing but the array API standard, and give NumPy's results,
at every level, through the emitted code and the interpreter; the generated code calls the standard
namespace only (no `np.`), and every name the op table's backend column claims is standard exists there."""

import copy
import re

import array_api_strict
import numpy as np
import pytest

import graphjit
from graphjit.graph.backend_ops import SPELLINGS
from graphjit.graph.diagnostics import CodegenError
from programs import CASES
from xp_testing import assert_matches, code_of, loop_kernel_inputs, to_numpy, to_strict

# The corpus programs that cannot run on array_api_strict, and the error that says why.
REFUSED = {
    "numpy_calls": (CodegenError, "`np.linalg.norm` cannot run on array_api_strict arrays"),
    "tensor_call": (CodegenError, "cannot run on array_api_strict arrays: graphjit.Tensor is a NumPy array"),
    # NumPy arrays read from a global, a closure, a Cell meet strict arrays: the standard mixes no libraries
    "globals_and_closure": (TypeError, "Expected Array or Python scalar"),
    "use_closure": (TypeError, "Expected Array or Python scalar"),
    "cell_call": (TypeError, "Expected Array or Python scalar"),
}


def _run(fn, args, level, mode):
    jitted = graphjit.jit(fn, jit_level=level, exec_mode=mode)
    return jitted, jitted(*[to_strict(a) for a in args])


@pytest.mark.parametrize("mode", ["auto", "no_sink"])
@pytest.mark.parametrize("level", ["O0", "O1", "O2"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_corpus_on_array_api_strict(name, level, mode):
    fn, make = CASES[name]
    args = make(np.random.default_rng(0))
    expected = fn(*copy.deepcopy(args))
    if name in REFUSED:
        error, text = REFUSED[name]
        with pytest.raises(error, match=re.escape(text)):
            _run(fn, args, level, mode)
        return
    _, actual = _run(fn, args, level, mode)
    assert_matches(to_numpy(actual), expected)


@pytest.mark.parametrize("name", sorted(set(CASES) - set(REFUSED)))
def test_generated_code_calls_only_the_namespace(name):
    fn, make = CASES[name]
    args = [to_strict(a) for a in make(np.random.default_rng(0))]
    source = graphjit.jit(fn, jit_level="O2").source(*args)
    assert source.startswith("import array_api_strict as xp\n")
    code = code_of(source)
    assert not re.search(r"\bnp\.(?!ndarray|generic|floating|integer|number|bool_)", code), source
    for used in set(re.findall(r"\bxp\.(\w+)", code)):
        assert hasattr(array_api_strict, used), f"xp.{used} is not in the standard"


def test_the_standard_spellings_exist_in_the_standard():
    claimed = {s.name for s in SPELLINGS.values() if s.name and s.standard}
    missing = sorted(name for name in claimed if not hasattr(array_api_strict, name))
    assert not missing, f"the op table calls these standard, array_api_strict lacks them: {missing}"


# Loop kernels of tests/vector_programs.py that O2 turns into whole-array code, on strict arrays.
KERNELS = loop_kernel_inputs(7)


@pytest.mark.parametrize("mode", ["auto", "no_sink"])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_vectorized_kernels_on_array_api_strict(name, mode):
    import vector_programs
    fn = getattr(vector_programs, name)
    args = KERNELS[name](np.random.default_rng(3))
    expected = fn(*copy.deepcopy(args))
    jitted, actual = _run(fn, args, "O2", mode)
    assert "for " not in code_of(jitted.source(*[to_strict(a) for a in args]))   # whole-array code, no loop
    assert_matches(to_numpy(actual), expected)


def test_numpy_promotion_across_kinds_is_written_with_astype():
    def f(x, k):
        return x * k + (k > 1)
    x, k = np.linspace(0, 1, 4), np.arange(4)
    jitted = graphjit.jit(f)
    assert "xp.astype(k, xp.float64)" in jitted.source(to_strict(x), to_strict(k))
    assert_matches(to_numpy(jitted(to_strict(x), to_strict(k))), f(x, k))


def test_gradients_on_array_api_strict():
    def loss(w, x):
        return (np.tanh(x @ w) ** 2).mean()
    w, x = np.linspace(0.1, 0.3, 3), np.random.default_rng(0).random((4, 3))
    g = graphjit.grad(loss)(to_strict(w), to_strict(x))
    h = 1e-6
    numeric = [(loss(w + h * e, x) - loss(w - h * e, x)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(to_numpy(g), numeric, rtol=1e-6)


def test_new_arrays_go_on_the_inputs_device_with_numpys_dtype():
    def f(x):
        return x + np.zeros(x.shape) + np.arange(3)
    device = array_api_strict.Device("device1")
    x = array_api_strict.asarray(np.ones(3), device=device)
    for mode in ("auto", "no_sink"):
        jitted = graphjit.jit(f, exec_mode=mode)
        out = jitted(x)
        assert out.device == device
        assert_matches(to_numpy(out), f(np.ones(3)))
    source = graphjit.jit(f).source(x)
    assert "xp.zeros((3,), dtype=xp.float64, device=x.device)" in source
    assert "xp.arange(3, dtype=xp.int64, device=x.device)" in source
