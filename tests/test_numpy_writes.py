"""Every way NumPy writes memory is an effect the graph sees.

A ufunc's `out` given positionally (`np.multiply(z, z, z)`) or by keyword, `out` of other NumPy
functions, `.shape`/`.dtype`/`.strides` assignment, `np.copyto`/`put`/`place`/`putmask`,
`ufunc.at`, the in-place methods of arrays (`fill`, `sort`, `resize`, `setflags`, `itemset` where
NumPy still has it), also on arrays held in containers: each compiled function equals the same
function run eagerly, at O0/O1/O2, through the generated code and the interpreter, and the caller
sees the same writes to its arguments. The op table (graph/ops.py `writes`) says which operand a
node writes; the pass tests at the end check that DCE and CSE honour it.
"""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest

from graphjit import JitConfig, jit
from graphjit.graph import parse
from graphjit.graph.ops import OPS
from graphjit.graph.passes import cse, dce

LEVELS = ("O0", "O1", "O2")
MODES = ("auto", "no_sink")
EVERY_WAY = [(level, mode) for level in LEVELS for mode in MODES]


def assert_equal(actual, expected, what="result"):
    """Same values (NaN equal to NaN), dtypes and shapes, through tuples, lists and dicts."""
    if isinstance(expected, (tuple, list)):
        assert type(actual) is type(expected) and len(actual) == len(expected), what
        for k, (a, e) in enumerate(zip(actual, expected)):
            assert_equal(a, e, f"{what}[{k}]")
        return
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and actual.keys() == expected.keys(), what
        for k in expected:
            assert_equal(actual[k], expected[k], f"{what}[{k!r}]")
        return
    if isinstance(expected, (np.ndarray, np.generic, int, float, complex, bool)):
        a, e = np.asarray(actual), np.asarray(expected)
        assert a.dtype == e.dtype and a.shape == e.shape, f"{what}: {a.dtype}{a.shape} != {e.dtype}{e.shape}"
        assert np.array_equal(a, e, equal_nan=a.dtype.kind in "fc"), f"{what}: {actual!r} != {expected!r}"
        return
    assert actual == expected, what


def assert_matches_eager(fn, *args, level="O1", mode="auto", calls=2):
    """`fn` compiled equals `fn` eager at each call: results and the arguments after the call."""
    compiled = jit(fn, jit_config=JitConfig(jit_level=level, exec_mode=mode))
    for call in range(calls):  # the second call runs the cached entry
        eager_args, compiled_args = copy.deepcopy(args), copy.deepcopy(args)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            expected = fn(*eager_args)
            actual = compiled(*compiled_args)
        where = f"{fn.__name__} at {level}, exec_mode={mode}, call {call + 1}"
        assert_equal(actual, expected, f"{where}: result")
        assert_equal(list(compiled_args), list(eager_args), f"{where}: arguments after the call")


# --- every ufunc: `out` positionally and by keyword -----------------------------------------------
def _signature(ufunc):
    """The first loop of `ufunc` whose inputs are float64, int64 or bool; None if it has none."""
    for kinds in ("d", "l", "?", "dl?"):
        for types in ufunc.types:
            inputs = types.split("->")[0]
            if all(c in kinds for c in inputs):
                return types
    return None


def _input(char: str, k: int):
    """A 3x3 input of the dtype `char`: 2-d so the gufuncs (`matmul`, `vecdot`...) take it too."""
    rng = np.random.default_rng(10 + k)
    if char == "d":
        return rng.uniform(0.1, 0.9, (3, 3))
    if char == "l":
        return rng.integers(1, 6, (3, 3)).astype(np.int64)
    return rng.random((3, 3)) > 0.5


UFUNCS = sorted({name for name in dir(np) if isinstance(getattr(np, name), np.ufunc)})
SWEPT = [name for name in UFUNCS if _signature(getattr(np, name)) is not None]


