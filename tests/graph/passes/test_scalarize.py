"""Scalarization (graph/passes/scalarize.py): graph text in, graph text out, including where it must
not fire; and programs it changes give the eager result at every jit_level, both ways.

Each graph case also runs the graph before and after the pass on seeded inputs (interpreter, and the
emitted NumPy code for the result) and checks results and argument mutation agree
(tests/graph_testing.py). The programs at the end are compiled at O0, O1 and O2, through the
generated code and through the interpreter (`exec_mode="no_sink"`), and must equal eager Python
bit for bit: the pass only allows operations whose result on a Python float is the np.float64 one.
"""

import copy
import math

import numpy as np
import pytest

import graphjit
from graphjit.graph import parse
from graphjit.graph.passes import scalarize

from eager_vs_compiled import run_both
from graph_testing import assert_pass_leaves, assert_pass_output
import vector_programs as V


# --- graph text in, graph text out -----------------------------------------------------------------

def test_scalarize_runs_a_kept_loop_on_lists_and_writes_back_what_it_wrote():
    # `x` is fresh (nobody sees it before the write-back), `b` is only read: both become lists, only
    # `x` is copied back; the elements read from the lists are Python floats
    assert_pass_output(scalarize.run, """
        graph f(%b: f64[8]) -> f64[8]
          %x = zeros_like(%b) : f64[8]
          %0 = for_range(1, 8, 1, %x, %b) {carried=0, vectorize='no: carried dependence'} : tuple()
            body(%i: int, %x.1: f64[8], %b.1: f64[8]) {
              %1 = sub(%i, 1) : int
              %2 = getitem(%x.1, %1) {index=[$1]} : f64[]
              %3 = mul(0.5, %2) : f64[]
              %4 = getitem(%b.1, %i) {index=[$1]} : f64[]
              %5 = add(%3, %4) : f64[]
              %6 = setitem(%x.1, %5, %i) {index=[$2]} : none
              yield
            }
          return %x
    """, """
        graph f(%b: f64[8]) -> f64[8]
          %x = zeros_like(%b) : f64[8]
          %0 = note() {text='the loop runs on Python floats: x.tolist(), b.tolist()'} : none
          %x_l = tolist(%x) : object
          %b_l = tolist(%b) : object
          %1 = for_range(1, 8, 1, %x_l, %b_l) {carried=0, vectorize='no: carried dependence', scalar='python floats (tolist)'} : tuple()
            body(%i: int, %x.1: object, %b.1: object) {
              %2 = sub(%i, 1) : int
              %3 = getitem(%x.1, %2) {index=[$1]} : float
              %4 = mul(0.5, %3) : f64[]
              %5 = getitem(%b.1, %i) {index=[$1]} : float
              %6 = add(%4, %5) : f64[]
              %7 = setitem(%x.1, %6, %i) {index=[$2]} : none
              yield
            }
          %8 = setitem(%x, %x_l) {index=[:]} : none
          return %x
    """)


