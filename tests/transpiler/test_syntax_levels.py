"""Every row of the syntax rule table at every level (the corpus in tests/syntax_corpus.py).

For each corpus function and each level in (STRICT, COMPATIBLE, LAX):
- accepted at that level: compiled == eager on two calls with fresh seeded inputs — return
  values (arrays: dtype, shape, values), argument mutation, printed output, module state, and
  the type and message of a raised exception — through the emitted code and the interpreter;
- rejected: `GraphSyntaxError` whose diagnostics are exactly the function's markers (code, line,
  column of the construct).
LAX accepts every function; rows above COMPATIBLE warn with GraphjitFallbackWarning there.
"""

from __future__ import annotations

import copy
import inspect
import re
import types
import warnings

import numpy as np
import pytest

import graphjit
from graphjit.graph.diagnostics import GraphSyntaxError
from graphjit.transpiler import rules
from graphjit.graph.diagnostics import GraphjitFallbackWarning

import syntax_corpus
from locations import DOCS
from syntax_corpus import CORPUS

LEVELS = rules.LEVELS
MARKER = re.compile(r"#\s*<-\s*((?:GJ\d{3}:\d+\s*)+)$")


# --- the corpus itself ----------------------------------------------------------------------------

def test_corpus_is_large_enough():
    assert len(CORPUS) >= 100


def test_every_row_is_covered():
    covered = {e.key for e in CORPUS.values()}
    missing = [r.key for r in rules.RULES if r.key not in covered]
    assert not missing, f"rows without a corpus function: {missing}"


def test_entries_name_real_rows():
    assert {e.key for e in CORPUS.values()} <= set(rules.BY_KEY)


def markers(fn) -> set:
    """{(code, line, col)} from the `# <- CODE:COL` comments in the function's source."""
    lines, first = inspect.getsourcelines(fn)
    out = set()
    for k, text in enumerate(lines):
        m = MARKER.search(text.rstrip("\n"))
        if m:
            for item in m.group(1).split():
                code, col = item.split(":")
                out.add((code, first + k, int(col)))
    return out


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_markers_match_the_row(name):
    """Rows accepted at STRICT carry no markers; the others mark their own code, at a construct."""
    entry = CORPUS[name]
    row = rules.rule(entry.key)
    found = markers(entry.fn)
    if row.level == rules.STRICT:
        assert not found
        return
    assert found and {code for code, _, _ in found} == {row.code}
    lines = dict(zip(range(inspect.getsourcelines(entry.fn)[1], 10 ** 6), inspect.getsourcelines(entry.fn)[0]))
    for _, line, col in found:
        text = lines[line]
        assert col >= 1 and not text[col - 1].isspace() and (col == 1 or not text[col - 2].isalnum()), \
            f"{name}: column {col} does not start a construct in {text!r}"


# --- comparing runs -------------------------------------------------------------------------------

def same(actual, expected, where="result"):
    """Equal as eager Python would see them: types, dtypes, shapes, values (NaN equal to NaN)."""
    if isinstance(expected, np.ndarray):
        assert isinstance(actual, np.ndarray), f"{where}: {type(actual)} is not an array"
        assert actual.dtype == expected.dtype and actual.shape == expected.shape, \
            f"{where}: {actual.dtype}{actual.shape} != {expected.dtype}{expected.shape}"
        np.testing.assert_array_equal(actual, expected, err_msg=where)
        return
    assert type(actual) is type(expected), f"{where}: {type(actual).__name__} != {type(expected).__name__}"
    if isinstance(expected, (tuple, list)):
        assert len(actual) == len(expected), f"{where}: length {len(actual)} != {len(expected)}"
        for k, (a, e) in enumerate(zip(actual, expected)):
            same(a, e, f"{where}[{k}]")
    elif isinstance(expected, dict):
        assert list(actual) == list(expected), f"{where}: keys {list(actual)} != {list(expected)}"
        for k in expected:
            same(actual[k], expected[k], f"{where}[{k!r}]")
    elif isinstance(expected, (syntax_corpus.Box,)):
        same(vars(actual), vars(expected), f"{where}.__dict__")
    elif isinstance(expected, (float, np.floating, complex, np.complexfloating)):
        assert actual == expected or (np.isnan(actual) and np.isnan(expected)), f"{where}: {actual} != {expected}"
    else:
        assert actual == expected, f"{where}: {actual!r} != {expected!r}"


