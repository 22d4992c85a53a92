"""Random affine loop nests: O2 (vectorized where legal) must compute what eager Python computes.

Hypothesis writes small kernels as Python source: one or two nested `range` loops with random
bounds, steps and index offsets; statements that write `out` or the input `a` itself at shifted
indices (so some loops carry dependences), accumulate into a scalar (`+=`, `max`), or write under
a per-element `if`; expressions over `a`, `b`, `out`, the indices and constants. Each kernel
runs eagerly and compiled at O2; results and the mutated arrays must agree (rtol 1e-12, see the
tolerance note in tests/graph/passes/test_vectorize.py), or both must raise the same exception type.
"""

import copy
import itertools
import linecache
import os
import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphjit

_counter = itertools.count()
OFFSETS = [-2, -1, 0, 1, 2]


@st.composite
def offset(draw, var, used):
    """An index offset for `var`, remembered so that the loop bounds keep every index valid."""
    k = draw(st.sampled_from(OFFSETS))
    used.setdefault(var, []).append(k)
    return k


@st.composite
def expressions(draw, index_vars, used, depth=0):
    """An expression over a, b, out at shifted indices, the loop indices and constants."""
    leaves = ["array", "array", "array", "const", "index"]
    kind = draw(st.sampled_from(leaves if depth >= 2 else leaves + ["binop", "binop", "call"]))
    if kind == "array":
        name = draw(st.sampled_from(["a", "b", "out"]))
        parts = [f"{v} + {draw(offset(v, used))}" for v in index_vars]
        return f"{name}[{', '.join(parts)}]"
    if kind == "const":
        return repr(draw(st.sampled_from([0.5, 2.0, -1.0, 3])))
    if kind == "index":
        return draw(st.sampled_from(index_vars))
    if kind == "call":
        fn = draw(st.sampled_from(["abs", "math.tanh", "np.sin", "np.sqrt", "np.log", "math.log", "math.sqrt",
                                   "math.exp"]))   # math.* raise outside their domain
        return f"{fn}({draw(expressions(index_vars, used, depth + 1))})"
    op = draw(st.sampled_from(["+", "-", "*", "/", "max", "min"]))
    left, right = draw(expressions(index_vars, used, depth + 1)), draw(expressions(index_vars, used, depth + 1))
    if op in ("max", "min"):
        return f"{op}({left}, {right})"
    return f"({left} {op} {right})"


@st.composite
def statements(draw, index_vars, indent, used):
    kind = draw(st.sampled_from(["write", "write", "write_input", "accumulate", "maximum", "branch", "argbest",
                                 "scan", "select"]))
    target_index = ", ".join(f"{v} + {draw(offset(v, used))}" for v in index_vars)
    value = draw(expressions(index_vars, used))
    if kind == "write":
        return [f"{indent}out[{target_index}] = {value}"]
    if kind == "write_input":
        return [f"{indent}a[{target_index}] = {value}"]
    if kind == "accumulate":
        return [f"{indent}s += {value}"]
    if kind == "maximum":
        return [f"{indent}s = max(s, {value})"]
    if kind == "scan":      # a running sum whose value the loop stores (before or after adding)
        if draw(st.booleans()):
            return [f"{indent}s += {value}", f"{indent}out[{target_index}] = s"]
        return [f"{indent}out[{target_index}] = s", f"{indent}s += {value}"]
    if kind == "argbest":   # a running maximum (minimum) and where it was found
        rel = draw(st.sampled_from([">", "<"]))
        return [f"{indent}if {value} {rel} s:", f"{indent}    s = {value}", f"{indent}    k = {index_vars[-1]}"]
    cond = draw(expressions(index_vars, used))
    if kind == "select":    # a value chosen per element, used after the `if`
        other = draw(expressions(index_vars, used))
        return [f"{indent}if {cond} > 0.5:", f"{indent}    y = {value}", f"{indent}else:", f"{indent}    y = {other}",
                f"{indent}out[{target_index}] = y * 2.0"]
    lines = [f"{indent}if {cond} > 0.5:", f"{indent}    out[{target_index}] = {value}"]
    if draw(st.booleans()):
        lines += [f"{indent}else:", f"{indent}    out[{target_index}] = {draw(expressions(index_vars, used))}"]
    return lines


