"""Staleness of containers: a dict, set or list the caller changes in place between calls.

The first rule (docs/architecture.md): only immutable values are folded, each under a guard. A dict,
set or list read at compile time is mutable: whatever the front end folds from it (its keys, its
literal items, `**d` in a call, `tuple(d)`, `sorted(s)`) must be guarded on exactly that, and its
arrays read at call time. Each case is a small module with `f(x)` and the statements that change
its data between calls (run in the module's namespace); every call must equal eager Python, at
O0/O1/O2, through the generated code and through the interpreter, with the disk cache on.
"""

import itertools

import numpy as np
import pytest

import graphjit as ms

from test_staleness import LEVELS, MODES, PRELUDE, check_call, import_case

_counter = itertools.count()

SCALE = "def scale(x, factor=1.0):\n    return x * factor\n"

CASES = {
    # `**kw` of a global dict of literals (tests/../repros/cachebug.py, reduced): items changed, removed
    "star_star_global_dict": (SCALE + "KW = {'factor': 1.0}\ndef f(x):\n    return scale(x, **KW)\n",
                              ["KW['factor'] = 3.0", "KW['factor'] = 2", "KW.clear()",
                               "KW['factor'] = np.array([1.0, 2.0, 3.0])", "KW['factor'][0] = 7.0"]),
    "star_star_closure_dict": (SCALE + "def make(kw):\n    def f(x):\n        return scale(x, **kw)\n    return f\n"
                               "KW = {'factor': 1.0}\nf = make(KW)\n",
                               ["KW['factor'] = 3.0", "KW.clear()", "KW['factor'] = -1.5"]),
    "star_star_attribute_dict": (SCALE + "class Cfg:\n    pass\nCFG = Cfg()\nCFG.opts = {'factor': 2.0}\n"
                                 "def f(x):\n    return scale(x, **CFG.opts)\n",
                                 ["CFG.opts['factor'] = 7.0", "CFG.opts = {'factor': 9.0}"]),
    "star_star_default_dict": (SCALE + "def f(x, opts={'factor': 2.0}):\n    return scale(x, **opts)\n",
                               ["f.__defaults__[0]['factor'] = 5.0", "f.__defaults__[0].clear()"]),
    "star_star_dict_of_arrays": (SCALE + "WK = {'factor': np.ones(3)}\ndef f(x):\n    return scale(x, **WK)\n",
                                 ["WK['factor'][...] = 3", "WK['factor'] = np.full(3, 2.0)", "WK.clear()"]),
    # an object with its own `__iter__` (no `__len__`/`__getitem__`): what it yields may change
    "custom_iterable": ("class Bag:\n    def __init__(self):\n        self.items = [1.0]\n"
                        "    def __iter__(self):\n        return iter(self.items)\nBAG = Bag()\n"
                        "def f(x):\n    s = x\n    for v in BAG:\n        s = s + v\n    return s\n",
                        ["BAG.items.append(10.0)", "BAG.items = [2.0]", "BAG.items.clear()"]),
    # the keys of a global dict iterated at compile time (repros/dictbug.py): added, removed, replaced
    "tuple_of_dict_keys": ("TABLE = {'a': 1.0}\ndef f(x):\n    s = x\n    for k in tuple(TABLE):\n"
                           "        s = s + TABLE[k]\n    return s\n",
                           ["TABLE['b'] = 10.0", "del TABLE['a']", "TABLE['c'] = TABLE.pop('b')"]),
    "dict_of_arrays_keys_only": ("W = {'a': np.ones(3)}\ndef f(x):\n    s = x\n    for k in W:\n"
                                 "        s = s + len(k)\n    return s\n",
                                 ["W['bb'] = np.ones(3)", "W['ccc'] = W.pop('bb')", "W.clear()"]),
    "tuple_of_dict_of_arrays_keys": ("W = {'a': np.ones(3)}\ndef f(x):\n    return x + len(tuple(W)[-1])\n",
                                     ["W['bb'] = np.ones(3)", "W['ccc'] = W.pop('bb')"]),
    "dict_key_order": ("T = {'a': 1.0, 'bb': 2.0}\ndef f(x):\n    return x * len(tuple(T)[0]) + T['a']\n",
                       ["T['a'] = T.pop('a')", "T['bb'] = T.pop('bb')"]),   # equal dicts, keys reordered
    "dict_copy_of_dict_of_arrays": ("W = {'a': np.ones(3), 's': 2.0}\ndef f(x):\n    d = dict(W)\n"
                                    "    return x * d['s'] + d['a']\n",
                                    ["W['a'][...] = 5", "W['a'] = np.zeros(3)", "W['s'] = -1.0"]),
    "dict_value_of_another_type": ("T = {'k': 2.0, 'name': 'a'}\ndef f(x):\n    return x.astype(np.int64) * T['k']\n",
                                   ["T['k'] = 2", "T['k'] = True", "T['k'] = 2.0"]),   # equal values, other dtypes
    "list_item_of_another_type": ("L = [2.0, 1]\ndef f(x):\n    return x.astype(np.int64) * L[0] + sum(L)\n",
                                  ["L[0] = 2", "L[0] = 2.0", "L[1] = 1.0"]),
    "tuple_item_of_another_type": ("T = (2.0, (1, 'a'))\ndef f(x):\n    return x.astype(np.int64) * T[0] + T[1][0]\n",
                                   ["T = (2, (1, 'a'))", "T = (2, (1.0, 'a'))", "T = (2.0, (1, 'a'))"]),
    "dict_values": ("T = {'a': 1.0}\ndef f(x):\n    return x + sum(T.values()) + max(T.values())\n",
                    ["T['b'] = 10.0", "T['a'] = -3.0"]),
    "dict_membership": ("T = {'a': 1.0}\ndef f(x):\n    if 'b' in T:\n        return x + T['b']\n    return x\n",
                        ["T['b'] = 10.0", "T['b'] = 20.0", "del T['b']"]),
    "membership_in_dict_of_arrays": ("W = {'a': np.ones(3)}\ndef f(x):\n    if 'b' in W:\n        return x + W['b']\n"
                                     "    return x\n", ["W['b'] = np.full(3, 2.0)", "W['b'][...] = 4", "del W['b']"]),
    "membership_in_set_of_classes": ("KINDS = {np.float32}\ndef f(x):\n    return x * 2 if np.float64 in KINDS else x\n",
                                     ["KINDS.add(np.float64)", "KINDS.clear()"]),
    "get_of_dict_of_arrays": ("W = {'a': np.ones(3)}\ndef f(x):\n    v = W.get('b')\n    if v is None:\n"
                              "        return x\n    return x + v\n", ["W['b'] = np.full(3, 2.0)", "del W['b']"]),
    "sorted_global_set": ("NAMES = {'a'}\ndef f(x):\n    s = x\n    for n in sorted(NAMES):\n"
                          "        s = s + len(n)\n    return s\n",
                          ["NAMES.add('bb')", "NAMES.discard('a'); NAMES.add('ccc')"]),
    "set_membership_in_cell": ("class Net(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
                               "        self.skip = {'relu'}\n    def construct(self, x):\n"
                               "        if 'relu' in self.skip:\n            return x\n        return np.maximum(x, 0)\n"
                               "net = Net()\nf = net.construct\n",
                               ["net.skip.clear()", "net.skip.add('relu')"]),
    "lists_in_a_cell_tuple": ("class Net(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
                              "        self.cfg = ([1.0], [2.0])\n    def construct(self, x):\n"
                              "        s = x\n        for part in self.cfg:\n            s = s + sum(part)\n"
                              "        return s\nnet = Net()\nf = net.construct\n",
                              ["net.cfg[0].append(5.0)", "net.cfg[1][0] = -4.0", "net.cfg[1].clear()"]),
    # a list holding arrays read whole by a builtin: its arrays are read at call time
    "tuple_of_list_of_arrays": ("L = [np.ones(3)]\ndef f(x):\n    return x + sum(tuple(L))\n",
                                ["L[0][...] = 4", "L.append(np.ones(3))", "L[1] = np.full(3, 2.0)", "L.pop(0)"]),
    "list_of_list_of_arrays": ("L = [np.ones(3)]\ndef f(x):\n    return x + sum(list(L))\n",
                               ["L[0][...] = 9", "L.append(np.ones(3))", "L.pop()"]),
}


