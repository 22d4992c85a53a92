"""Staleness matrix: data reached by any path is read at call time, never baked into the compiled code.

Issue 10's rule: arrays and every other mutable object are never compile-time constants, whichever
path they arrive by. Each case below is a small module (written to a temporary file, so graphjit
reads its source) whose functions read one array `D` through one path:

    argument, dict / list / tuple argument contents, a dict inside a list argument, a module
    global, `module.attr`, a class attribute, an attribute of a plain object (passed as an
    argument, or global), a closure cell, a default argument, and Cell attributes that are not
    sub-cells (a weight `self.scale`, a private array `self._buf`, a dict `self.table`).

Every case has two functions: `f_with(x)` combines the data with an array argument, `f_alone()`
combines it only with itself and constants (the case that used to go stale: nothing in the
signature changes). Each case module also says how to reach the data (`get()`) and how to rebind
it (`put(value)`). A test calls both functions, changes the data (in place; rebound to a new array
of the same shape and dtype; rebound to another shape; rebound to another dtype), calls again,
changes the current array in place, calls again: every call must equal eager Python, at
O0/O1/O2, through the generated code and through the interpreter (`exec_mode="no_sink"`).

Also here: immutable values (numbers, strings, tuples, None) read through the same paths are
folded, so changing them must recompile and give the new result; arrays built while compiling
(`np.zeros(3)` in the body, `np.mgrid` over int arguments) are fresh at every call; and a
representative subset runs in a second process that loads the entries from the disk cache and
mutates the data there.
"""

import importlib.util
import inspect
import itertools
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import graphjit as ms

_counter = itertools.count()
LEVELS = ["O0", "O1", "O2"]
MODES = ["auto", "no_sink"]

# --- the cases: one module source per data path ------------------------------------------------
# `{helper}` is replaced by the name of a helper module written next to the case (for `module.attr`).
# Each module defines: f_with / f_alone (what is jitted; a Cell instance is jitted as a whole),
# args_with(x) / args_alone() (the call arguments, built from the module's current state), get() and
# put(value) (the data array and how to rebind it).