@st.composite
def kernels(draw):
    """(source, shape of the arrays). Every index stays valid: in [-n, n) (negative ones wrap
    around, as Python indexing does), so eager Python raises nothing."""
    depth = draw(st.sampled_from([1, 1, 2]))
    shape = tuple(draw(st.integers(0, 7)) for _ in range(depth))
    index_vars = ["i", "j"][:depth]
    used: dict = {}
    indent = "    " * (depth + 1)
    body = []
    for _ in range(draw(st.integers(1, 3))):
        body += draw(statements(index_vars, indent, used))
    lines = ["def kernel(a, b, out):", "    s = 0.0", "    k = -1"]
    indent = "    "
    for var, n in zip(index_vars, shape):
        offs = used.get(var, [0])
        first_ok = max(0, -n - min(offs))          # i + off >= -n
        last_ok = n - 1 - max(offs)                # i + off <= n - 1
        lo = first_ok + draw(st.integers(0, 2))
        hi = last_ok + 1 - draw(st.integers(0, 2))
        step = draw(st.sampled_from([1, 1, 2, -1]))
        bounds = f"{lo}, {hi}" if step == 1 else f"{lo}, {hi}, {step}" if step > 0 else f"{hi - 1}, {lo - 1}, -1"
        lines.append(f"{indent}for {var} in range({bounds}):")
        indent += "    "
    lines += body
    lines.append("    return out, s, k")
    return "\n".join(lines) + "\n", shape


def compile_source(source: str):
    filename = f"<vectorize-hypothesis-{next(_counter)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"np": np, "math": __import__("math")}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["kernel"]


def run(fn, args):
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return fn(*args), args
    except Exception as e:  # noqa: BLE001
        return e, args


@settings(max_examples=int(os.environ.get("GRAPHJIT_HYPOTHESIS_EXAMPLES", "60")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(kernels(), st.integers(0, 2 ** 31), st.sampled_from(["float64", "float64", "float32"]),
       st.sampled_from(["distinct", "distinct", "out is a", "out is a view of b"]))
def test_random_affine_loop_nests_match_eager(kernel, seed, dtype, aliasing):
    source, shape = kernel
    fn = compile_source(source)

    def make():
        rng = np.random.default_rng(seed)
        a, b, out = (rng.random(shape).astype(dtype) for _ in range(3))
        if aliasing == "out is a":
            out = a
        elif aliasing == "out is a view of b":
            out = b[::-1]   # the same memory, reversed
        return (a, b, out)

    tol = 1e-12 if dtype == "float64" else 1e-5
    expected, eager_args = run(fn, make())
    jitted = graphjit.jit(fn, jit_level="O2")
    actual, compiled_args = run(jitted, make())
    if isinstance(expected, Exception):
        assert type(actual) is type(expected), f"{source}\neager raised {expected!r}, O2 gave {actual!r}"
        assert str(actual) == str(expected), source
        for x, e in zip(compiled_args, eager_args):   # what the loop wrote before it raised
            np.testing.assert_allclose(x, e, rtol=tol, atol=tol, err_msg=source)
        return
    assert not isinstance(actual, Exception), f"{source}\nO2 raised {actual!r}"
    out, s, k = actual
    np.testing.assert_allclose(out, expected[0], rtol=tol, atol=tol, err_msg=source)
    np.testing.assert_allclose(s, expected[1], rtol=tol, atol=tol, err_msg=source)
    assert k == expected[2] and type(k) is type(expected[2]), source
    assert np.asarray(s).dtype == np.asarray(expected[1]).dtype, source
    assert np.asarray(out).dtype == np.asarray(expected[0]).dtype, source
    for x, e in zip(compiled_args, eager_args):
        np.testing.assert_allclose(x, e, rtol=tol, atol=tol, err_msg=source)


def test_the_generator_makes_vectorizable_and_dependent_loops():
    """Both kinds occur: a fixed example of each, through the same path as the property."""
    independent = "def kernel(a, b, out):\n    s = 0.0\n    k = -1\n    for i in range(1, 6 + -1):\n" \
                  "        out[i + 0] = (a[i + -1] + b[i + 1])\n        s += a[i + 0]\n    return out, s, k\n"
    dependent = "def kernel(a, b, out):\n    s = 0.0\n    k = -1\n    for i in range(1, 6 + 0):\n" \
                "        a[i + 0] = (a[i + -1] * 0.5)\n    return out, s, k\n"
    rng = np.random.default_rng(0)
    for source, vectorized in ((independent, True), (dependent, False)):
        fn = compile_source(source)
        args = tuple(rng.random(6) for _ in range(3))
        jitted = graphjit.jit(fn, jit_level="O2")
        text = str(jitted.graph(*args))
        assert ("vectorized loop" in text) == vectorized, text   # (out is an argument: behind a may_share_memory test)
        expected, _ = run(fn, copy.deepcopy(args))
        actual, _ = run(jitted, copy.deepcopy(args))
        np.testing.assert_allclose(actual[0], expected[0], rtol=1e-12)