def test_scalarize_through_a_branch_a_math_call_and_an_int_carried_out():
    # reads and writes inside both branches, `math.exp`, `abs`, `min`; the carried `count` is an int,
    # which is the same value on either side, so it may leave the loop
    assert_pass_output(scalarize.run, """
        graph f(%b: f64[8]) -> tuple(f64[8], int)
          %x = zeros_like(%b) : f64[8]
          %0 = for_range(1, 8, 1, 0, %b, %x) {carried=1, vectorize='no: a branch reads `x` and writes it'} : tuple(int)
            body(%i: int, %count: int, %b.1: f64[8], %x.1: f64[8]) {
              %1 = getitem(%b.1, %i) {index=[$1]} : f64[]
              %2 = gt(%1, 0.0) : bool[]
              %3 = if(%2, %b.1, %i, %x.1, %count) : tuple(int)
                then(%b.2: f64[8], %i.1: int, %x.2: f64[8], %count.1: int) {
                  %4 = getitem(%b.2, %i.1) {index=[$1]} : f64[]
                  %5 = py_abs(%4) : f64[]
                  %6 = neg(%5) : f64[]
                  %7 = call(%6) {fn='math.exp'} : object
                  %8 = sub(%i.1, 1) : int
                  %9 = getitem(%x.2, %8) {index=[$1]} : f64[]
                  %10 = add(%7, %9) : ?[*]
                  %11 = setitem(%x.2, %10, %i.1) {index=[$2]} : none
                  %count.2 = add(%count.1, 1) : int
                  yield %count.2
                }
                else(%b.3: f64[8], %i.2: int, %x.3: f64[8], %count.3: int) {
                  %12 = sub(%i.2, 1) : int
                  %13 = getitem(%x.3, %12) {index=[$1]} : f64[]
                  %14 = getitem(%b.3, %i.2) {index=[$1]} : f64[]
                  %15 = py_min(%13, %14) : f64[]
                  %16 = mul(%15, 0.5) : f64[]
                  %17 = setitem(%x.3, %16, %i.2) {index=[$2]} : none
                  yield %count.3
                }
              %count.4 = tuple_get(%3) {index=0} : int
              yield %count.4
            }
          %count.5 = tuple_get(%0) {index=0} : int
          %18 = tuple(%x, %count.5) : tuple(f64[8], int)
          return %18
    """, """
        graph f(%b: f64[8]) -> tuple(f64[8], int)
          %x = zeros_like(%b) : f64[8]
          %0 = note() {text='the loop runs on Python floats: b.tolist(), x.tolist()'} : none
          %b_l = tolist(%b) : object
          %x_l = tolist(%x) : object
          %1 = for_range(1, 8, 1, 0, %b_l, %x_l) {carried=1, vectorize='no: a branch reads `x` and writes it', scalar='python floats (tolist)'} : tuple(int)
            body(%i: int, %count: int, %b.1: object, %x.1: object) {
              %2 = getitem(%b.1, %i) {index=[$1]} : float
              %3 = gt(%2, 0.0) : bool[]
              %4 = if(%3, %b.1, %i, %x.1, %count) : tuple(int)
                then(%b.2: f64[8], %i.1: int, %x.2: f64[8], %count.1: int) {
                  %5 = getitem(%b.2, %i.1) {index=[$1]} : float
                  %6 = py_abs(%5) : f64[]
                  %7 = neg(%6) : f64[]
                  %8 = call(%7) {fn='math.exp'} : object
                  %9 = sub(%i.1, 1) : int
                  %10 = getitem(%x.2, %9) {index=[$1]} : float
                  %11 = add(%8, %10) : ?[*]
                  %12 = setitem(%x.2, %11, %i.1) {index=[$2]} : none
                  %count.2 = add(%count.1, 1) : int
                  yield %count.2
                }
                else(%b.3: f64[8], %i.2: int, %x.3: f64[8], %count.3: int) {
                  %13 = sub(%i.2, 1) : int
                  %14 = getitem(%x.3, %13) {index=[$1]} : float
                  %15 = getitem(%b.3, %i.2) {index=[$1]} : float
                  %16 = py_min(%14, %15) : f64[]
                  %17 = mul(%16, 0.5) : f64[]
                  %18 = setitem(%x.3, %17, %i.2) {index=[$2]} : none
                  yield %count.3
                }
              %count.4 = tuple_get(%4) {index=0} : int
              yield %count.4
            }
          %19 = setitem(%x, %x_l) {index=[:]} : none
          %count.5 = tuple_get(%1) {index=0} : int
          %20 = tuple(%x, %count.5) : tuple(f64[8], int)
          return %20
    """)


def _kept_loop(stmts: str, *, header="graph f(%b: f64[8]) -> f64[8]", loop="for_range(1, 8, 1, %x, %b)",
               attrs="carried=0, vectorize='no: carried dependence'", args="%i: int, %x.1: f64[8], %b.1: f64[8]",
               result="tuple()", before="%x = zeros_like(%b) : f64[8]", after="return %x") -> str:
    """A graph with one loop the vectorizer kept, around `stmts` (the body's nodes, one a line)."""
    body = "\n".join("      " + line.strip() for line in stmts.strip().splitlines())
    return "\n".join([header, "  " + before, f"  %0 = {loop} {{{attrs}}} : {result}", f"    body({args}) {{",
                      body, "      yield", "    }", "  " + after]) + "\n"


RECURRENCE = """
    %1 = sub(%i, 1) : int
    %2 = getitem(%x.1, %1) {index=[$1]} : f64[]
    %3 = getitem(%b.1, %i) {index=[$1]} : f64[]
    %4 = add(%2, %3) : f64[]
    %5 = setitem(%x.1, %4, %i) {index=[$2]} : none
"""


def test_the_kept_loop_helper_builds_the_loop_scalarize_changes():
    # the cases below differ from this one in one respect each, so each shows one refusal
    assert scalarize.run(parse(_kept_loop(RECURRENCE)))


@pytest.mark.parametrize("attrs", ["carried=0", "carried=0, vectorize='yes'",
                                   "carried=0, vectorize='no: carried dependence', scalar='python floats (tolist)'"],
                         ids=["not-vectorized", "vectorized", "already-scalar"])
