"""Hypothesis-generated differentiable programs: straight-line NumPy code over two arrays, with a run-time
branch, a loop, a loop filling or accumulating into an array and in-place writes now and then; the gradient graphjit compiles must equal central finite differences.
Profiles: tests/conftest.py (GRAPHJIT_HYPOTHESIS_PROFILE=long for 2 000 programs)."""

import importlib.util
import itertools
import os
import sys

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphjit as gj

UNARY = ["np.sin({})", "np.cos({})", "np.tanh({})", "np.exp(np.tanh({}))", "np.square({})", "-{}",
         "np.sqrt({} * {} + 1.0)", "np.log(np.abs({}) + 1.0)", "np.maximum({}, 0.1)", "np.abs({})"]
BINARY = ["{} + {}", "{} - {}", "{} * {}", "{} / (np.abs({}) + 1.0)", "np.maximum({}, {})", "np.minimum({}, {})",
          "np.where({0} > {1}, {0}, {1} * 2.0)"]
REDUCE = ["({}).sum()", "({}).mean()", "({}).max()", "(({}) * ({})).sum()"]

_counter = itertools.count()


@st.composite
def programs(draw):
    names = ["x", "w"]
    lines = []
    for k in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["unary", "binary", "binary", "branch", "loop", "fill", "scatter", "writes"]))
        a, b = draw(st.sampled_from(names)), draw(st.sampled_from(names))
        if kind == "unary":
            expr = draw(st.sampled_from(UNARY)).format(a, a)
        elif kind == "binary":
            expr = draw(st.sampled_from(BINARY)).format(a, b)
        else:
            expr = None
        target = f"t{k}"
        if kind == "branch":
            lines += [f"if ({a}).sum() > {draw(st.sampled_from(['0.0', '1.0']))}:",
                      f"    {target} = np.tanh({a}) * {b}",
                      "else:",
                      f"    {target} = {a} + {b}"]
        elif kind == "fill":            # a loop filling an array, reading what it wrote
            lines += [f"{target} = np.zeros_like({a})",
                      f"for i in range({draw(st.integers(1, 4))}):",
                      f"    {target}[i] = np.sin({a}[i]) * {b}[i] + {target}[i - 1] * "
                      f"{draw(st.sampled_from(['0.5', b + '[i]']))}"]
        elif kind == "scatter":         # a loop accumulating into an array
            lines += [f"{target} = {a} * 1.0",
                      f"for i in range({draw(st.integers(0, 6))}):",
                      f"    {target}[i % 4] += {b}[(i + 1) % 4] * {target}[(i + 2) % 4]"]
        elif kind == "writes":          # in-place writes in straight-line code
            lines += [f"{target} = {a} + 0.0",
                      f"{target}[1:] += {b}[:-1]",
                      f"{target}[{draw(st.integers(0, 3))}] = ({b} * {target}).sum()",
                      f"{target} *= {b}"]
        elif kind == "loop":
            lines += [f"{target} = {a}",
                      f"for i in range({draw(st.integers(0, 3))}):",
                      f"    {target} = np.sin({target}) * {b} + i"]
        else:
            lines.append(f"{target} = {expr}")
        names.append(target)
    reduce = draw(st.sampled_from(REDUCE))
    last = names[-1]
    lines.append("return " + reduce.format(last, draw(st.sampled_from(names))))
    return "def program(x, w):\n" + "".join(f"    {line}\n" for line in lines)


def load(source: str, tmp_path):
    name = f"gj_generated_grad_{next(_counter)}"
    path = tmp_path / f"{name}.py"
    path.write_text("import numpy as np\n\n\n" + source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module.program


def finite_difference(fn, args, k, direction, eps=1e-6):
    plus, minus = list(args), list(args)
    plus[k] = args[k] + eps * direction
    minus[k] = args[k] - eps * direction
    return (fn(*plus) - fn(*minus)) / (2 * eps)


PROFILE = "graphjit-" + os.environ.get("GRAPHJIT_HYPOTHESIS_PROFILE", "ci")   # ci: 30 programs, long: 2 000


@settings(settings.get_profile(PROFILE), suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(source=programs(), level=st.sampled_from(["O0", "O1", "O2"]), mode=st.sampled_from(["auto", "no_sink"]),
       seed=st.integers(0, 2**16))
def test_generated_gradients_match_finite_differences(source, level, mode, seed, tmp_path):
    fn = load(source, tmp_path)
    rng = np.random.default_rng(seed)
    args = (rng.standard_normal(4), rng.standard_normal(4))
    with np.errstate(all="ignore"):
        value = fn(*args)
    if not np.isfinite(value) or abs(value) > 1e6:
        return
    jitted = gj.jit(fn, jit_config=gj.JitConfig(jit_level=level, exec_mode=mode))
    grads = gj.grad(jitted, (0, 1))(*args)
    for k in (0, 1):
        d = rng.standard_normal(4)
        with np.errstate(all="ignore"):
            expected = finite_difference(fn, args, k, d)
        got = float(np.dot(grads[k], d))
        # kinks (max, abs, where) make a finite difference across them meaningless: check it twice as
        # close to the point, and accept only agreement at one of the two distances
        if not np.isclose(got, expected, rtol=1e-4, atol=1e-5):
            closer = finite_difference(fn, args, k, d, eps=1e-8)
            assert np.isclose(got, closer, rtol=1e-3, atol=1e-4), (source, k, got, expected, closer)
