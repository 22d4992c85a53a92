"""Three semantic gaps that once made compiled code silently differ from eager Python.

1. A loop variable read after a run-time loop that ran zero times raises UnboundLocalError (it
   used to be `None`), and keeps its old value when it was bound before the loop.
2. An index read, integer division or conversion whose value is unused still raises what eager
   raises: dead code elimination keeps an op that may raise (the op table's `domain` fact).
3. A write through `np.einsum("ii->i", a)`, a view of `a`, is a write to `a` for the alias
   analysis (the op table's `result` fact, `views_any`), so the vectorizer keeps the loop's order.

Each case runs eagerly and compiled at O0/O1/O2, through the generated code and the interpreter,
at every syntax level that compiles it: same result, same argument mutation or same exception.
"""

import copy
import warnings

import numpy as np
import pytest

import graphjit
from graphjit import JitConfig
from graphjit.graph import alias
from graphjit.graph.ops import OPS

LEVELS = ["O0", "O1", "O2"]
MODES = ["auto", "no_sink"]
SYNTAX = ["strict", "lax"]


def _outcome(fn, args):
    try:
        return "value", fn(*args)
    except Exception as e:  # noqa: BLE001 - the exception is the outcome compared
        return type(e), str(e)


def assert_same_as_eager(fn, args, jit_level, exec_mode, syntax="strict"):
    """Compiled `fn` returns (or raises) exactly what eager `fn` does, and mutates its arguments alike."""
    eager_args, compiled_args = copy.deepcopy(args), copy.deepcopy(args)
    expected = _outcome(fn, eager_args)
    config = JitConfig(jit_level=jit_level, exec_mode=exec_mode, jit_syntax_level=syntax)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        actual = _outcome(graphjit.jit(fn, jit_config=config), compiled_args)
    assert actual[0] == expected[0], f"compiled gave {actual}, eager {expected}"
    if expected[0] == "value":
        np.testing.assert_equal(actual[1], expected[1])
    else:
        assert actual[1] == expected[1]
    for a, e in zip(compiled_args, eager_args):
        if isinstance(e, np.ndarray):
            np.testing.assert_array_equal(a, e)


def every_config(test):
    test = pytest.mark.parametrize("syntax", SYNTAX)(test)
    test = pytest.mark.parametrize("exec_mode", MODES)(test)
    return pytest.mark.parametrize("jit_level", LEVELS)(test)


# --- 3. einsum may be a view of its operands ---------------------------------------------------
def einsum_diag_chain(x):
    a = x.copy()
    d = np.einsum("ii->i", a)
    for i in range(1, d.shape[0]):
        d[i] = a[i - 1, i - 1] + 1.0   # reads what the previous iteration wrote through `d`
    return a


def einsum_diag_read_through_view(x):
    a = x.copy()
    d = np.einsum("ii->i", a)
    for i in range(1, a.shape[0]):
        a[i, i] = d[i - 1] + 1.0       # reads through `d` what the previous iteration wrote to `a`
    return a


def einsum_diag_fresh_base(x):
    a = np.zeros((x.shape[0], x.shape[0]))
    d = np.einsum("ii->i", a)
    for i in range(1, x.shape[0]):
        d[i] = a[i - 1, i - 1] + x[i]
    return a


def einsum_diag_setitem(x):
    a = x.copy()
    d = np.einsum("ii->i", a)
    d[0] = 5.0
    return a


def einsum_diag_augmented(x):
    a = x.copy()
    d = np.einsum("ii->i", a)
    before = a.sum()
    d += 1
    return before, a.sum(), a


def einsum_diag_loop_then_read(x):
    a = x.copy()
    d = np.einsum("ii->i", a)
    b = a + 0.0
    for i in range(d.shape[0]):
        d[i] = -1.0
    c = a + 0.0
    return b, c


EINSUM_CASES = [einsum_diag_chain, einsum_diag_read_through_view, einsum_diag_fresh_base, einsum_diag_setitem,
                einsum_diag_augmented, einsum_diag_loop_then_read]