def run_calls(fn, entry, capsys) -> list:
    """Two calls from a fresh module state: (outcome, arguments after, printed text, state) each."""
    syntax_corpus.reset()
    capsys.readouterr()
    runs = []
    for k in (0, 1):
        args = entry.make_args(np.random.default_rng(1000 + k), k)
        try:
            result = fn(*args)
            if isinstance(result, types.GeneratorType):
                result = ("generator", list(result))
            outcome = ("returned", result)
        except Exception as e:  # noqa: BLE001 - the exception is what is compared
            outcome = ("raised", type(e), str(e))
        runs.append((outcome, args, capsys.readouterr().out, syntax_corpus.state()))
    return runs


def compare_runs(actual: list, expected: list) -> None:
    for k, ((out_a, args_a, text_a, state_a), (out_e, args_e, text_e, state_e)) in enumerate(zip(actual, expected)):
        where = f"call {k}"
        if out_e[0] == "raised":
            assert out_a[:2] == out_e[:2] and out_a[2] == out_e[2], f"{where}: {out_a} != {out_e}"
        else:
            assert out_a[0] == "returned", f"{where}: compiled raised {out_a[1:]}, eager returned"
            same(out_a[1], out_e[1], f"{where} result")
        same(args_a, args_e, f"{where} arguments after the call")
        assert text_a == text_e, f"{where} printed {text_a!r}, eager printed {text_e!r}"
        same(state_a, state_e, f"{where} module state")


def jit_at(fn, level, exec_mode="auto"):
    return graphjit.jit(fn, jit_config=graphjit.JitConfig(jit_syntax_level=level, exec_mode=exec_mode))


# --- the corpus at every level ----------------------------------------------------------------------

@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_at_level(name, level, capsys):
    entry = CORPUS[name]
    row = rules.rule(entry.key)
    if not row.accepted_at(level):
        jitted = jit_at(entry.fn, level)
        args = entry.make_args(np.random.default_rng(1000), 0)
        syntax_corpus.reset()
        with pytest.raises(GraphSyntaxError) as info:
            jitted(*args)
        got = {(d.code, d.span.line, d.span.col) for d in info.value.diagnostics}
        files = {d.span.file for d in info.value.diagnostics}
        assert files == {entry.fn.__code__.co_filename}
        assert got == markers(entry.fn), f"diagnostics {sorted(got)}, markers {sorted(markers(entry.fn))}"
        assert all(d.severity == "error" and d.level == level for d in info.value.diagnostics)
        return
    expected = run_calls(entry.fn, entry, capsys)
    modes = ("auto", "no_sink")
    for mode in modes:
        jitted = jit_at(entry.fn, level, mode)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            actual = run_calls(jitted, entry, capsys)
        compare_runs(actual, expected)
        fallbacks = [w for w in caught if issubclass(w.category, GraphjitFallbackWarning)]
        if rules.RANK[row.level] > rules.RANK[rules.COMPATIBLE]:
            assert fallbacks, f"{name} runs at LAX without a GraphjitFallbackWarning"
            assert all(w.filename == entry.fn.__code__.co_filename for w in fallbacks)
        else:
            assert not fallbacks, f"{name} needs a fallback block at {level}: {fallbacks[0].message}"


# --- several problems, one pass ---------------------------------------------------------------------

def test_all_problems_reported_at_once():
    from syntax_fixtures import many_problems
    jitted = jit_at(many_problems, "STRICT")
    with pytest.raises(GraphSyntaxError) as info:
        jitted(np.arange(4.0))
    got = [(d.code, d.span.line, d.span.col) for d in info.value.diagnostics]
    assert sorted(got) == sorted(markers(many_problems))
    assert len({code for code, _, _ in got}) >= 5
    assert len(got) == len(set(got)), "a problem is reported twice"


