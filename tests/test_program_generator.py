"""Generated programs that read and write data through every path; each call must equal eager Python.

Hypothesis writes a small module: a function `f(x, d, L, t, n, dflt=...)` that reads arrays through
every path issue 10 names (an argument `x`, dict / list / tuple argument contents `d["a"]`,
`L[0]`, `L[1]["c"]`, `t[0]`, a module global `G`, `module.attr` `H.W`, a class attribute
`K.table`, an attribute of a global object `OBJ.w`, a closure cell `c`, a default argument
`dflt`), immutable values (`n`, a global int `N`), with loops over compile-time and run-time
bounds, `if`s on compile-time and run-time conditions, and in-place writes in every form
(subscript stores, augmented assignment, `out=` given positionally and by keyword, `.shape`
assignment, writes through views and aliases). Between calls the data changes (in place, rebound
to a new array of the same shape and dtype, of another shape, of another dtype; `n` and `N`
change value).

Each program is imported once per "world" (eager, O0, O1, O2 through generated code, O1 and O2
through the interpreter): a world is the module with its own globals, helper module and
arguments, so every world starts from the same state and sees the same changes. After every call
the result (or the exception's type) and the state of every array reachable through the paths
must equal eager's. A failure prints the generated source and the changes made between calls.

Profiles (registered in tests/conftest.py): `graphjit-ci` (default; derandomized, a few dozen
programs, no shrinking), `graphjit-long` (`GRAPHJIT_HYPOTHESIS_PROFILE=long`, 2 000 programs)
and `graphjit-shrink` (`GRAPHJIT_HYPOTHESIS_PROFILE=shrink`: the CI programs, failures shrunk to a minimal one).
`python tests/test_program_generator.py [N [FAILURES.jsonl]]` runs N programs (long profile) without
stopping at the first mismatch, prints the counts grouped by the kind of mismatch and writes every
failing program to FAILURES.jsonl.
"""

import collections
import importlib.util
import itertools
import os
import sys
import tempfile
import textwrap
import warnings

import numpy as np
from hypothesis import given, note, settings
from hypothesis import strategies as st

import graphjit as ms

_counter = itertools.count()
CONFIGS = [("O0", "auto"), ("O1", "auto"), ("O2", "auto"), ("O1", "no_sink"), ("O2", "no_sink")]
SIZE = 6

# --- the data paths ------------------------------------------------------------------------------
# name in the function body -> (read the current array from a world module, rebind it)


def _set_arg(i):
    def put(m, v):
        m.ARGS[i] = v
    return put


def _set_item(i, key):
    def put(m, v):
        m.ARGS[i][key] = v
    return put


def _set_tuple_first(m, v):
    m.ARGS[3] = (v,) + m.ARGS[3][1:]


def _set_defaults(m, v):
    m.f.__defaults__ = (v,)


PATHS = {
    "x": (lambda m: m.ARGS[0], _set_arg(0)),
    'd["a"]': (lambda m: m.ARGS[1]["a"], _set_item(1, "a")),
    'd["b"]': (lambda m: m.ARGS[1]["b"], _set_item(1, "b")),
    "L[0]": (lambda m: m.ARGS[2][0], _set_item(2, 0)),
    'L[1]["c"]': (lambda m: m.ARGS[2][1]["c"], lambda m, v: m.ARGS[2][1].__setitem__("c", v)),
    "t[0]": (lambda m: m.ARGS[3][0], _set_tuple_first),
    "G": (lambda m: m.G, lambda m, v: setattr(m, "G", v)),
    "H.W": (lambda m: m.H.W, lambda m, v: setattr(m.H, "W", v)),
    "K.table": (lambda m: m.K.table, lambda m, v: setattr(m.K, "table", v)),
    "OBJ.w": (lambda m: m.OBJ.w, lambda m, v: setattr(m.OBJ, "w", v)),
    "c": (lambda m: m.get_c(), lambda m, v: m.set_c(v)),
    "dflt": (lambda m: m.f.__defaults__[0], _set_defaults),
}
LOCAL_NAMES = {"x", "dflt"}      # a bare `name += ...` is in place; for G and c it would make them local