CASES = {
    "argument": """
        ARGS = [np.ones(3)]
        def f_with(a, x):
            return a * x[:1] + x.sum() + a.sum()
        def f_alone(a):
            return a * 2 + 1
        def args_with(x): return (ARGS[0], x)
        def args_alone(): return (ARGS[0],)
        def get(): return ARGS[0]
        def put(v): ARGS[0] = v
    """,
    "dict_argument": """
        D = {"a": np.ones(3), "b": np.full(3, 0.5)}
        def f_with(d, x):
            return d["a"] * x[:1] + d["b"].sum() + x[:1]
        def f_alone(d):
            return d["a"] * 2 + d["b"].sum()
        def args_with(x): return (D, x)
        def args_alone(): return (D,)
        def get(): return D["a"]
        def put(v): D["a"] = v
    """,
    "new_dict_argument": """
        # rebinding passes a new dict (with new arrays) instead of assigning into the old one
        STATE = [{"a": np.ones(3), "b": np.full(3, 0.5)}]
        def f_with(d, x):
            return d["a"] * x[:1] + d["b"].sum() + x[:1]
        def f_alone(d):
            return d["a"] * 2 + d["b"].sum()
        def args_with(x): return (STATE[0], x)
        def args_alone(): return (STATE[0],)
        def get(): return STATE[0]["a"]
        def put(v): STATE[0] = {"a": v, "b": STATE[0]["b"].copy()}
    """,
    "list_argument": """
        L = [np.ones(3), np.full(3, 0.5)]
        def f_with(items, x):
            return items[0] * x[:1] + items[1].sum() + x[:1]
        def f_alone(items):
            return items[0] * 2 + items[1].sum()
        def args_with(x): return (L, x)
        def args_alone(): return (L,)
        def get(): return L[0]
        def put(v): L[0] = v
    """,
    "tuple_argument": """
        STATE = [(np.ones(3), np.full(3, 0.5))]
        def f_with(t, x):
            return t[0] * x[:1] + t[1].sum() + x[:1]
        def f_alone(t):
            a, b = t
            return a * 2 + b.sum()
        def args_with(x): return (STATE[0], x)
        def args_alone(): return (STATE[0],)
        def get(): return STATE[0][0]
        def put(v): STATE[0] = (v, STATE[0][1])
    """,
    "dict_in_list_argument": """
        L = [{"a": np.ones(3)}, np.full(3, 0.5)]
        def f_with(items, x):
            return items[0]["a"] * x[:1] + items[1].sum() + x[:1]
        def f_alone(items):
            return items[0]["a"] * 2 + items[1].sum()
        def args_with(x): return (L, x)
        def args_alone(): return (L,)
        def get(): return L[0]["a"]
        def put(v): L[0]["a"] = v
    """,
    "module_global": """
        W = np.ones(3)
        def f_with(x):
            return W * x[:1] + x.sum() + W.sum()
        def f_alone():
            return W * 2 + 1
        def args_with(x): return (x,)
        def args_alone(): return ()
        def get(): return W
        def put(v):
            global W
            W = v
    """,
    "module_attr": """
        import {helper} as H
        def f_with(x):
            return H.W * x[:1] + x.sum() + H.W.sum()
        def f_alone():
            return H.W * 2 + 1
        def args_with(x): return (x,)
        def args_alone(): return ()
        def get(): return H.W
        def put(v): H.W = v
    """,
    "class_attribute": """
        class K:
            table = np.ones(3)
        def f_with(x):
            return K.table * x[:1] + x.sum() + K.table.sum()
        def f_alone():
            return K.table * 2 + 1
        def args_with(x): return (x,)
        def args_alone(): return ()
        def get(): return K.table
        def put(v): K.table = v
    """,
    "object_attribute_argument": """
        class Holder:
            def __init__(self):
                self.w = np.ones(3)
        OBJ = Holder()
        def f_with(o, x):
            return o.w * x[:1] + x.sum() + o.w.sum()
        def f_alone(o):
            return o.w * 2 + 1
        def args_with(x): return (OBJ, x)
        def args_alone(): return (OBJ,)
        def get(): return OBJ.w
        def put(v): OBJ.w = v
    """,
    "object_attribute_global": """
        class Holder:
            def __init__(self):
                self.w = np.ones(3)
        OBJ = Holder()
        def f_with(x):
            return OBJ.w * x[:1] + x.sum() + OBJ.w.sum()
        def f_alone():
            return OBJ.w * 2 + 1
        def args_with(x): return (x,)
        def args_alone(): return ()
        def get(): return OBJ.w
        def put(v): OBJ.w = v
    """,
    "closure_cell": """
        def make():
            w = np.ones(3)
            def f_with(x):
                return w * x[:1] + x.sum() + w.sum()
            def f_alone():
                return w * 2 + 1
            return f_with, f_alone
        f_with, f_alone = make()
        def args_with(x): return (x,)
        def args_alone(): return ()
        def get(): return f_with.__closure__[0].cell_contents
        def put(v):
            f_with.__closure__[0].cell_contents = v   # both functions share the cell
    """,
    "default_argument": """
        def f_with(x, w=np.ones(3)):
            return w * x[:1] + x.sum() + w.sum()
        f_alone_default = f_with.__defaults__[0]
        def f_alone(w=f_alone_default):
            return w * 2 + 1
        def args_with(x): return (x,)
        def args_alone(): return ()
        def get(): return f_with.__defaults__[0]
        def put(v):
            f_with.__defaults__ = (v,)
            f_alone.__defaults__ = (v,)
    """,
    "cell_weight": """
        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.scale = np.ones(3)
            def construct(self, x):
                return self.scale * x[:1] + x.sum() + self.scale.sum()
        class NetAlone(nn.Cell):
            def __init__(self, scale):
                super().__init__()
                self.scale = scale
            def construct(self):
                return self.scale * 2 + 1
        f_with = Net()
        f_alone = NetAlone(f_with.scale)
        def args_with(x): return (x,)
        def args_alone(): return ()
        def get(): return f_with.scale
        def put(v):
            f_with.scale = v
            f_alone.scale = v
    """,
    "cell_private_array": """
        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self._buf = np.ones(3)
            def construct(self, x):
                return self._buf * x[:1] + x.sum() + self._buf.sum()
        class NetAlone(nn.Cell):
            def __init__(self, buf):
                super().__init__()
                self._buf = buf
            def construct(self):
                return self._buf * 2 + 1
        f_with = Net()
        f_alone = NetAlone(f_with._buf)
        def args_with(x): return (x,)
        def args_alone(): return ()
        def get(): return f_with._buf
        def put(v):
            f_with._buf = v
            f_alone._buf = v
    """,
    "cell_dict_attribute": """
        class Net(nn.Cell):
            def __init__(self, table):
                super().__init__()
                self.table = table
            def construct(self, x):
                return self.table["w"] * x[:1] + x.sum() + self.table["w"].sum()
        class NetAlone(nn.Cell):
            def __init__(self, table):
                super().__init__()
                self.table = table
            def construct(self):
                return self.table["w"] * 2 + 1
        TABLE = {"w": np.ones(3)}
        f_with = Net(TABLE)
        f_alone = NetAlone(TABLE)
        def args_with(x): return (x,)
        def args_alone(): return ()
        def get(): return TABLE["w"]
        def put(v): TABLE["w"] = v
    """,
    "cell_list_attribute": """
        class Net(nn.Cell):
            def __init__(self, items):
                super().__init__()
                self.items = items
            def construct(self, x):
                return self.items[0] * x[:1] + x.sum() + self.items[0].sum()
        class NetAlone(nn.Cell):
            def __init__(self, items):
                super().__init__()
                self.items = items
            def construct(self):
                return self.items[0] * 2 + 1
        ITEMS = [np.ones(3)]
        f_with = Net(ITEMS)
        f_alone = NetAlone(ITEMS)
        def args_with(x): return (x,)
        def args_alone(): return ()
        def get(): return ITEMS[0]
        def put(v): ITEMS[0] = v
    """,
    "cell_construct_dict_argument": """
        class Net(nn.Cell):
            def construct(self, d, x):
                return d["a"] * x[:1] + d["b"].sum() + x[:1]
        class NetAlone(nn.Cell):
            def construct(self, d):
                return d["a"] * 2 + d["b"].sum()
        D = {"a": np.ones(3), "b": np.full(3, 0.5)}
        f_with = Net()
        f_alone = NetAlone()
        def args_with(x): return (D, x)
        def args_alone(): return (D,)
        def get(): return D["a"]
        def put(v): D["a"] = v
    """,
}