def test_compatible_reports_only_lax_rows():
    from syntax_fixtures import many_problems
    jitted = jit_at(many_problems, "COMPATIBLE")
    with pytest.raises(GraphSyntaxError) as info:
        jitted(np.arange(4.0))
    got = sorted((d.code, d.span.line, d.span.col) for d in info.value.diagnostics)
    expected = sorted(m for m in markers(many_problems) if rules.BY_CODE[m[0]].level == rules.LAX)
    assert got == expected


def test_many_problems_run_at_lax(capsys):
    import syntax_fixtures
    entry = syntax_corpus.Entry("many_problems", "try", syntax_fixtures.many_problems,
                                lambda rng, k: (rng.random(4) + k,))
    expected = run_calls(entry.fn, entry, capsys)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        actual = run_calls(jit_at(entry.fn, "LAX"), entry, capsys)
    compare_runs(actual, expected)
    lax_rows = [m for m in markers(entry.fn) if rules.BY_CODE[m[0]].level == rules.LAX]
    assert sum(issubclass(w.category, GraphjitFallbackWarning) for w in caught) == len(lax_rows)


# --- programs the graph cannot follow ---------------------------------------------------------------

def _rejects(code: str, level: str) -> bool:
    """GJ001 (a lowering error) is rejected below LAX; a row's code below the row's level."""
    if code in rules.BY_CODE:
        return not rules.BY_CODE[code].accepted_at(level)
    return level != rules.LAX


def _fixture_names():
    import syntax_fixtures
    return [f.__name__ for f in syntax_fixtures.CANNOT_FOLLOW + syntax_fixtures.PROGRAMS]


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("name", _fixture_names())
def test_what_the_graph_cannot_follow(name, level, capsys):
    """A list whose length depends on a run-time branch or loop, iterating a global list the function
    changes, a name unbound on some paths: rejected (never computed differently) below LAX, run as
    fallback blocks at LAX, exactly as Python runs them (UnboundLocalError on the unbound paths).
    Also programs mixing rows: each level reports exactly the marked constructs it rejects."""
    import syntax_fixtures
    fn = getattr(syntax_fixtures, name)
    entry = syntax_corpus.Entry(name, "", fn, lambda rng, k: (rng.random(4) * 0.5 + 2 * k,))
    expected_markers = {m for m in markers(fn) if _rejects(m[0], level)}
    if expected_markers:
        with pytest.raises(GraphSyntaxError) as info:
            jit_at(fn, level)(*entry.make_args(np.random.default_rng(1000), 0))
        got = {(d.code, d.span.line, d.span.col) for d in info.value.diagnostics}
        assert got == expected_markers
        return
    expected = run_calls(fn, entry, capsys)
    for mode in ("auto", "no_sink"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            actual = run_calls(jit_at(fn, level, mode), entry, capsys)
        compare_runs(actual, expected)
        assert any(issubclass(w.category, GraphjitFallbackWarning) for w in caught)


@pytest.mark.parametrize("level", LEVELS)
def test_cell_with_python_state(level):
    """`jit` on a Cell whose construct counts its calls: its attributes change as in eager mode."""
    from syntax_fixtures import CountingCell
    eager, compiled = CountingCell(), CountingCell()
    jitted = graphjit.jit(compiled, jit_config=graphjit.JitConfig(jit_syntax_level=level))
    x = np.arange(3.0)
    if level == rules.STRICT:
        with pytest.raises(GraphSyntaxError) as info:
            jitted(x)
        got = {(d.code, d.span.line, d.span.col) for d in info.value.diagnostics}
        assert got == markers(CountingCell.construct)
        return
    for k in range(3):
        same(jitted(x + k), eager(x + k), f"call {k}")
    assert compiled.count == eager.count == 3 and compiled.seen == eager.seen


# --- the docs table -------------------------------------------------------------------------------

def test_syntax_md_is_generated_from_the_rule_table():
    import importlib.util
    docs = DOCS
    spec = importlib.util.spec_from_file_location("graphjit_docs_gen_syntax", docs / "gen_syntax.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = module.render()
    assert (docs / "syntax.md").read_text() == text, "docs/syntax.md is out of date: run `python docs/gen_syntax.py`"
    for r in rules.RULES:
        assert f"`{r.code}`" in text
    counts = rules.counts_by_level()
    for level in LEVELS:
        assert f"| {level} | {counts[level]} |" in text