def test_the_sweep_covers_the_ufuncs():
    # `isnat` is the only ufunc without a float, int or bool loop (it takes datetimes)
    assert set(UFUNCS) - set(SWEPT) <= {"isnat"}
    assert len(SWEPT) >= 90


def out1_positional(uf, a, o):
    uf(a, o)
    return o


def out1_keyword(uf, a, o):
    uf(a, out=o)
    return o


def out1_local(uf, a, like):
    o = like.copy()
    uf(a, o)
    return o


def out2_positional(uf, a, b, o):
    uf(a, b, o)
    return o


def out2_keyword(uf, a, b, o):
    uf(a, b, out=o)
    return o


def out2_local(uf, a, b, like):
    o = like.copy()
    uf(a, b, o)
    return o


def out1x2_positional(uf, a, o, p):
    uf(a, o, p)
    return o, p


def out1x2_keyword(uf, a, o, p):
    uf(a, out=(o, p))
    return o, p


def out2x2_positional(uf, a, b, o, p):
    uf(a, b, o, p)
    return o, p


def out2x2_keyword(uf, a, b, o, p):
    uf(a, b, out=(o, p))
    return o, p


FORMS = {
    (1, 1): (out1_positional, out1_keyword, out1_local),
    (2, 1): (out2_positional, out2_keyword, out2_local),
    (1, 2): (out1x2_positional, out1x2_keyword),
    (2, 2): (out2x2_positional, out2x2_keyword),
}


@pytest.mark.parametrize("name", SWEPT)
def test_ufunc_out_positional_and_keyword(name):
    """Each form writes the caller's (or a local) buffer, whose result nothing else uses."""
    uf = getattr(np, name)
    inputs = [_input(c, k) for k, c in enumerate(_signature(uf).split("->")[0])]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        results = uf(*inputs)
    results = results if isinstance(results, tuple) else (results,)
    outs = [np.full_like(r, 7) for r in results]  # 7 marks what was not written
    level = LEVELS[UFUNCS.index(name) % 3]  # the levels take turns; the API tests below run them all
    for form in FORMS[(uf.nin, uf.nout)]:
        args = [uf, *inputs, *outs]
        for mode in MODES:
            assert_matches_eager(form, *args, level=level, mode=mode, calls=1)


# --- the mandelbrot loop (NPBench mandelbrot2's writes) -------------------------------------------
def mandelbrot_counts(c, iterations):
    z = np.zeros_like(c)
    alive = np.ones(c.shape, dtype=np.bool_)
    counts = np.zeros(c.shape, dtype=np.int64)
    escaped = np.zeros(c.shape, dtype=np.bool_)
    for _ in range(iterations):
        np.multiply(z, z, z)
        np.add(z, c, z)
        np.greater(np.abs(z), 2.0, escaped)
        np.logical_not(escaped, escaped)
        np.logical_and(alive, escaped, alive)
        counts += alive
        z[~alive] = 0
    return counts, z


def mandelbrot_in_place_args(z, c, m, iterations):
    for _ in range(iterations):
        np.multiply(z, z, z)
        np.add(z, c, z)
        np.logical_not(m, m)
    return m.sum()


@pytest.mark.parametrize("level, mode", EVERY_WAY)
def test_mandelbrot_loop_counts_match_eager(level, mode):
    xs, ys = np.meshgrid(np.linspace(-2.0, 0.6, 7), np.linspace(-1.2, 1.2, 5))
    c = xs + 1j * ys
    assert_matches_eager(mandelbrot_counts, c, 12, level=level, mode=mode)
    counts, _ = mandelbrot_counts(c, 12)
    assert counts.min() < counts.max() == 12  # some points escape, some never do


@pytest.mark.parametrize("level, mode", EVERY_WAY)
def test_positional_out_on_arguments_is_seen_by_the_caller(level, mode):
    c = np.linspace(-1.5, 0.5, 6) + 0.3j
    z = np.linspace(-0.5, 0.5, 6) + 0.1j
    assert_matches_eager(mandelbrot_in_place_args, z, c, np.arange(6) % 2 == 0, 3, level=level, mode=mode)