@pytest.mark.parametrize("exec_mode", MODES)
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("case", list(CASES))
def test_containers_changed_in_place_match_eager(case, level, exec_mode, tmp_path):
    source, changes = CASES[case]
    module = f"stale_container_{case}_{next(_counter)}"
    (tmp_path / f"{module}.py").write_text(PRELUDE + source)
    m = import_case(tmp_path, module)
    jitted = ms.jit(m.f, jit_level=level, exec_mode=exec_mode)
    x = np.array([2.0, -1.0, 0.5])
    failures: list = []
    check_call(jitted, m.f, (x.copy(),), "first call", failures, [])
    for change in changes:
        exec(change, vars(m))
        check_call(jitted, m.f, (x.copy(),), f"after `{change}`", failures, [])
        check_call(jitted, m.f, (x.copy(),), f"again after `{change}`", failures, [])
    assert not failures, f"{case} / {level} / {exec_mode}:\n  " + "\n  ".join(failures)


LOOP_OF_CLOSURES = SCALE + """
RESULTS = []
def run(x, level, exec_mode):
    for kw in [{'factor': 1.0}, {'factor': 3.0}, {'factor': 1.0}]:
        def f(x):
            return scale(x, **kw)
        RESULTS.append((f(x), jit(f, jit_level=level, exec_mode=exec_mode)(x)))
"""


