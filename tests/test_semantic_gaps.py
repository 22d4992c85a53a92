"""Three semantic gaps that once made compiled code silently differ from eager Python.

1. A loop variable read after a run-time loop that ran zero times raises UnboundLocalError (it
   used to be `None`), and keeps its old value when it was bound before the loop.
2. An index read, integer division or conversion whose value is unused still raises what eager
   raises: dead code elimination keeps an op that may raise (the op table's `domain` fact).
3. A write through `np.einsum("ii->i", a)`, a view of `a`, is a write to `a` for both alias
   analyses (the op table's `views_any` fact), so the vectorizer keeps the loop's order.

Each case runs eagerly and compiled at O0/O1/O2, through the generated code and the interpreter,
at every syntax level that compiles it: same result, same argument mutation or same exception.
"""

import copy
import warnings

import numpy as np
import pytest

import graphjit
from graphjit import JitConfig
from graphjit.graph.analysis import aliasing
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


def test_both_alias_models_read_einsum_as_a_possible_view():
    """The op table says einsum may view any operand; neither analysis calls its result fresh."""
    assert OPS["einsum"].views_any and not OPS["einsum"].fresh
    assert not any(OPS[name].views_any for name in aliasing.FRESH_OPS)
    graph = graphjit.jit(einsum_diag_fresh_base, jit_level="O0").graph(np.arange(4.0))
    einsum = next(n for n in graph.nodes if n.op == "einsum")
    base = next(n for n in graph.nodes if n.op == "zeros")
    assert aliasing.may_alias(einsum, base)
    from graphjit.graph.alias import Aliases
    assert base.id in Aliases(graph).of(einsum)