def test_scalarize_leaves_loops_the_vectorizer_did_not_keep_or_that_run_on_floats_already(attrs):
    assert_pass_leaves(scalarize.run, _kept_loop(RECURRENCE, attrs=attrs))


def test_scalarize_runs_once():
    graph = parse(_kept_loop(RECURRENCE))
    assert scalarize.run(graph)
    once = str(graph)
    assert not scalarize.run(graph)
    assert str(graph) == once


def test_scalarize_leaves_an_array_the_caller_sees_before_the_write_back():
    # `x` is the caller's argument: were the loop to raise half-way, the caller would see the old values
    assert_pass_leaves(scalarize.run, _kept_loop(
        RECURRENCE, header="graph f(%x: f64[8], %b: f64[8]) -> f64[8]", before="%c = copy(%b) : f64[8]"))


def test_scalarize_leaves_a_write_to_memory_another_converted_array_shares():
    # `y` is `x` seen through a view: a list of `x` and a list of `y` would no longer share their elements
    assert_pass_leaves(scalarize.run, """
        graph f(%b: f64[8]) -> f64[8]
          %x = zeros_like(%b) : f64[8]
          %y = getitem(%x) {index=[:]} : f64[8]
          %0 = for_range(1, 8, 1, %x, %y) {carried=0, vectorize='no: carried dependence'} : tuple()
            body(%i: int, %x.1: f64[8], %y.1: f64[8]) {
              %1 = sub(%i, 1) : int
              %2 = getitem(%y.1, %1) {index=[$1]} : f64[]
              %3 = add(%2, 1.0) : f64[]
              %4 = setitem(%x.1, %3, %i) {index=[$2]} : none
              yield
            }
          return %x
    """)


@pytest.mark.parametrize("loop", ["for_range(%n, 8, 1, %x, %b)", "for_range(1, 3, 1, %x, %b)",
                                  "for_range(1, 1, 1, %x, %b)"],
                         ids=["run-time-start", "visits-too-little", "never-runs"])
def test_scalarize_leaves_loops_with_run_time_bounds_or_few_iterations(loop):
    # converting an array costs its whole length; a loop must visit at least half of it
    assert_pass_leaves(scalarize.run, _kept_loop(RECURRENCE, header="graph f(%b: f64[8], %n: int) -> f64[8]",
                                                 loop=loop))


@pytest.mark.parametrize("index", ["sub(7, %i) : int", "mul(%i, 1) : int", "sub(%i, 2) : int"],
                         ids=["reversed", "not-an-offset", "negative-at-the-start"])
def test_scalarize_leaves_indices_it_cannot_bound(index):
    # only `i + c`, `i - c` and constants in [0, len) are known to stay in bounds; `x[i - 2]` at i = 1
    # reads x[-1], which a list reads too, but the pass does not reason about wrapping
    assert_pass_leaves(scalarize.run, _kept_loop(f"""
        %1 = {index}
        %2 = getitem(%x.1, %1) {{index=[$1]}} : f64[]
        %3 = getitem(%b.1, %i) {{index=[$1]}} : f64[]
        %4 = add(%2, %3) : f64[]
        %5 = setitem(%x.1, %4, %i) {{index=[$2]}} : none
    """))


@pytest.mark.parametrize("dtype, element", [("f32[8]", "f32[]"), ("i64[8]", "i64[]"), ("f64[8,2]", "f64[2]")])
def test_scalarize_leaves_arrays_other_than_one_dimensional_float64(dtype, element):
    # float32 arithmetic rounds differently from Python floats; ints and 2-D arrays are not its business
    assert_pass_leaves(scalarize.run, _kept_loop(f"""
        %1 = getitem(%a.1, %i) {{index=[$1]}} : {element}
        %2 = sub(%i, 1) : int
        %3 = getitem(%x.1, %2) {{index=[$1]}} : f64[]
        %4 = setitem(%x.1, %3, %i) {{index=[$2]}} : none
    """, header=f"graph f(%b: f64[8], %a: {dtype}) -> f64[8]", loop="for_range(1, 8, 1, %x, %a)",
        args=f"%i: int, %x.1: f64[8], %a.1: {dtype}"))


@pytest.mark.parametrize("stmt", ["%3 = truediv(%2, %2) : f64[]", "%3 = pow(%2, 2.0) : f64[]",
                                  "%3 = call(%2) {fn='math.sqrt'} : object", "%3 = exp(%2) : f64[]"],
                         ids=["divide-by-a-value", "power", "math-call-that-may-raise", "numpy-ufunc"])