HELPER = "W = np.ones(3)\n"
PRELUDE = "import numpy as np\nfrom graphjit import nn\n"


def write_case(directory, name: str) -> str:
    """Write the case (and its helper module) into `directory`; return the case's module name."""
    n = next(_counter)
    helper = f"stale_helper_{name}_{n}"
    (directory / f"{helper}.py").write_text(PRELUDE + HELPER)
    module = f"stale_{name}_{n}"
    body = textwrap.dedent(CASES[name]).replace("{helper}", helper)
    (directory / f"{module}.py").write_text(PRELUDE + body)
    return module


def import_case(directory, module: str):
    if str(directory) not in sys.path:
        sys.path.insert(0, str(directory))
    spec = importlib.util.spec_from_file_location(module, directory / f"{module}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[module] = mod
    spec.loader.exec_module(mod)
    return mod


# --- the changes made between calls -------------------------------------------------------------

def change_in_place(m):
    a = m.get()
    a[...] = a * 3 + 1


def rebind_same(m):
    m.put(np.arange(3.0) + 10)


def rebind_shape(m):
    m.put(np.arange(5.0) - 2)


def rebind_dtype(m):
    m.put(np.array([4, 5, 6], dtype=np.int32))


CHANGES = {"in_place": change_in_place, "rebind_same": rebind_same, "rebind_shape": rebind_shape,
           "rebind_dtype": rebind_dtype}


# --- comparing ---------------------------------------------------------------------------------

def difference(actual, expected) -> str:
    """'' when `actual` is what eager Python returned (type, dtype, shape, values), else what differs."""
    if isinstance(expected, tuple):
        if not isinstance(actual, tuple) or len(actual) != len(expected):
            return f"expected a tuple of {len(expected)}, got {actual!r}"
        return next((d for d in map(difference, actual, expected) if d), "")
    if isinstance(expected, (np.ndarray, np.generic)):
        a = np.asarray(actual)
        if a.dtype != expected.dtype or a.shape != np.shape(expected):
            return f"expected {expected.dtype}{np.shape(expected)} {expected!r}, got {a.dtype}{a.shape} {a!r}"
        if not np.array_equal(a, expected, equal_nan=a.dtype.kind in "fc"):
            return f"expected {expected!r}, got {a!r}"
        return ""
    return "" if type(actual) is type(expected) and actual == expected else f"expected {expected!r}, got {actual!r}"


def eager_of(fn):
    """The plain Python callable behind a function or a Cell instance."""
    return fn.construct if isinstance(fn, ms.nn.Cell) else fn


def check_call(jitted, fn, args, label: str, failures: list, previous: list):
    """Call eagerly and compiled; record a failure if they differ or the result shares memory with an
    earlier result (a constant handed out twice)."""
    expected = eager_of(fn)(*args)
    try:
        actual = jitted(*args)
    except Exception as e:   # noqa: BLE001 - a compiled call that raises where eager did not is a failure
        failures.append(f"{label}: raised {type(e).__name__}: {e}")
        return
    why = difference(actual, expected)
    if why:
        failures.append(f"{label}: {why}")
    if isinstance(actual, np.ndarray):
        if any(np.shares_memory(actual, p) for p in previous):
            failures.append(f"{label}: the result shares memory with an earlier call's result")
        previous.append(actual)


X = np.array([2.0, -1.0, 0.5])


def run_sequence(m, jit_fn, change: str, failures: list):
    """call; change; call; change the current array in place; call — for f_with and f_alone."""
    variants = {"with": (jit_fn(m.f_with), m.f_with, lambda: m.args_with(X.copy())),
                "alone": (jit_fn(m.f_alone), m.f_alone, m.args_alone)}
    results = {name: [] for name in variants}

    def call_all(step):
        for name, (jitted, fn, args) in variants.items():
            check_call(jitted, fn, args(), f"f_{name} after {step}", failures, results[name])

    call_all("first call")
    CHANGES[change](m)
    call_all(change)
    change_in_place(m)
    call_all(f"{change} then in_place")


@pytest.mark.parametrize("exec_mode", MODES)
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("change", list(CHANGES))
@pytest.mark.parametrize("path", list(CASES))
def test_data_is_read_at_call_time(path, change, level, exec_mode, tmp_path):
    m = import_case(tmp_path, write_case(tmp_path, path))
    failures = []
    with np.errstate(all="ignore"):
        run_sequence(m, lambda fn: ms.jit(fn, jit_level=level, exec_mode=exec_mode), change, failures)
    assert not failures, f"{path} / {change} / {level} / {exec_mode}:\n  " + "\n  ".join(failures)


# --- immutable values are folded and guarded: changing them recompiles --------------------------

IMMUTABLE = {
    "int_global": ("N = 2\ndef f(x):\n    return x * N + N\n", "N", 5),
    "float_global": ("S = 0.5\ndef f(x):\n    return x * S\n", "S", -3.25),
    "str_global": ("MODE = 'double'\ndef f(x):\n    if MODE == 'double':\n        return x * 2\n"
                   "    return x + 100\n", "MODE", "shift"),
    "tuple_global": ("T = (1, 2.0)\ndef f(x):\n    return x * T[0] + T[1]\n", "T", (3, -1.0)),
    "none_global": ("OPT = None\ndef f(x):\n    if OPT is None:\n        return x * 2\n    return x + OPT\n",
                    "OPT", 7),
    "int_module_attr": ("import {helper} as H\ndef f(x):\n    return x * H.K\n", "H.K", 9),
    "int_class_attribute": ("class C:\n    k = 2\ndef f(x):\n    return x * C.k\n", "C.k", 4),
    "float_object_attribute": ("class Holder:\n    pass\nOBJ = Holder()\nOBJ.k = 1.5\n"
                               "def f(x):\n    return x * OBJ.k\n", "OBJ.k", 2.5),
    "int_closure": ("def make():\n    k = 2\n    def f(x):\n        return x * k\n    return f\nf = make()\n",
                    "f.__closure__[0].cell_contents", 6),
    "int_default": ("def f(x, k=2):\n    return x * k\n", "f.__defaults__", (11,)),
    "float_global_becomes_array": ("S = 0.5\ndef f(x):\n    return x * S\n", "S", np.array([1.0, -2.0, 4.0])),
    "int_cell_attribute": ("class Net(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
                           "        self.k = 2\n    def construct(self, x):\n        return x * self.k\nf = Net()\n",
                           "f.k", 5),
    "str_default": ("def f(x, how='add'):\n    if how == 'add':\n        return x + 1\n    return x * 10\n",
                    "f.__defaults__", ("mul",)),
}


@pytest.mark.parametrize("exec_mode", MODES)
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("path", list(IMMUTABLE))
def test_folded_immutable_values_are_guarded(path, level, exec_mode, tmp_path):
    source, target, new_value = IMMUTABLE[path]
    n = next(_counter)
    helper = f"stale_helper_imm_{n}"
    (tmp_path / f"{helper}.py").write_text("K = 3\n")
    module = f"stale_imm_{path}_{n}"
    (tmp_path / f"{module}.py").write_text(PRELUDE + source.replace("{helper}", helper))
    m = import_case(tmp_path, module)
    jitted = ms.jit(m.f, jit_level=level, exec_mode=exec_mode)
    x = np.array([1.0, 2.0, 3.0])
    failures = []
    check_call(jitted, m.f, (x,), "first call", failures, [])
    owner, _, attr = target.rpartition(".")
    setattr(eval(owner, vars(m)) if owner else m, attr, new_value)
    check_call(jitted, m.f, (x,), f"after {target} = {new_value!r}", failures, [])
    check_call(jitted, m.f, (x,), "again", failures, [])
    assert not failures, f"{path} / {level} / {exec_mode}:\n  " + "\n  ".join(failures)


# --- writes through a path land in the caller's object, once per call, and later reads see them ----
# Reduced from programs tests/test_program_generator.py found. Each module is imported twice (an eager
# world and a compiled one); after every call the data reached through the path must be equal.

WRITES = {
    "global_augmented": ("G = np.zeros(3)\ndef f(x):\n    G[...] += 2.0\n    return x\n", "G"),
    "global_out_keyword": ("G = np.linspace(-1.0, 1.0, 3)\ndef f(x):\n    np.tanh(G, out=G)\n    return x\n", "G"),
    "object_attribute_out_keyword": ("class Holder:\n    pass\nOBJ = Holder()\nOBJ.w = np.ones(3)\n"
                                     "def f(x):\n    np.add(OBJ.w, OBJ.w, out=OBJ.w)\n    return x\n", "OBJ.w"),
    "global_read_after_write": ("G = np.ones(3)\ndef f(x):\n    G[...] -= 0.5\n    x[1] += G[0]\n    return x\n",
                                "G"),
    "closure_write_in_unrolled_loop": ("def make():\n    c = np.zeros(3)\n    def f(x):\n        for i in range(3):\n"
                                       "            c[1] += 2\n        return x\n    return f\nf = make()\n",
                                       "f.__closure__[0].cell_contents"),
    "dict_argument_view_write": ("D = {'b': np.ones(3)}\ndef f(x, d):\n    v = d['b'][1:]\n    v += 2.0\n    return x\n",
                                 "D['b']"),
    "dict_argument_write_under_branch": ("D = {'a': np.ones(3), 'b': np.ones(3)}\ndef f(x, d):\n"
                                         "    if d['b'].sum() > 0:\n        d['a'][...] *= 1.5\n    return x\n", "D['a']"),
    "argument_positional_out": ("def f(x, d):\n    np.negative(x, x)\n    return x.sum()\n", "X"),
    "list_argument_positional_out_in_loop": ("L = [np.zeros(3)]\ndef f(x, d):\n    for i in range(3):\n"
                                             "        np.add(L[0], 1.0, L[0])\n    return x\n", "L[0]"),
    "default_argument_augmented": ("def f(x, w=np.zeros(3)):\n    w += 1.0\n    return x\n", "f.__defaults__[0]"),
}


@pytest.mark.parametrize("exec_mode", MODES)
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("case", list(WRITES))
def test_writes_through_paths_match_eager(case, level, exec_mode, tmp_path):
    source, target = WRITES[case]
    worlds = []
    for world in ("eager", "compiled"):
        module = f"stale_write_{case}_{world}_{next(_counter)}"
        (tmp_path / f"{module}.py").write_text(PRELUDE + "X = np.arange(3.0)\nD = globals().get('D', {})\n" + source)
        worlds.append(import_case(tmp_path, module))
    eager, compiled = worlds
    jitted = ms.jit(compiled.f, jit_level=level, exec_mode=exec_mode)
    takes_dict = "d" in inspect.signature(eager.f).parameters
    failures = []
    for step in range(2):
        args = [(m.X, m.D) if takes_dict else (m.X,) for m in worlds]
        expected = eager.f(*args[0])
        try:
            actual = jitted(*args[1])
        except Exception as e:  # noqa: BLE001
            failures.append(f"call {step + 1}: raised {type(e).__name__}: {e}")
            continue
        why = difference(actual, expected)
        if why:
            failures.append(f"call {step + 1}: result {why}")
        why = difference(eval(target, vars(compiled)), eval(target, vars(eager)))
        if why:
            failures.append(f"call {step + 1}: {target} {why}")
    assert not failures, f"{case} / {level} / {exec_mode}:\n  " + "\n  ".join(failures)


# --- arrays built while compiling are fresh at every call ---------------------------------------

BUILT = {
    "zeros_returned": "def f(n):\n    z = np.zeros(3)\n    z[0] = n\n    return z\n",
    "zeros_mutated_by_caller": "def f(n):\n    return np.zeros(3) + 0 * n\n",
    "mgrid_shape_assigned": ("def f(xn, yn):\n    Xi, Yi = np.mgrid[0:xn, 0:yn]\n    Xi.shape = xn * yn\n"
                             "    Yi.shape = xn * yn\n    Xi[0] += 1\n    return Xi + 10 * Yi\n"),
    "arange_written": "def f(n):\n    a = np.arange(4.0)\n    a[n % 4] += 100\n    return a.sum(), a\n",
    "constant_list_array": "def f(n):\n    a = np.array([1.0, 2.0, 3.0])\n    a *= n\n    return a\n",
}


@pytest.mark.parametrize("exec_mode", MODES)
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("case", list(BUILT))
def test_arrays_built_while_compiling_are_fresh(case, level, exec_mode, tmp_path):
    module = f"stale_built_{case}_{next(_counter)}"
    (tmp_path / f"{module}.py").write_text(PRELUDE + BUILT[case])
    m = import_case(tmp_path, module)
    jitted = ms.jit(m.f, jit_level=level, exec_mode=exec_mode)
    args = (2, 3) if case.startswith("mgrid") else (2,)
    failures, previous = [], []
    for step in range(3):
        check_call(jitted, m.f, args, f"call {step}", failures, previous)
        for result in previous:       # the caller writes into what it got back
            result[...] = -7
    assert not failures, f"{case} / {level} / {exec_mode}:\n  " + "\n  ".join(failures)


# --- a second process loads the entries from disk and changes the data there --------------------

DISK_CASES = [("dict_argument", "O1"), ("list_argument", "O1"), ("module_global", "O0"), ("module_global", "O1"),
              ("module_global", "O2"), ("module_attr", "O1"), ("class_attribute", "O2"),
              ("object_attribute_global", "O1"), ("closure_cell", "O1"), ("default_argument", "O1"),
              ("cell_weight", "O1"), ("cell_private_array", "O2")]

DISK_SCRIPT = """
import json, sys
sys.path.insert(0, {directory!r})
import numpy as np
import graphjit as ms
sys.path.insert(0, {tests!r})
import test_staleness as t

results = {{}}
for name, module, level in {cases!r}:
    m = __import__(module)
    jitted = {{"with": ms.jit(m.f_with, jit_level=level), "alone": ms.jit(m.f_alone, jit_level=level)}}
    failures = []
    variants = {{"with": (jitted["with"], m.f_with, lambda: m.args_with(t.X.copy())),
                "alone": (jitted["alone"], m.f_alone, m.args_alone)}}
    previous = {{"with": [], "alone": []}}
    steps = ["first call"] if {phase!r} == "write" else ["first call", "rebind_same", "in_place", "rebind_shape"]
    for step in steps:
        if step != "first call":
            t.CHANGES[step](m)
        for key, (j, fn, args) in variants.items():
            t.check_call(j, fn, args(), f"f_{{key}} after {{step}}", failures, previous[key])
    info = {{key: j.cache_info() for key, j in jitted.items()}}
    results[name + "/" + level] = {{"failures": failures, "disk_loads": {{k: i["disk_loads"] for k, i in info.items()}},
                                   "compiles": {{k: i["compiles"] for k, i in info.items()}}}}
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def second_process_results(tmp_path_factory):
    """Process 1 compiles every disk case and writes the cache; process 2 loads, changes and calls."""
    directory = tmp_path_factory.mktemp("stale_disk")
    cases = [(f"{name}/{level}", write_case(directory, name), level) for name, level in DISK_CASES]
    cases = [(key.split("/")[0], module, level) for key, module, level in cases]
    env = dict(os.environ, GRAPHJIT_CACHE_DIR=str(directory / "cache"))
    env.pop("GRAPHJIT_CACHE", None)
    outputs = {}
    for phase in ("write", "load"):
        script = DISK_SCRIPT.format(directory=str(directory), tests=os.path.dirname(__file__), cases=cases,
                                    phase=phase)
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env)
        assert proc.returncode == 0, proc.stderr
        outputs[phase] = json.loads(proc.stdout.strip().splitlines()[-1])
    return outputs


@pytest.mark.xdist_group("staleness_disk")   # one worker runs the two processes once (--dist loadgroup)
@pytest.mark.parametrize("name,level", DISK_CASES)
def test_entries_loaded_from_disk_read_data_at_call_time(name, level, second_process_results):
    key = f"{name}/{level}"
    written, loaded = second_process_results["write"][key], second_process_results["load"][key]
    assert not written["failures"], f"{key} (first process):\n  " + "\n  ".join(written["failures"])
    problems = [f"f_{variant} was not loaded from disk (disk_loads=0, compiles={loaded['compiles'][variant]})"
                for variant, n in loaded["disk_loads"].items() if n == 0]
    problems += loaded["failures"]
    assert not problems, f"{key} (second process):\n  " + "\n  ".join(problems)


# --- data reached through an inlined helper: its mutable default, its closure cell ----------------
def _accumulate(x, buffer=np.zeros(3)):
    buffer += x            # Python shares the default between calls: the changes accumulate
    return buffer.sum()


def _make_scaled():
    scale, offset = 2.0, np.ones(3)

    def scaled(x):
        return x * scale + offset

    def rebind(new_scale, new_offset):
        nonlocal scale, offset
        scale, offset = new_scale, new_offset

    return scaled, rebind, offset


_scaled, _rebind_scaled, _offset = _make_scaled()


def uses_a_helper_default(x):
    return _accumulate(x)


def uses_a_helper_closure(x):
    return _scaled(x)


@pytest.mark.parametrize("exec_mode", MODES)
@pytest.mark.parametrize("level", LEVELS)
def test_a_helpers_default_and_closure_are_read_at_call_time(level, exec_mode):
    jitted_default = ms.jit(uses_a_helper_default, jit_level=level, exec_mode=exec_mode)
    x = np.arange(3.0)
    _accumulate.__defaults__[0][...] = 0.0
    eager = [uses_a_helper_default(x) for _ in range(3)]
    _accumulate.__defaults__[0][...] = 0.0
    assert [jitted_default(x) for _ in range(3)] == eager == [3.0, 6.0, 9.0]

    jitted_closure = ms.jit(uses_a_helper_closure, jit_level=level, exec_mode=exec_mode)
    _rebind_scaled(2.0, np.ones(3))
    np.testing.assert_array_equal(jitted_closure(x), uses_a_helper_closure(x))
    _rebind_scaled(5.0, np.full(3, 7.0))          # the cell rebound to another number and array
    np.testing.assert_array_equal(jitted_closure(x), x * 5.0 + 7.0)
    _rebind_scaled(5.0, np.full(4, 1.0))          # another shape: recompiles
    np.testing.assert_array_equal(jitted_closure(np.arange(4.0)), np.arange(4.0) * 5.0 + 1.0)