MODULE = '''\
import numpy as np
import {helper} as H

G = np.linspace(-1.0, 1.0, {size})
N = 3


class K:
    table = np.arange({size}) * 0.5 - 1.0


class Holder:
    def __init__(self):
        self.w = np.cos(np.arange({size}))


OBJ = Holder()


def make():
    c = np.full({size}, 0.25)

    def f(x, d, L, t, n, dflt=np.arange({size}) * 0.25):
{body}

    def get_c():
        return c

    def set_c(value):
        nonlocal c
        c = value

    return f, get_c, set_c


f, get_c, set_c = make()


def make_args():
    return [np.linspace(0.5, 2.0, {size}), {{"a": np.sin(np.arange({size}.0)), "b": np.ones({size})}},
            [np.arange({size}.0) - 2.0, {{"c": np.full({size}, -0.5)}}], (np.tanh(np.arange({size}.0)), 7), 2]


ARGS = make_args()
'''

HELPER = "import numpy as np\n\nW = np.linspace(2.0, -2.0, {size})\n"

# --- the program generator ----------------------------------------------------------------------

INDICES = ["0", "-1", "1:3", "::2", "...", "2"]
OPS = ["+", "-", "*"]


@st.composite
def scalars(draw, loop_var=None):
    """A scalar: a constant, `n`, `N`, an element or sum of some data, the loop index."""
    choices = ["1.5", "0.5", "-2.0", "n", "N", "elem", "sum", "acc"] + ([loop_var] * 2 if loop_var else [])
    kind = draw(st.sampled_from(choices))
    if kind == "elem":
        return f"{draw(reads())}[{draw(st.sampled_from(['0', '1', '-1']))}]"
    if kind == "sum":
        return f"{draw(reads())}.sum() * 0.1"
    return kind


def reads():
    return st.sampled_from(list(PATHS))


@st.composite
def bounds(draw):
    """A loop bound known at compile time or only at run time (always 0..4, below the smallest size)."""
    return draw(st.sampled_from([
        "3", "n", "N", "len({e}) // 2", "min(n + 1, 4)",                   # compile time
        "int(abs({e}[0])) % 4", "int({e}.sum() > 0) + 2", "int(acc) % 3",  # run time
    ])).format(e=draw(reads()))


@st.composite
def conditions(draw):
    return draw(st.sampled_from([
        "n > 1", "N == 3", "{e}.shape[0] > 6", "{e}.dtype == np.float64",  # compile time
        "{e}.sum() > 0", "{e}[0] > {e2}[1]", "acc > 1.0",                  # run time
    ])).format(e=draw(reads()), e2=draw(reads()))


@st.composite
def writes(draw, loop_var=None):
    """One in-place write (a list of lines) to a data path, in one of the forms NumPy offers."""
    target = draw(reads())
    s = draw(scalars(loop_var))
    op = draw(st.sampled_from(OPS))
    index = loop_var if loop_var and draw(st.booleans()) else draw(st.sampled_from(INDICES))
    kind = draw(st.sampled_from(["setitem", "aug_index", "aug_bare", "out_positional", "out_keyword",
                                 "shape", "shape_copy", "view_aug", "view_set", "view_reshape", "alias"]))
    if kind == "setitem":
        return [f"{target}[{index}] = {s}"]
    if kind == "aug_index":
        return [f"{target}[{index}] {op}= {s}"]
    if kind == "aug_bare":
        return [f"{target} {op}= {s}" if target in LOCAL_NAMES else f"{target}[...] {op}= {s}"]
    if kind == "out_positional":
        return [draw(st.sampled_from(["np.add({t}, {s}, {t})", "np.multiply({t}, {s}, {t})", "np.negative({t}, {t})",
                                      "np.subtract({t}, {e}, {t})", "np.maximum({t}, {s}, {t})"]))
                .format(t=target, s=s, e=draw(reads()))]
    if kind == "out_keyword":
        return [draw(st.sampled_from(["np.multiply({t}, {s}, out={t})", "np.add({t}, {e}, out={t})",
                                      "np.tanh({t}, out={t})", "np.abs({t}, out={t})"]))
                .format(t=target, s=s, e=draw(reads()))]
    if kind == "shape":
        return [f"{target}.shape = (2, -1)", f"{target}[1] {op}= {s}", f"acc = acc + {target}[0].sum()",
                f"{target}.shape = (-1,)"]
    if kind == "shape_copy":
        return [f"v = {target}.copy()", "v.shape = (2, -1)", f"v[0] {op}= {s}", "acc = acc + v[1].sum() + v.sum()"]
    if kind == "view_aug":
        return [f"v = {target}[1:]", f"v {op}= {s}"]
    if kind == "view_set":
        return [f"v = {target}[::2]", f"v[{draw(st.sampled_from(['0', '-1', '1:']))}] = {s}"]
    if kind == "view_reshape":
        return [f"v = {target}.reshape(2, -1)", f"v[{draw(st.sampled_from(['0', '1', ':, 0']))}] {op}= {s}"]
    return [f"u = {target}", f"u[-1] = {s}"]


