"""Property: for generated small programs, O0, O1, O2 and no_sink all give the eager result.

Each example is Python source text (straight-line array code with in-place updates, writes through
views of the arguments, scalars, a loop and a branch now and then), written to a temporary
module, imported, and compiled at every level; results and argument mutation must equal eager
execution (tests/eager_vs_compiled.py: run_both).
"""

import contextlib
import importlib.util
import itertools
import os

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphjit.graph.passes import tile
from eager_vs_compiled import run_both

_counter = itertools.count()
# 50 programs (6 compiles each) in the default run; GRAPHJIT_HYPOTHESIS_PROFILE=long: 2 000
EXAMPLES = 2000 if os.environ.get("GRAPHJIT_HYPOTHESIS_PROFILE") == "long" else 50

UNARY = ["np.exp({a} * 0.5)", "np.tanh({a})", "np.abs({a})", "-{a}", "{a} ** 2", "np.abs({a}) ** 0.5",
         "np.sqrt(np.abs({a}) + 1.0)", "np.maximum({a}, 0)", "{a}.copy()", "{a}[::-1]",
         # identities the optimizer rewrites, which must keep their own buffers where it matters
         "{a} * 1", "{a} + 0", "{a} - 0", "{a} / 1", "-(-{a})", "{a}.T.T", "{a}.reshape(12).reshape(3, 4)",
         "{a}.astype(np.float64)", "np.where(True, {a}, 0.0)"]
BINARY = ["{a} + {b}", "{a} - {b}", "{a} * {b}", "np.maximum({a}, {b})", "np.where({a} > {b}, {a}, {b})",
          "({a} + {b}) * 0.5"]
CONSTANTS = ["2.0", "0.5", "1", "np.sqrt(2.0)", "x.shape[0] * 0.25"]


@st.composite
def programs(draw):
    arrays = ["x", "y"]          # (3, 4): x float64, y float32
    scalars = []
    lines = []
    expressions = []             # right-hand sides so far, to repeat (common subexpressions)
    n = draw(st.integers(2, 10))
    for k in range(n):
        name = f"v{k}"
        kind = draw(st.sampled_from(["unary", "binary", "binary", "const", "inplace", "inplace", "setitem",
                                     "scalar", "loop", "loop_write", "branch", "repeat"]))
        if kind == "repeat" and not expressions:
            kind = "unary"
        # recent values are picked more often: updates then hit fresh temporaries and their aliases
        a = draw(st.sampled_from(arrays + arrays[-2:] * 2))
        b = draw(st.sampled_from(arrays + scalars + CONSTANTS))
        if kind == "unary":
            expressions.append(draw(st.sampled_from(UNARY)).format(a=a))
            lines.append(f"{name} = {expressions[-1]}")
            arrays.append(name)
        elif kind == "binary":
            expressions.append(draw(st.sampled_from(BINARY)).format(a=a, b=b))
            lines.append(f"{name} = {expressions[-1]}")
            arrays.append(name)
        elif kind == "repeat":
            lines.append(f"{name} = {draw(st.sampled_from(expressions))}")
            arrays.append(name)
        elif kind == "const":
            lines.append(f"{name} = {a} * {draw(st.sampled_from(CONSTANTS))}")
            arrays.append(name)
        elif kind == "inplace":
            op = draw(st.sampled_from(["+=", "-=", "*="]))
            lines.append(f"{a} {op} {b}")
        elif kind == "setitem":
            index = draw(st.sampled_from(["0", "1:, 2", "::2", "-1, 0"]))
            value = draw(st.sampled_from(["1.5", f"{b}" if b in scalars or b in CONSTANTS else "2.5"]))
            lines.append(f"{a}[{index}] = {value}")
        elif kind == "scalar":
            lines.append(f"{name} = {a}.sum() * 0.1")
            scalars.append(name)
        elif kind == "loop":
            lines.append(f"{name} = {a} * 1.0")
            lines.append("for i in range(2):")
            lines.append(f"    {name} = {name} + np.tanh({b} * 2.0) * i")
            arrays.append(name)
        elif kind == "loop_write":
            # the read of `a` looks loop-invariant, but the loop writes `a`
            lines.append(f"{name} = {a} * 0.0")
            lines.append("for i in range(2):")
            lines.append(f"    {a}[i] = {a}[i] + 1.0")
            lines.append(f"    {name} = {name} + np.tanh({a})")
            arrays.append(name)
        else:
            lines.append(f"{name} = {a} + 0.0")
            lines.append(f"if {a}.sum() > 6:")
            lines.append(f"    {name} = {name} * 2.0")
            lines.append("else:")
            lines.append(f"    {name} = {name} - {b}")
            arrays.append(name)
    results = draw(st.lists(st.sampled_from(arrays + scalars), min_size=1, max_size=3))
    body = "\n".join("    " + line for line in lines)
    returned = results[0] if len(results) == 1 else "(" + ", ".join(results) + ")"
    return f"import numpy as np\n\n\ndef f(x, y):\n{body}\n    return {returned}\n"


@contextlib.contextmanager
def tiny_tiles():
    """Make the tiling pass fire on these small arrays: one-row tiles."""
    saved = tile.MIN_ELEMENTS, tile.TILE_BYTES, tile.MIN_INTERNAL
    tile.MIN_ELEMENTS, tile.TILE_BYTES, tile.MIN_INTERNAL = 1, 32, 1
    try:
        yield
    finally:
        tile.MIN_ELEMENTS, tile.TILE_BYTES, tile.MIN_INTERNAL = saved


def load(source: str, tmp_path):
    name = f"generated_{next(_counter)}"
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(source=programs())
def test_generated_programs_agree_at_every_level(source, tmp_path):
    fn = load(source, tmp_path)
    rng = np.random.default_rng(5)
    args = (rng.standard_normal((3, 4)), rng.standard_normal((3, 4)).astype(np.float32))
    with np.errstate(all="ignore"):
        for level, mode, tiled in (("O0", "auto", False), ("O1", "auto", False), ("O2", "auto", False),
                                   ("O2", "no_sink", False), ("O1", "no_sink", False), ("O2", "auto", True)):
            try:
                with tiny_tiles() if tiled else contextlib.nullcontext():
                    run_both(fn, args, jit_level=level, exec_mode=mode)
            except AssertionError as e:
                raise AssertionError(f"{level}/{mode}{' tiled' if tiled else ''} differs from eager for:\n"
                                     f"{source}") from e