# --- `.shape`, `.dtype`, `.strides` assignment ---------------------------------------------------
def shape_then_zeros(a, n):
    a = a.copy()
    a.shape = (n, n)
    return np.zeros(a.shape)


def shape_of_argument(a, n):
    before = a.shape
    a.shape = (n, n)
    return np.zeros(a.shape) + a, before, a.sum(axis=0)


def shape_through_alias(a):
    b = a * 1.0
    c = b
    b.shape = (2, -1)
    return c.shape, np.ones(c.shape).sum(axis=1), b.ndim


def shape_in_branch(a, flat):
    b = a.copy()
    if flat:
        b.shape = (b.size,)
    return np.zeros(b.shape), b.ndim


def shape_in_loop(a, n):
    b = a.copy()
    total = 0.0
    for i in range(n):
        b.shape = (2, 3) if i % 2 == 0 else (3, 2)
        total += np.zeros(b.shape)[0].size
    return total, b.shape


def dtype_assignment(a):
    b = a * 1.0
    b.dtype = np.int64
    return b + 1, b.dtype, np.zeros(b.shape, b.dtype)


def strides_assignment(a):
    b = a * 1.0
    s = b.sum()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b.strides = (0,)
    return s, b.sum(), b + 1


@pytest.mark.parametrize("level, mode", EVERY_WAY)
def test_metadata_assignment_is_seen_by_later_reads(level, mode):
    a = np.arange(9.0)
    assert_matches_eager(shape_then_zeros, a, 3, level=level, mode=mode)
    assert_matches_eager(shape_of_argument, a, 3, level=level, mode=mode)
    assert_matches_eager(shape_through_alias, np.arange(6.0), level=level, mode=mode)
    assert_matches_eager(shape_in_branch, np.ones((2, 3)), True, level=level, mode=mode)
    assert_matches_eager(shape_in_branch, np.ones((2, 3)), False, level=level, mode=mode)
    assert_matches_eager(dtype_assignment, np.linspace(0.5, 3.0, 6), level=level, mode=mode)
    assert_matches_eager(strides_assignment, np.linspace(0.5, 3.0, 6), level=level, mode=mode)


def _set_shape(a, shape):
    a.shape = shape


def shape_in_a_helper(a):
    b = a.copy()
    _set_shape(b, (3, 3))
    return np.zeros(b.shape), b.sum(axis=1)


def shape_of_a_dict_item(d):
    d["a"].shape = (3, 3)
    return np.zeros(d["a"].shape), d["a"].sum(axis=0)


def resize_with_sizes(a):
    b = a.copy()
    b.resize(3, 3, refcheck=False)
    return np.zeros(b.shape), b.sum(axis=1)


@pytest.mark.parametrize("level, mode", EVERY_WAY)
def test_metadata_writes_reach_every_path_to_the_array(level, mode):
    """The caller's name of an array a helper reshapes, a dict item, `resize(3, 3)`."""
    a = np.arange(9.0)
    assert_matches_eager(shape_in_a_helper, a, level=level, mode=mode)
    assert_matches_eager(shape_of_a_dict_item, {"a": a}, level=level, mode=mode)
    assert_matches_eager(resize_with_sizes, a, level=level, mode=mode)


@pytest.mark.parametrize("level", LEVELS)
def test_shape_assignment_in_a_loop(level):
    assert_matches_eager(shape_in_loop, np.arange(6.0), 3, level=level)


W_RESHAPED = np.arange(6.0)


def dict_item_reshaped_in_a_loop(d, n):
    for i in range(n):
        d["a"].shape = (2, -1)
    return np.zeros(d["a"].shape), d["a"].sum(axis=-1)


def dict_item_read_before_its_reshape_in_a_loop(d, n):
    sums = []
    for i in range(n):
        sums.append(np.zeros(d["a"].shape).sum(axis=-1) + d["a"].sum(axis=-1))
        d["a"].shape = (2, -1)
    return sums[-1]