@pytest.mark.parametrize("fn", EINSUM_CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("exec_mode", MODES)
@pytest.mark.parametrize("jit_level", LEVELS)
def test_write_through_einsum_view_is_a_write_to_its_operand(fn, jit_level, exec_mode):
    x = np.arange(16.0).reshape(4, 4) if fn is not einsum_diag_fresh_base else np.arange(4.0)
    assert_same_as_eager(fn, (x,), jit_level, exec_mode)


def test_both_alias_queries_read_einsum_as_a_possible_view():
    """The op table says einsum may view any operand; the alias analysis does not call its result fresh."""
    assert OPS["einsum"].result == "views_any" and not OPS["einsum"].fresh
    graph = graphjit.jit(einsum_diag_fresh_base, jit_level="O0").graph(np.arange(4.0))
    einsum = next(n for n in graph.nodes if n.op == "einsum")
    base = next(n for n in graph.nodes if n.op == "zeros")
    assert alias.may_alias(einsum, base)
    from graphjit.graph.alias import Aliases
    assert base.id in Aliases(graph).of(einsum)


# --- 2. an unused value that may raise still raises ---------------------------------------------
def unused_read_out_of_range(x):
    flag = x[5]
    return x * 2


def unused_read_runtime_index(x, i):
    flag = x[i]
    return x * 2


def unused_read_in_loop(x):
    for i in range(x.shape[0]):
        ahead = x[i + 1]
    return x


def unused_floordiv(x, a, b):
    q = a // b
    return x * 2


def unused_mod(x, a, b):
    r = a % b
    return x * 2


def unused_truediv(x, a, b):
    r = a / b
    return x * 2


def unused_int_of_nan(x):
    v = int(x[0])
    return x * 2


def unused_bad_reshape(x):
    y = x.reshape(4, 4)
    return x


def unused_negative_zeros(x, n):
    y = np.zeros(n)
    return x


def unused_max_of_empty(x):
    m = x[:0].max()
    return x


def unused_division_in_vectorizable_loop(x, y):
    for i in range(x.shape[0]):
        q = 7 // int(x[i])
        y[i] = x[i] * 2.0
    return y


def unused_read_in_branch_of_vectorizable_loop(x, y):
    for i in range(x.shape[0]):
        if x[i] > 0:
            ahead = x[i + 2]
        y[i] = x[i] * 2.0
    return y


def first_error_wins(x, i):
    b = x[i]      # raises first
    a = x[7]      # unused, raises too
    return b


MAY_RAISE_CASES = [
    (unused_read_out_of_range, (np.zeros(3),)), (unused_read_runtime_index, (np.zeros(3), 5)),
    (unused_read_runtime_index, (np.zeros(3), -4)), (unused_read_in_loop, (np.zeros(3),)),
    (unused_floordiv, (np.zeros(3), 1, 0)), (unused_mod, (np.zeros(3), 1, 0)), (unused_truediv, (np.zeros(3), 1.0, 0.0)),
    (unused_int_of_nan, (np.array([np.nan]),)), (unused_bad_reshape, (np.zeros(3),)),
    (unused_negative_zeros, (np.zeros(3), -1)), (unused_max_of_empty, (np.zeros(3),)),
    (unused_division_in_vectorizable_loop, (np.array([1.0, 0.0, 2.0]), np.zeros(3))),
    (unused_division_in_vectorizable_loop, (np.array([1.0, 3.0, 2.0]), np.zeros(3))),
    (unused_read_in_branch_of_vectorizable_loop, (np.array([1.0, -1.0, -2.0]), np.zeros(3))),
    (unused_read_in_branch_of_vectorizable_loop, (np.array([-1.0, -1.0, 2.0]), np.zeros(3))),
    (first_error_wins, (np.zeros(3), 10)),
]


@pytest.mark.parametrize("case", range(len(MAY_RAISE_CASES)),
                         ids=[f"{f.__name__}-{k}" for k, (f, _) in enumerate(MAY_RAISE_CASES)])
@every_config
def test_unused_value_that_may_raise_still_raises(case, jit_level, exec_mode, syntax):
    fn, args = MAY_RAISE_CASES[case]
    assert_same_as_eager(fn, args, jit_level, exec_mode, syntax)


def unused_reads_that_cannot_raise(x):
    a = x[1]
    b = x[-3]
    c = x[1:100]
    d = x[None, ..., 2]
    e = x.reshape(3, 1)
    return x * 2


@pytest.mark.parametrize("jit_level", ["O1", "O2"])
def test_unused_reads_that_cannot_raise_are_still_removed(jit_level):
    """Static in-range indices and slices never raise: dead code elimination still drops them."""
    graph = graphjit.jit(unused_reads_that_cannot_raise, jit_level=jit_level).graph(np.zeros(3))
    assert [n.op for n in graph.nodes if n.op not in ("const",)] == ["mul"]
    source = graphjit.jit(unused_reads_that_cannot_raise, jit_level=jit_level).source(np.zeros(3))
    assert "x[" not in source and "reshape" not in source


def test_kept_read_is_in_the_generated_code():
    source = graphjit.jit(unused_read_in_loop, jit_level="O2").source(np.zeros(3))
    assert "x[i + 1]" in source


def bad_reshape_in_loop_that_may_not_run(x, k):
    acc = np.zeros(3)
    for i in range(int(k[0])):
        y = x.reshape(4, 4)
        acc = acc + y[0, :3]
    return acc


@pytest.mark.parametrize("exec_mode", MODES)
@pytest.mark.parametrize("jit_level", LEVELS)
def test_hoisting_does_not_raise_where_the_loop_never_ran(jit_level, exec_mode):
    """LICM asks the op table too: a reshape to another size may raise, so it stays in the loop."""
    for runs in (0.0, 2.0):
        assert_same_as_eager(bad_reshape_in_loop_that_may_not_run, (np.zeros(3), np.array([runs])), jit_level,
                             exec_mode)


def test_division_and_domain_ops_in_the_op_table():
    DIVISION_OPS = {name for name, d in OPS.items() if d.domain == "division"}
    DOMAIN_OPS = {name for name, d in OPS.items() if d.domain == "domain"}
    assert DIVISION_OPS == {"truediv", "floordiv", "mod", "divide", "true_divide", "floor_divide", "np_mod", "fmod"}
    assert DOMAIN_OPS == {"log", "log2", "log10", "log1p", "sqrt", "arcsin", "arccos", "arccosh", "arctanh", "power",
                          "float_power", "reciprocal", "pow"}


# --- 1. a name a loop may leave unbound raises UnboundLocalError when read ----------------------
def inner_loop_never_ran(x, n):
    for i in range(n):
        for j in range(i + 1, n):
            x[j] += 1.0
    return j


def inner_loop_over_static_outer(x):
    for i in range(3):
        for j in range(i + 1, x.shape[0]):
            x[j] += 1.0
    return j


def inner_loop_then_arithmetic(x):
    n = x.shape[0]
    for i in range(n):
        for j in range(i + 1, n):
            x[j] += 1.0
    return i + j


def inner_rows_loop(x, n):
    for i in range(3):
        for row in x[i * n:]:
            row += 1.0
    return row


def inner_loop_with_break(x):
    for i in range(x.shape[0]):
        for j in range(i + 1, x.shape[0]):
            if x[j] > 5:
                break
    return j


def inner_while_loop(x, n):
    for i in range(3):
        k = i
        while k < n:
            last = x[k]
            k += 1
            if last > 100:
                break
    return last


def assigned_in_one_branch(x):
    for i in range(x.shape[0]):
        if x[i] > 0:
            j = i
    return j


def read_before_first_assignment(x):
    for i in range(3):
        if x[i] > 0:
            x[i] = j + 1.0   # unbound on the first iteration
        j = i
    return j


def bound_before_keeps_its_value(x, n):
    j = 10
    for i in range(3):
        for j in range(i + 1, n):
            x[j] += 1.0
    return j


def may_hold_none(x):
    for i in range(3):
        if x[i] > 0:
            j = None
    return j


def read_by_nested_function(x, n):
    for i in range(3):
        for j in range(i + 1, n):
            x[j] += 1.0

    def twice():
        return j * 2
    return twice()


UNBOUND_CASES = [
    (inner_loop_never_ran, (np.zeros(3), 1)), (inner_loop_never_ran, (np.zeros(3), 3)),
    (inner_loop_over_static_outer, (np.zeros(1),)), (inner_loop_over_static_outer, (np.zeros(4),)),
    (inner_loop_then_arithmetic, (np.zeros(1),)), (inner_loop_then_arithmetic, (np.zeros(3),)),
    (inner_rows_loop, (np.ones((4, 2)), 2)), (inner_rows_loop, (np.ones((4, 2)), 1)),
    (inner_loop_with_break, (np.zeros(1),)), (inner_loop_with_break, (np.arange(9.0),)),
    (inner_while_loop, (np.zeros(5), 0)), (inner_while_loop, (np.arange(5.0), 4)),
    (assigned_in_one_branch, (np.zeros(3),)), (assigned_in_one_branch, (np.array([-1.0, 2.0, -1.0]),)),
    (read_before_first_assignment, (np.ones(3),)), (read_before_first_assignment, (np.array([-1.0, 1.0, 1.0]),)),
    (bound_before_keeps_its_value, (np.zeros(3), 1)), (bound_before_keeps_its_value, (np.zeros(3), 3)),
    (may_hold_none, (np.ones(3),)), (may_hold_none, (-np.ones(3),)),
    (read_by_nested_function, (np.zeros(3), 1)), (read_by_nested_function, (np.zeros(3), 3)),
]


@pytest.mark.parametrize("case", range(len(UNBOUND_CASES)),
                         ids=[f"{f.__name__}-{k}" for k, (f, _) in enumerate(UNBOUND_CASES)])
@every_config
def test_name_a_loop_left_unbound_raises(case, jit_level, exec_mode, syntax):
    fn, args = UNBOUND_CASES[case]
    assert_same_as_eager(fn, args, jit_level, exec_mode, syntax)


def bounds_read_from_data(x):
    n = int(x[0])
    for i in range(3):
        for j in range(i + 1, n):
            x[j] += 1.0
    return j


@pytest.mark.parametrize("exec_mode", MODES)
def test_unbound_raises_on_a_later_call_too(exec_mode):
    """One compiled entry serves both: bound on one call, unbound on the next."""
    jitted = graphjit.jit(bounds_read_from_data, jit_level="O2", exec_mode=exec_mode)
    assert jitted(np.array([4.0, 0.0, 0.0, 0.0])) == 3
    with pytest.raises(UnboundLocalError, match="cannot access local variable 'j' where it is not associated"):
        jitted(np.array([1.0, 0.0, 0.0, 0.0]))
    assert jitted.cache_info()["compiles"] == 1


def surely_assigned(x):
    for i in range(3):
        s = x[i] * 2.0
    return s


def test_surely_assigned_name_is_not_tested():
    """A loop that surely runs and surely assigns: no run-time test in the generated code."""
    source = graphjit.jit(surely_assigned, jit_level="O1").source(np.ones(3))
    assert "isinstance" not in source and "UnboundLocalError" not in source


def test_lax_fallback_reads_a_maybe_unbound_name_as_python_does():
    def show(x, n):
        for i in range(3):
            for j in range(i + 1, n):
                x[j] += 1.0
        print("j is", j)
        return x

    for exec_mode in MODES:
        assert_same_as_eager(show, (np.zeros(3), 1), "O1", exec_mode, "lax")