def test_scalarize_leaves_operations_that_differ_on_python_floats(stmt):
    # 0.0 / 0.0 raises on Python floats and warns on np.float64; math.sqrt(-1.0) raises where
    # np.sqrt returns NaN; np.exp of a Python float is an np.float64 again
    assert_pass_leaves(scalarize.run, _kept_loop(f"""
        %1 = sub(%i, 1) : int
        %2 = getitem(%x.1, %1) {{index=[$1]}} : f64[]
        {stmt}
        %4 = setitem(%x.1, %3, %i) {{index=[$2]}} : none
    """, before="%x = ones_like(%b) : f64[8]"))


def test_scalarize_leaves_an_array_the_loop_uses_whole():
    assert_pass_leaves(scalarize.run, _kept_loop("""
        %1 = sum(%b.1) : f64[]
        %2 = setitem(%x.1, %1, %i) {index=[$2]} : none
    """))


def test_scalarize_leaves_a_float_carried_out_of_the_loop():
    # after the loop it would be a Python float where eager Python has an np.float64
    assert_pass_leaves(scalarize.run, """
        graph f(%b: f64[8]) -> tuple(f64[8], f64[])
          %x = zeros_like(%b) : f64[8]
          %0 = for_range(1, 8, 1, 0.0, %x, %b) {carried=1, vectorize='no: carried dependence'} : tuple(f64[])
            body(%i: int, %s: f64[], %x.1: f64[8], %b.1: f64[8]) {
              %1 = getitem(%b.1, %i) {index=[$1]} : f64[]
              %s.1 = add(%s, %1) : f64[]
              %2 = setitem(%x.1, %s.1, %i) {index=[$2]} : none
              yield %s.1
            }
          %s.2 = tuple_get(%0) {index=0} : f64[]
          %3 = tuple(%x, %s.2) : tuple(f64[8], f64[])
          return %3
    """)


def test_scalarize_is_switched_off_by_its_environment_variable(monkeypatch):
    monkeypatch.setenv("GRAPHJIT_NO_SCALARIZE", "1")
    assert_pass_leaves(scalarize.run, _kept_loop(RECURRENCE))


# --- programs the pass changes: compiled == eager at every level, both ways ------------------------
# (and V.recurrence of tests/vector_programs.py)

def decay_and_count(b):
    x = np.zeros_like(b)
    count = 0
    for i in range(1, len(b)):
        if b[i] > 0.0:
            x[i] = math.exp(-abs(b[i])) + x[i - 1]
            count = count + 1
        else:
            x[i] = min(x[i - 1], b[i]) * 0.5
    return x, count


def smooth_between(a, w):
    x = np.empty_like(a)
    x[0] = a[0]
    for i in range(1, len(a) - 1):
        x[i] = max(x[i - 1] * w[i + 1], a[i] - w[i - 1]) / 4.0
    x[len(a) - 1] = a[len(a) - 1]
    return x


PROGRAMS = {V.recurrence: 1, decay_and_count: 1, smooth_between: 2}   # function: number of array arguments


def _arguments(fn, size, seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(size) for _ in range(PROGRAMS[fn])]


def _bits(value):
    """Type, dtype, shape and bytes of a result (of each item of a tuple): equal bits, not equal values."""
    if isinstance(value, tuple):
        return tuple(_bits(item) for item in value)
    return type(value), np.asarray(value).dtype, np.shape(value), np.asarray(value).tobytes()


@pytest.mark.parametrize("exec_mode", ["auto", "no_sink"])
@pytest.mark.parametrize("fn", list(PROGRAMS), ids=lambda fn: fn.__name__)
def test_o2_runs_the_programs_loop_on_python_floats(fn, exec_mode):
    # so that the comparison below runs code the pass changed, through both back ends
    args = _arguments(fn, 8, 0)
    jitted = graphjit.jit(fn, jit_level="O2", exec_mode=exec_mode)
    assert "scalar='python floats (tolist)'" in str(jitted.graph(*args))
    if exec_mode == "auto":
        assert ".tolist()" in jitted.source(*args)


@pytest.mark.parametrize("exec_mode", ["auto", "no_sink"])
@pytest.mark.parametrize("jit_level", ["O0", "O1", "O2"])
@pytest.mark.parametrize("size", [8, 3, 1])
@pytest.mark.parametrize("fn", list(PROGRAMS), ids=lambda fn: fn.__name__)
def test_compiled_equals_eager(fn, size, jit_level, exec_mode):
    for seed in (0, 1):
        args = _arguments(fn, size, seed)
        jitted = run_both(fn, args, jit_level=jit_level, exec_mode=exec_mode)
        # and bit for bit, beyond run_both's tolerance: the operations the pass allows keep IEEE results
        assert _bits(jitted(*copy.deepcopy(args))) == _bits(fn(*copy.deepcopy(args)))