@st.composite
def simple_statements(draw, loop_var=None):
    if draw(st.integers(0, 2)) == 0:
        return [f"acc = acc + {draw(scalars(loop_var))}"]
    return draw(writes(loop_var))


@st.composite
def statements(draw, depth=0):
    kind = draw(st.sampled_from(["write", "write", "write", "read", "for", "while", "if"] if depth < 2 else
                                ["write", "read"]))
    if kind == "write":
        return draw(writes())
    if kind == "read":
        return [f"acc = acc + {draw(reads())}.sum() * {draw(scalars())}"]
    if kind in ("for", "while"):
        var = f"i{depth}"
        body = [line for _ in range(draw(st.integers(1, 2))) for line in draw(simple_statements(var))]
        if draw(st.booleans()) and depth < 1:
            body += draw(statements(depth + 1))
        bound = draw(bounds())
        if kind == "for":
            return [f"for {var} in range({bound}):"] + ["    " + line for line in body]
        return [f"{var} = 0", f"while {var} < {bound}:"] + ["    " + line for line in body] + [f"    {var} += 1"]
    then = [line for _ in range(draw(st.integers(1, 2))) for line in draw(statements(depth + 1))]
    lines = [f"if {draw(conditions())}:"] + ["    " + line for line in then]
    if draw(st.booleans()):
        lines += ["else:"] + ["    " + line for line in draw(statements(depth + 1))]
    return lines


@st.composite
def bodies(draw):
    lines = ["acc = 0.0"]
    for _ in range(draw(st.integers(1, 5))):
        lines += draw(statements())
    e, e2 = draw(reads()), draw(reads())
    lines.append(draw(st.sampled_from(["return acc", f"return acc, {e} * 2.0", f"return {e} + {e2}",
                                       f"return {e}[1:] * 1.0", f"return acc, {e}.sum()"])))
    return textwrap.indent("\n".join(lines), " " * 8)


CHANGE_KINDS = ["in_place", "in_place", "rebind_same", "rebind_same", "rebind_shape", "rebind_dtype", "n", "N"]


@st.composite
def change_plans(draw):
    """What changes before the 2nd and 3rd calls: a list (per call) of (path, kind)."""
    return [[(draw(reads()), draw(st.sampled_from(CHANGE_KINDS))) for _ in range(draw(st.integers(1, 2)))]
            for _ in range(2)]


# --- worlds ---------------------------------------------------------------------------------------