def dict_item_retyped_in_a_branch(d, n):
    if n > 1:
        d["a"].dtype = np.int64
    return d["a"] + 1, d["a"].dtype


def global_reshaped_in_a_while(n):
    i = 0
    while i < n:
        W_RESHAPED.shape = (3, -1)
        i += 1
    return np.zeros(W_RESHAPED.shape).sum(axis=-1)


@pytest.mark.parametrize("level, mode", EVERY_WAY)
def test_a_path_reshaped_in_a_loop_or_branch_is_retyped_everywhere(level, mode):
    """Reads of a dict item or a global after (and, in later iterations, before) a metadata write in a
    run-time loop or branch see its new type, as eagerly."""
    for n in (0, 1, 3):
        assert_matches_eager(dict_item_reshaped_in_a_loop, {"a": np.arange(6.0)}, n, level=level, mode=mode)
        assert_matches_eager(dict_item_read_before_its_reshape_in_a_loop, {"a": np.arange(6.0)}, max(n, 1),
                             level=level, mode=mode)
        assert_matches_eager(dict_item_retyped_in_a_branch, {"a": np.arange(6.0)}, n, level=level, mode=mode)
        W_RESHAPED.shape = (6,)
        assert_matches_eager(global_reshaped_in_a_while, n, level=level, mode=mode)
    W_RESHAPED.shape = (6,)


# --- np.copyto, put, place, putmask, ufunc.at ----------------------------------------------------
def copyto_local(a, b):
    t = a * 2.0
    before = t.sum()
    np.copyto(t, b)
    return before, t.sum(), t


def copyto_argument(a, b):
    before = a.sum()
    np.copyto(a, b, where=b > 0.5)
    return before, a.sum()


def put_local(a):
    t = a + 0.0
    before = t.sum()
    np.put(t, [0, 2], [5.0, 6.0])
    return before, t.sum()


def place_argument(a):
    before = a.sum()
    np.place(a, a > 0.5, [9.0, 8.0])
    return before, a.sum()


def putmask_local(a):
    t = a + 0.0
    before = t.max()
    np.putmask(t, t > 0.5, -t)
    return before, t.max(), t


def ufunc_at_local(a):
    t = a + 0.0
    before = t.sum()
    np.add.at(t, np.array([0, 0, 1]), 1.0)
    np.maximum.at(t, np.array([2]), 10.0)
    return before, t.sum(), t


def ufunc_at_argument(a, idx):
    before = a[0]
    np.multiply.at(a, idx, 3.0)
    return before, a[0]


def median_overwriting_its_input(a):
    t = a * 1.0
    first = t[0]
    m = np.median(t, overwrite_input=True)
    return first, m, t, np.median(a, overwrite_input=True), a


def writes_in_a_loop(a, n):
    t = a + 0.0
    seen = np.zeros(n)
    for i in range(n):
        seen[i] = t.sum()
        np.copyto(t, t * 2.0)
        np.add.at(t, np.array([0]), 1.0)
    return seen, t


@pytest.mark.parametrize("level, mode", EVERY_WAY)
def test_write_functions_are_effects(level, mode):
    r = np.random.default_rng(3).random(6)
    assert_matches_eager(copyto_local, r, r[::-1].copy(), level=level, mode=mode)
    assert_matches_eager(copyto_argument, r, r[::-1].copy(), level=level, mode=mode)
    assert_matches_eager(put_local, r, level=level, mode=mode)
    assert_matches_eager(place_argument, r, level=level, mode=mode)
    assert_matches_eager(putmask_local, r, level=level, mode=mode)
    assert_matches_eager(ufunc_at_local, r, level=level, mode=mode)
    assert_matches_eager(ufunc_at_argument, r, np.array([0, 0, 3]), level=level, mode=mode)
    assert_matches_eager(writes_in_a_loop, r, 4, level=level, mode=mode)
    assert_matches_eager(median_overwriting_its_input, np.random.default_rng(7).random(7), level=level, mode=mode)


