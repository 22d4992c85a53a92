"""transpiler/lower/function.py: a whole function lowered, again while lowering finds writes earlier reads must see."""

import types

import numpy as np
import pytest

import graphjit
from graphjit.graph.diagnostics import GraphjitFallbackWarning
from graphjit.transpiler.lower import lower_function
from graphjit.transpiler.lower.function import MAX_LOWERINGS, Findings, lower_until_settled
from lowering_testing import lowered_text

X3 = np.arange(3.0)
LOG = []


def logs(x):
    n = len(LOG)          # read before the write below is found: must still be read at call time
    LOG.append(1)
    return x + n


def generator(x):
    yield x


def test_a_container_the_function_changes_is_read_at_call_time_also_before_the_change():
    text = lowered_text(logs, X3)
    assert "param %LOG: object = globals['LOG']" in text and "%n = len(%LOG) : int" in text
    jitted = graphjit.jit(logs)
    before = len(LOG)
    np.testing.assert_array_equal(jitted(X3), X3 + before)
    np.testing.assert_array_equal(jitted(X3), X3 + before + 1)


def _state(container_writes=(), retyped=None):
    return types.SimpleNamespace(budget=types.SimpleNamespace(found={}), container_writes=set(container_writes),
                                 written_globals=set(), attr_writes=set(), mutated_attrs=set(),
                                 retyped_paths=retyped or {})


def test_lower_until_settled_lowers_again_with_what_the_last_lowering_found():
    seen = []
    results = iter([_state({1}), _state({1})])

    def lower_once(found):
        seen.append(set(found.runtime_objects))
        return "lowered", next(results)

    assert lower_until_settled(lower_once)[0] == "lowered"
    assert seen == [set(), {1}]


def test_lower_until_settled_is_bounded():
    count = iter(range(100))

    def lower_once(found):
        return None, _state({next(count)})       # always finds something new

    lower_until_settled(lower_once)
    assert next(count) == MAX_LOWERINGS


def test_findings_grow_the_retyped_paths():
    found = Findings()
    assert found.learn(_state(retyped={"globals['a']": {"shape"}}))
    assert not found.learn(_state(retyped={"globals['a']": {"shape"}}))
    assert found.retyped == {"globals['a']": {"shape"}}


def test_a_generator_runs_eagerly_at_lax():
    with pytest.warns(GraphjitFallbackWarning, match="generator function"):
        lowered = lower_function(generator, (X3,), {})
    assert lowered.eager