@pytest.mark.parametrize("exec_mode", MODES)
@pytest.mark.parametrize("level", LEVELS)
def test_functions_defined_in_a_loop_over_dicts_do_not_share_entries(level, exec_mode, tmp_path):
    """repros/cachebug.py: the same `def` over another dict, jitted anew each time (the disk cache
    holds the first one's entry), gives each dict's own result."""
    module = f"stale_container_loop_{next(_counter)}"
    (tmp_path / f"{module}.py").write_text(PRELUDE + "from graphjit import jit\n" + LOOP_OF_CLOSURES)
    m = import_case(tmp_path, module)
    m.run(np.ones(2), level, exec_mode)
    for eager, compiled in m.RESULTS:
        np.testing.assert_array_equal(compiled, eager)


WRITTEN = {
    "global_dict": "COUNTS = {'n': 0}\ndef f(x):\n    COUNTS['n'] = COUNTS['n'] + 1\n    return x + COUNTS['n']\n",
    "global_set": "S = {1}\ndef f(x):\n    S.add(len(S) + 1)\n    return x + len(S)\n",
    "global_list": "L = [1.0]\ndef f(x):\n    L.append(L[-1] * 2)\n    return x + L[-1]\n",
}


@pytest.mark.parametrize("exec_mode", MODES)
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("case", list(WRITTEN))
def test_a_container_the_function_changes_is_read_at_call_time_without_recompiling(case, level, exec_mode,
                                                                                     tmp_path):
    """Its contents are not folded (guarding them would fail at every call): its identity is guarded."""
    eager, compiled = (import_case(tmp_path, _write(tmp_path, f"stale_written_{case}", WRITTEN[case]))
                       for _ in range(2))
    jitted = ms.jit(compiled.f, jit_level=level, exec_mode=exec_mode)
    x = np.array([2.0, -1.0, 0.5])
    for _ in range(4):
        np.testing.assert_array_equal(jitted(x.copy()), eager.f(x.copy()))
    assert jitted.cache_info()["compiles"] == 1


def _write(directory, name: str, source: str) -> str:
    module = f"{name}_{next(_counter)}"
    (directory / f"{module}.py").write_text(PRELUDE + source)
    return module


def set_length(x, s):
    return x + len(s)


def set_sorted(x, s):
    t = x
    for v in sorted(s):
        t = t * v
    return t


@pytest.mark.parametrize("exec_mode", MODES)
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("fn", [set_length, set_sorted])
def test_a_set_argument_changed_in_place_matches_eager(fn, level, exec_mode):
    """A set argument is keyed by its items (as a dict argument is), not by its identity."""
    jitted = ms.jit(fn, jit_level=level, exec_mode=exec_mode)
    x = np.array([2.0, -1.0, 0.5])
    s = {2}
    for change in (lambda: None, lambda: s.add(3), lambda: s.discard(2), lambda: None):
        change()
        np.testing.assert_array_equal(jitted(x.copy(), s), fn(x.copy(), s))


def test_a_generator_is_never_used_up_at_compile_time():
    """Iterating a generator while compiling would consume it: at STRICT it is an error naming the
    line, at LAX the loop runs in Python (the generator is consumed once, by the call, as eagerly)."""
    def f(x, items):
        s = x
        for v in items:
            s = s + v
        return s
    strict = ms.jit(f, jit_config=ms.JitConfig(jit_syntax_level=ms.STRICT))
    with pytest.raises(ms.GraphSyntaxError, match="cannot iterate over a `generator` from outside the function"):
        strict(np.zeros(1), (v for v in [1.0, 2.0]))
    with pytest.warns(ms.GraphjitFallbackWarning):
        got = ms.jit(f)(np.zeros(1), (v for v in [1.0, 2.0]))
    np.testing.assert_array_equal(got, [3.0])