W = np.ones(4)


def copyto_global(v):
    np.copyto(W, 5.0)
    np.add.at(W, np.array([0, 1]), 1.0)
    return W + v


def test_a_write_to_a_module_array_runs_at_every_call():
    """`np.copyto(W, 5.0)` on a module array is not run once while compiling."""
    f = jit(copyto_global)
    for _ in range(3):
        assert_equal(f(np.zeros(4)), np.array([6.0, 6.0, 5.0, 5.0]) + 0.0)
        assert_equal(W, np.array([6.0, 6.0, 5.0, 5.0]))


# --- in-place methods of arrays ------------------------------------------------------------------
def fill_local(a):
    t = a * 2.0
    before = t.sum()
    t.fill(0.5)
    return before, t.sum()


def fill_argument(a):
    before = a.sum()
    a.fill(2.0)
    return before, a.sum()


def sort_local(a):
    t = a * 2.0
    first = t[0]
    t.sort()
    return first, t[0], t


def sort_argument(a):
    first = a[0]
    a.sort()
    return first, a[0]


def resize_local(a):
    t = a * 1.0
    before = t.sum()
    t.resize((2, 3), refcheck=False)
    return before, t.sum(), t.shape, np.zeros(t.shape)


def setflags_local(a):
    t = a * 1.0
    t.setflags(write=False)
    return t


def setflags_argument(a):
    a.setflags(write=False)
    return a.sum()


def methods_in_a_loop(a, n):
    t = a * 1.0
    seen = np.zeros(n)
    for i in range(n):
        seen[i] = t[0] + t.sum()
        t.fill(float(i))
    return seen


@pytest.mark.parametrize("level, mode", EVERY_WAY)
def test_in_place_methods_are_effects(level, mode):
    r = np.random.default_rng(4).random(6)
    assert_matches_eager(fill_local, r, level=level, mode=mode)
    assert_matches_eager(fill_argument, r, level=level, mode=mode)
    assert_matches_eager(sort_local, r, level=level, mode=mode)
    assert_matches_eager(sort_argument, r, level=level, mode=mode)
    assert_matches_eager(resize_local, r, level=level, mode=mode)
    assert_matches_eager(methods_in_a_loop, r, 3, level=level, mode=mode)


@pytest.mark.parametrize("level, mode", EVERY_WAY)
def test_setflags_is_an_effect(level, mode):
    """The flag is set on the returned array and on the caller's, as eagerly."""
    config = JitConfig(jit_level=level, exec_mode=mode)
    for _ in range(2):
        result = jit(setflags_local, jit_config=config)(np.arange(4.0))
        assert_equal(result, np.arange(4.0))
        assert not result.flags.writeable
        a = np.arange(4.0)
        assert_equal(jit(setflags_argument, jit_config=config)(a), 6.0)
        assert not a.flags.writeable


def itemset_local(a):
    t = a * 1.0
    before = t.sum()
    t.itemset(0, 10.0)
    return before, t.sum()


def test_itemset_as_the_installed_numpy_has_it():
    """NumPy 2 removed `ndarray.itemset`: compiled code fails where eager Python fails."""
    a = np.arange(4.0)
    if hasattr(np.ndarray, "itemset"):
        for level in LEVELS:
            assert_matches_eager(itemset_local, a, level=level)
        return
    with pytest.raises(AttributeError):
        itemset_local(a)
    with pytest.raises(Exception, match="itemset"):
        jit(itemset_local)(a)


def container_dict(d):
    before = d["a"].sum()
    d["a"].fill(0.0)
    return before + d["a"].sum() + d["b"].sum()


def container_list(items):
    first = items[0][0]
    items[0].sort()
    return first + items[0][0]