def _import(name: str, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_world(directory, source_body: str, tag: str):
    """Import the program as a fresh module (with its own helper module, already in sys.modules so
    that `import helper as H` needs no search of sys.path) and return it."""
    n = next(_counter)
    helper, name = f"gen_helper_{n}_{tag}", f"gen_prog_{n}_{tag}"
    (directory / f"{helper}.py").write_text(HELPER.format(size=SIZE))
    (directory / f"{name}.py").write_text(MODULE.format(helper=helper, size=SIZE, body=source_body))
    _import(helper, directory / f"{helper}.py")
    return _import(name, directory / f"{name}.py")


def unload(*modules) -> None:
    for m in modules:
        sys.modules.pop(m.H.__name__, None)
        sys.modules.pop(m.__name__, None)


def apply_change(m, path: str, kind: str, step: int):
    """Make one change to a world; every world gets exactly the same one."""
    if kind == "n":
        m.ARGS[4] = 1 + (m.ARGS[4] + step) % 4
        return
    if kind == "N":
        m.N = 2 + (m.N + step) % 3
        return
    get, put = PATHS[path]
    current = get(m)
    if kind == "in_place":
        current[...] = current * -0.5 + (step + 1)
    elif kind == "rebind_same":
        put(m, np.linspace(-2.0 - step, 3.0, current.size).astype(current.dtype).reshape(current.shape))
    elif kind == "rebind_shape":
        put(m, np.linspace(1.0, -1.0 - step, 12))
    else:
        put(m, (np.arange(current.size) - 2 - step).astype(np.int64 if current.dtype.kind == "f" else np.float32))


def state_of(m) -> dict:
    return {path: np.array(get(m), copy=True) for path, (get, _) in PATHS.items()} | \
        {"n": m.ARGS[4], "N": m.N}


def call(fn, m):
    """Run one call; return ("ok", result) or ("raised", exception type)."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return "ok", fn(*m.ARGS)
    except Exception as e:  # noqa: BLE001 - the exception is part of the result
        return "raised", e


def differs(actual, expected) -> str:
    """'' if `actual` equals `expected` (type, dtype, shape, values to 1e-9), else what differs."""
    if isinstance(expected, tuple):
        if not isinstance(actual, tuple) or len(actual) != len(expected):
            return f"expected {expected!r}, got {actual!r}"
        return next((d for d in map(differs, actual, expected) if d), "")
    if isinstance(expected, (np.ndarray, np.generic, float, int)):
        a, e = np.asarray(actual), np.asarray(expected)
        if not isinstance(actual, (np.ndarray, np.generic, float, int)):
            return f"expected {expected!r}, got {actual!r}"
        if a.dtype != e.dtype or a.shape != e.shape:
            return f"expected {e.dtype}{e.shape} {e!r}, got {a.dtype}{a.shape} {a!r}"
        if e.dtype.kind in "fc":
            ok = np.allclose(a, e, rtol=1e-9, atol=1e-12, equal_nan=True)
        else:
            ok = np.array_equal(a, e)
        return "" if ok else f"expected {e!r}, got {a!r}"
    return "" if actual == expected else f"expected {expected!r}, got {actual!r}"


def compare_call(label: str, got, want) -> list:
    (got_kind, got_value), (want_kind, want_value) = got, want
    if want_kind == "raised":
        if got_kind != "raised":
            return [f"{label}: eager raised {type(want_value).__name__}: {want_value}; compiled returned "
                    f"{got_value!r}"]
        if type(got_value) is not type(want_value):
            return [f"{label}: eager raised {type(want_value).__name__}: {want_value}; compiled raised "
                    f"{type(got_value).__name__}: {got_value}"]
        return []
    if got_kind == "raised":
        return [f"{label}: compiled raised {type(got_value).__name__}: {got_value}"]
    why = differs(got_value, want_value)
    return [f"{label}: result {why}"] if why else []


def compare_state(label: str, got: dict, want: dict) -> list:
    return [f"{label}: {path} {why}" for path in want if (why := differs(got[path], want[path]))]


def check_program(directory, body: str, plan: list) -> list:
    """Run the program eagerly and in every configuration; return the differences (empty: all agree)."""
    directory = directory / f"program_{next(_counter)}"
    directory.mkdir()
    eager = load_world(directory, body, "eager")
    worlds = {config: load_world(directory, body, f"{config[0]}_{config[1]}") for config in CONFIGS}
    jitted = {}
    problems = []
    for config, m in worlds.items():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                jitted[config] = ms.jit(m.f, jit_level=config[0], exec_mode=config[1])
        except Exception as e:  # noqa: BLE001
            problems.append(f"{config}: jit() raised {type(e).__name__}: {e}")
    for step in range(len(plan) + 1):
        if step:
            for path, kind in plan[step - 1]:
                for m in (eager, *worlds.values()):
                    apply_change(m, path, kind, step)
        want = call(eager.f, eager)
        want_state = state_of(eager)
        for config, fn in jitted.items():
            label = f"{config[0]}/{config[1]} call {step + 1}"
            got = call(fn, worlds[config])
            problems += compare_call(label, got, want)
            problems += compare_state(label, state_of(worlds[config]), want_state)
    unload(eager, *worlds.values())
    return problems


def describe(body: str, plan: list) -> str:
    changes = "; ".join(f"before call {i + 2}: " + ", ".join(f"{kind} {path}" if kind not in ("n", "N") else
                                                             f"change {kind}" for path, kind in step)
                        for i, step in enumerate(plan))
    return f"def f(x, d, L, t, n, dflt=...):\n{textwrap.dedent(body)}\n# changes: {changes}"


_DIRECTORY = None


def directory():
    """One temporary directory for every generated module of this process."""
    global _DIRECTORY
    if _DIRECTORY is None:
        import atexit
        import pathlib
        import shutil
        _DIRECTORY = pathlib.Path(tempfile.mkdtemp(prefix="graphjit-generated-"))
        atexit.register(shutil.rmtree, _DIRECTORY, ignore_errors=True)
    return _DIRECTORY


PROFILE = "graphjit-" + os.environ.get("GRAPHJIT_HYPOTHESIS_PROFILE", "ci")
if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import conftest  # noqa: F401  (registers the profiles; pytest loads it by itself)


@settings(settings.get_profile(PROFILE))
@given(body=bodies(), plan=change_plans())
def test_generated_programs_equal_eager_at_every_call(body, plan):
    note(describe(body, plan))
    problems = check_program(directory(), body, plan)
    assert not problems, "compiled differs from eager for:\n" + describe(body, plan) + "\n\n" + \
        "\n".join(problems[:12])


# --- counting run: every program, no stopping at the first mismatch --------------------------------

def _kinds(problems: list) -> set:
    """Keys for grouping one program's mismatches: the first call that differs (a wrong first call is a
    missed effect or a wrong fold; a wrong later call only is staleness), what differs, and where."""
    calls = sorted({int(p.split(" call ", 1)[1].split(":", 1)[0]) for p in problems if " call " in p})
    when = "call 1" if calls and calls[0] == 1 else "later calls only"
    what = sorted({"exception" if "raised" in p else "result" if ": result " in p else "state" for p in problems})
    configs = sorted({p.split(" call ", 1)[0] for p in problems if " call " in p})
    where = "all configs" if len(configs) == len(CONFIGS) else "only " + ", ".join(configs)
    setup = [p for p in problems if "jit() raised" in p]
    return {f"{when}: {'+'.join(what)}", f"configs: {where}"} | ({"jit() raised"} if setup else set())


def run_and_count(count: int, failures_file: str = "") -> None:
    """Run `count` programs; print how many differ from eager, grouped; append each failing program (with
    its differences) to `failures_file` as one JSON line if given."""
    import json
    os.environ.setdefault("GRAPHJIT_CACHE", "0")
    os.environ["GRAPHJIT_VERIFY"] = "1"
    totals = collections.Counter()
    kinds = collections.Counter()
    examples = {}

    @settings(settings.get_profile("graphjit-long"), max_examples=count)
    @given(body=bodies(), plan=change_plans())
    def each(body, plan):
        problems = check_program(directory(), body, plan)
        totals["programs"] += 1
        totals["mismatching programs"] += bool(problems)
        for kind in (_kinds(problems) if problems else ()):
            kinds[kind] += 1
            examples.setdefault(kind, (describe(body, plan), problems[:4]))
        if problems and failures_file:
            with open(failures_file, "a") as out:
                out.write(json.dumps({"body": textwrap.dedent(body), "plan": plan, "problems": problems}) + "\n")

    each()
    print(dict(totals))
    for kind, n in kinds.most_common():
        print(f"{n:6d}  {kind}")
    for kind, (source, problems) in examples.items():
        print(f"\n=== {kind}\n{source}\n" + "\n".join(problems))


if __name__ == "__main__":
    run_and_count(int(sys.argv[1]) if len(sys.argv) > 1 else 2000, sys.argv[2] if len(sys.argv) > 2 else "")