@pytest.mark.parametrize("level, mode", EVERY_WAY)
def test_in_place_methods_of_arrays_in_containers(level, mode):
    r = np.random.default_rng(5).random(6)
    assert_matches_eager(container_dict, {"a": r, "b": r[::-1].copy()}, level=level, mode=mode)
    assert_matches_eager(container_list, [r, r * 2.0], level=level, mode=mode)


# --- `out` of other NumPy functions --------------------------------------------------------------
def reduction_out_positional(a):
    o = np.zeros(3)
    np.sum(a.reshape(2, 3), 0, None, o)
    return o


def reduction_out_keyword(a, o):
    a.reshape(2, 3).max(axis=0, out=o)
    return o.sum()


def dot_out_positional(a, b):
    o = np.zeros((2, 2))
    np.dot(a, b, o)
    return o


def clip_out_positional(a):
    o = np.zeros_like(a)
    np.clip(a, 0.2, 0.6, o)
    return o


@pytest.mark.parametrize("level, mode", EVERY_WAY)
def test_out_of_numpy_functions(level, mode):
    r = np.random.default_rng(6).random(6)
    assert_matches_eager(reduction_out_positional, r, level=level, mode=mode)
    assert_matches_eager(reduction_out_keyword, r, np.zeros(3), level=level, mode=mode)
    assert_matches_eager(dot_out_positional, r[:4].reshape(2, 2), r[2:].reshape(2, 2), level=level, mode=mode)
    assert_matches_eager(clip_out_positional, r, level=level, mode=mode)


# --- the op table says what a node writes; passes honour it --------------------------------------
def test_the_op_table_names_the_written_operands():
    g = parse(
        "graph f(%z: c128[4], %c: c128[4], %t: f64[4]) -> c128[4]\n"
        "  %0 = multiply(%z, %z, %z) : c128[4]\n"
        "  %1 = np_add(%z, %c) : c128[4]\n"
        "  %2 = copyto(%t, 1.0) : none\n"
        "  return %1\n")
    multiply, add, copyto = [n for n in g.nodes if n.op != "const"][:3]
    assert multiply.writes == (multiply.operands[2],) and multiply.out_operand is multiply.operands[2]
    assert add.writes == () and add.is_pure
    assert copyto.writes == (copyto.operands[0],) and not copyto.is_pure
    assert OPS["setitem"].writes.positions == (0,)
    assert OPS["pycall"].writes.every and OPS["call"].writes.every
    assert OPS["median"].writes((None,), {"overwrite_input": True}) == (0,)
    assert OPS["median"].writes((None,), {}) == ()


def test_dce_keeps_a_positional_out_write_whose_result_is_unused():
    text = (
        "graph f(%z: f64[4]) -> f64[]\n"
        "  %t = copy(%z) : f64[4]\n"
        "  %0 = multiply(%t, %t, %t) : f64[4]\n"
        "  %1 = sum(%t) : f64[]\n"
        "  return %1\n")
    g = parse(text)
    dce.run(g)
    assert str(g) == str(parse(text))


def test_dce_drops_a_positional_out_write_nobody_reads():
    g = parse(
        "graph f(%z: f64[4]) -> f64[]\n"
        "  %t = copy(%z) : f64[4]\n"
        "  %0 = multiply(%t, %t, %t) : f64[4]\n"
        "  %1 = sum(%z) : f64[]\n"
        "  return %1\n")
    dce.run(g)
    assert [n.op for n in g.nodes] == ["sum"]


def test_cse_does_not_merge_reads_around_a_positional_out_write():
    text = (
        "graph f(%z: f64[4]) -> tuple(f64[], f64[])\n"
        "  %0 = sum(%z) : f64[]\n"
        "  %1 = multiply(%z, %z, %z) : f64[4]\n"
        "  %2 = sum(%z) : f64[]\n"
        "  %3 = tuple(%0, %2) : tuple(f64[], f64[])\n"
        "  return %3\n")
    g = parse(text)
    assert not cse.run(g)
    assert str(g) == str(parse(text))
