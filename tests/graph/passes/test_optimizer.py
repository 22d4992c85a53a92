"""The optimizer end to end: programs that trap careless passes, choosing the level, the manager,
dumps of every pass, the CLI, and docs/passes.md kept in step with PIPELINES."""

import math
import os
import re

import numpy as np
import pytest
from click.testing import CliRunner

import graphjit as ms
from graphjit import nn
from graphjit.cli import main
from graphjit.graph import parse, verify
from graphjit.graph.diagnostics import PassError, VerifyError
from graphjit.graph.passes import manager

from eager_vs_compiled import run_both
from locations import REPO as ROOT
from programs import CASES

LEVELS = ["O0", "O1", "O2"]
MODES = ["auto", "no_sink"]


# --- programs where a wrong optimization changes the result ------------------------------------

def scaled_copy_written(x):
    y = x * 1          # x * 1 -> x would make `y += 1` write the argument
    y += 1
    return x, y


def merged_then_written(x):
    a = x * 2          # CSE of a and b would make `b += 1` change a
    b = x * 2
    b += 1
    return a + b


def read_write_read(x):
    s = x.sum()        # the write between the two sums keeps them apart
    x[0] = 5.0
    return s + x.sum()


def view_written(x):
    v = x[1:]
    t = v * 1
    v[0] = 7.0         # a write through a view of the argument
    return t + v, x


def temporary_used_after(x):
    t = np.exp(x)
    u = t + 1.0        # t is still needed below: u must not overwrite it
    return u * t


def loop_reads_what_it_writes(x):
    out = np.zeros_like(x)
    total = 0.0
    for i in range(x.shape[0]):
        out[i] = x[i] * 2
        total = total + out.sum()   # not loop-invariant although out is captured
    return out, total


def loop_invariant(x, w):
    acc = np.zeros(w.shape[1])
    for i in range(x.shape[0]):
        acc = acc + x[i] @ (w.T * 2.0).T
    return acc


def loop_maybe_empty(x, n):
    acc = x * 0
    for i in range(n):
        acc = acc + np.exp(x) * i
    return acc


def inplace_chain(x):
    t = x @ x.T
    t += 1.0
    np.maximum(t, 0.5, out=t)
    return np.sqrt(t) - np.tanh(t)


def users_out_keyword(x):
    y = np.zeros_like(x)
    np.exp(x, out=y)   # an effect: must survive DCE
    return y


def name_clobber(x):
    y = x * 2
    y += 1
    t = y
    y = x * 3
    return t + y


def constant_folding_and_branches(x):
    n = x.shape[0] * 2
    c = np.sqrt(2.0)
    if n > 3:
        y = x * c + n
    else:
        y = x - c
    return y ** 2 + y ** 0.5 + np.transpose(np.transpose(x)) * 1


def int_dtype_kept(k):
    return k * 1.0 + (k + 0) * 1, -(-k)


def returned_twice(x):
    return x * 2, x * 2


def neg_zero(x):
    return x + 0.0


def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def while_invariant(x):
    y = x.copy()
    while y.max() > x.sum() / 10:
        y = y / 2
    return y


def rows(x):
    total = np.zeros(x.shape[1])
    for row in x:                # a run-time loop over len(x): folded to the static length
        total += np.exp(row) * 2.0
    return total * 2.0 + 1.0


TRAPS = {
    "scaled_copy_written": (scaled_copy_written, lambda r: (r.random((3, 4)),)),
    "merged_then_written": (merged_then_written, lambda r: (r.random(5),)),
    "read_write_read": (read_write_read, lambda r: (r.random(4),)),
    "view_written": (view_written, lambda r: (r.random(4),)),
    "temporary_used_after": (temporary_used_after, lambda r: (r.random((2, 3)),)),
    "loop_reads_what_it_writes": (loop_reads_what_it_writes, lambda r: (r.random(4),)),
    "loop_invariant": (loop_invariant, lambda r: (r.random((3, 2)), r.random((2, 2)))),
    "loop_maybe_empty": (loop_maybe_empty, lambda r: (r.random(3), 0)),
    "loop_maybe_empty_runs": (loop_maybe_empty, lambda r: (r.random(3), 3)),
    "inplace_chain": (inplace_chain, lambda r: (r.random((3, 2)).astype(np.float32),)),
    "users_out_keyword": (users_out_keyword, lambda r: (r.random(3),)),
    "name_clobber": (name_clobber, lambda r: (r.random(3),)),
    "constant_folding_and_branches": (constant_folding_and_branches, lambda r: (r.random((2, 3)),)),
    "int_dtype_kept": (int_dtype_kept, lambda r: (r.integers(-3, 3, 5),)),
    "returned_twice": (returned_twice, lambda r: (r.random(3),)),
    "neg_zero": (neg_zero, lambda r: (np.array([-0.0, 1.0, -2.0]),)),
    "gelu": (gelu, lambda r: (r.standard_normal((4, 5)).astype(np.float32),)),
    "while_invariant": (while_invariant, lambda r: (r.random(4) * 10,)),
    "rows": (rows, lambda r: (r.random((3, 2)),)),
}


@pytest.mark.parametrize("name", sorted(TRAPS))
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("exec_mode", MODES)
def test_traps_match_eager(name, level, exec_mode, rng):
    fn, make_args = TRAPS[name]
    run_both(fn, make_args(rng), jit_level=level, exec_mode=exec_mode)


@pytest.fixture
def forced_tiling(monkeypatch):
    """Tile every elementwise chain, in tiny tiles, and blend every tiled `where` without branches."""
    from graphjit.graph import blend
    from graphjit.graph.passes import tile
    monkeypatch.setattr(tile, "MIN_ELEMENTS", 1)
    monkeypatch.setattr(tile, "TILE_BYTES", 16)
    monkeypatch.setattr(tile, "MIN_INTERNAL", 1)
    monkeypatch.setattr(blend, "MIN_ELEMENTS", 1)


@pytest.mark.usefixtures("forced_tiling")
@pytest.mark.parametrize("name", sorted(TRAPS))
def test_traps_match_eager_with_tiling_forced(name, rng):
    fn, make_args = TRAPS[name]
    run_both(fn, make_args(rng), jit_level="O2")


@pytest.mark.usefixtures("forced_tiling")
@pytest.mark.parametrize("name", sorted(CASES))
def test_constructs_match_eager_with_tiling_forced(name, rng):
    fn, make_args = CASES[name]
    run_both(fn, make_args(rng), jit_level="O2")


def test_reductions_of_arrays_are_emitted_as_methods(rng):
    """The op table's `method` column: `x.sum(axis=1)` for an array, `np.sum` where the operand
    may not be an array; both compute what the function computes eagerly."""
    def reductions(x, y):
        return x.sum(axis=1), np.max(x), np.any(x > 0.5), np.argmax(y), np.sum([1.0, 2.0])
    x, y = rng.random((3, 4)), rng.random(5)
    jitted = ms.jit(reductions, jit_level="O1")
    source = jitted.source(x, y)
    assert "x.sum(axis=1)" in source and "x.max()" in source and ".any()" in source and "y.argmax()" in source
    run_both(reductions, (x, y), jit_level="O1")


@pytest.mark.parametrize("level", ["O1", "O2"])
def test_rewrites_keep_source_spans(level, rng):
    """Every node a pass makes points at the user's code, as the front end's nodes do."""
    for name, (fn, make_args) in {**CASES, **TRAPS}.items():
        verify(ms.jit(fn, jit_level=level).graph(*make_args(rng)), require_spans=True)


def test_negative_zero_and_distinct_results_survive_optimization():
    x = np.array([-0.0, 1.0])
    for level in LEVELS:
        assert np.signbit(ms.jit(neg_zero, jit_level=level)(x)[0]) == np.signbit(neg_zero(x)[0])
        a, b = ms.jit(returned_twice, jit_level=level)(x)
        assert a is not b


def test_o2_writes_in_place_and_o1_does_not():
    x = np.ones((3, 2), np.float32)
    o2 = ms.jit(inplace_chain, jit_level="O2").source(x)
    o1 = ms.jit(gelu, jit_level="O1").source(x)
    assert "out=" in ms.jit(gelu, jit_level="O2").source(x)
    assert "out=" not in o1 and "+=" not in o1
    assert "t += 1.0" in o2


# --- choosing the level ------------------------------------------------------------------------

class Dense2(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(3, 4, activation="relu")

    def construct(self, x):
        return self.dense(x) * 2.0


def _in_place(source: str) -> bool:
    return "out=" in source or "+=" in source


def test_level_by_every_spelling():
    x = np.ones((2, 3), np.float32)
    cell = Dense2()
    expected = cell.construct(x)
    # jit(jit_level=...)
    assert _in_place(ms.jit(cell, jit_level="O2").source(x))
    assert not _in_place(ms.jit(cell, jit_level="O1").source(x))
    # jit(jit_config=JitConfig(...))
    assert _in_place(ms.jit(cell, jit_config=ms.JitConfig(jit_level="O2")).source(x))
    # set_context(jit_config=...) in GRAPH mode, and as the default of jit
    ms.set_context(mode=ms.GRAPH_MODE, jit_config=ms.JitConfig(jit_level="O2"))
    try:
        fresh = Dense2()
        np.testing.assert_allclose(fresh(x), fresh.construct(x), rtol=1e-6)
        assert _in_place(fresh._graph_call.source(x))
        assert _in_place(ms.jit(cell).source(x))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE, jit_config=ms.JitConfig())
    # Cell.set_jit_config(...)
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        cell.set_jit_config(ms.JitConfig(jit_level="O2"))
        np.testing.assert_allclose(cell(x), expected, rtol=1e-6)
        assert _in_place(cell._graph_call.source(x))
        cell.set_jit_config(ms.JitConfig(jit_level="O0"))
        np.testing.assert_allclose(cell(x), expected, rtol=1e-6)
        assert not _in_place(cell._graph_call.source(x))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def failing(x, w):
    y = x * 2.0
    return y @ w      # shapes do not match


def test_no_sink_names_the_failing_node_and_line():
    x, w = np.ones((2, 3)), np.ones((2, 2))
    with pytest.raises(ValueError) as info:
        ms.jit(failing, exec_mode="no_sink")(x, w)
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "in graph node `matmul`" in notes
    assert "test_optimizer.py:" in notes and "return y @ w" in notes


def test_auto_and_sink_run_emitted_code_and_no_sink_the_interpreter():
    from graphjit.backends.interpreter import Interpreter
    x = np.ones(3)
    for mode, interpreted in (("auto", False), ("sink", False), ("no_sink", True)):
        jitted = ms.jit(gelu, exec_mode=mode)
        jitted(x)
        entry = jitted.entry_for(x)
        assert isinstance(entry.run, Interpreter) is interpreted


# --- the manager --------------------------------------------------------------------------------

def test_pipelines_are_literal_lists_with_the_vectorizer_at_o2():
    assert manager.PIPELINES["O0"] == []
    o1 = [d for _, d in manager.PIPELINES["O1"]]
    o2 = [d for _, d in manager.PIPELINES["O2"]]
    assert o2[:len(o1)] == o1
    assert o2[-3:] == ["reuse dead temporaries in place", "compute values in the views they are copied into",
                       "keep big temporaries' buffers between calls"]
    assert "turn independent loops into array operations" in o2 and "turn independent loops into array " \
        "operations" not in o1


def test_manager_stops_at_the_cap_and_names_failing_passes(monkeypatch):
    graph = parse("graph f(%x: f64[3]) -> f64[3]\n  return %x\n")
    report = manager.run_pipeline(graph, pipeline=[(lambda g: True, "always changes")])
    assert report.rounds == manager.MAX_ROUNDS and not report.converged
    assert "always changes" in report.timings

    def broken(g):
        raise RuntimeError("boom")
    with pytest.raises(PassError, match="pass 'breaks things' failed: RuntimeError: boom"):
        manager.run_pipeline(graph, pipeline=[(broken, "breaks things")])

    monkeypatch.setenv("GRAPHJIT_VERIFY", "1")
    bad = parse("graph f(%x: f64[3]) -> f64[3]\n  %0 = exp(%x) : f64[3]\n  %1 = neg(%0) : f64[3]\n  return %1\n")

    def reorder(g):
        g.nodes.reverse()
        return True
    with pytest.raises(VerifyError, match="after pass 'reverses the order'"):
        manager.run_pipeline(bad, pipeline=[(reorder, "reverses the order")])


def test_pass_report_records_time_per_pass():
    jitted = ms.jit(gelu, jit_level="O2")
    report = jitted.pass_report(np.ones(3, np.float32))
    from graphjit.backends.numba_kernels import kernels_on   # the Numba kernel pass runs when kernels are on
    assert set(report.timings) == {d for _, d in manager.pipeline_for("O2", kernels_on(ms.JitConfig(jit_level="O2")))}
    assert report.changes["reuse dead temporaries in place"] >= 1
    assert report.converged


# --- dumps -----------------------------------------------------------------------------------------

def test_graphjit_dump_writes_every_changing_pass_in_order(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHJIT_DUMP", str(tmp_path / "dumps"))
    ms.jit(rows, jit_level="O2")(np.ones((2, 3)))
    (directory,) = (tmp_path / "dumps").iterdir()
    names = sorted(p.name for p in directory.iterdir())
    assert names[0] == "000-input.txt"
    assert names[1] == "001-fold-constants.txt"
    assert [int(n[:3]) for n in names] == list(range(len(names)))
    assert any(n.endswith("-memory-plan.txt") for n in names)
    assert names[-2].endswith("-emitted.py") and names[-1].endswith("-passes.txt")
    for name in names:
        if name.endswith(".txt") and name != names[-1]:
            text = (directory / name).read_text()
            assert str(parse(text)) == text
    emitted = (directory / names[-2]).read_text()
    assert emitted.startswith("def rows(x):")
    # a second specialization gets its own directory
    ms.jit(rows, jit_level="O2")(np.ones((2, 4)))
    assert len(list(tmp_path.iterdir())) == 2


def test_cli_dump_passes_emit_graph_and_dot(tmp_path):
    sample = ROOT / "samples" / "network.py"
    runner = CliRunner()
    result = runner.invoke(main, ["transpile", str(sample), "--input", "x=f32[64,1,28,28]", "--jit-level", "O2",
                                  "--dump-passes", str(tmp_path / "dump")])
    assert result.exit_code == 0, result.stderr
    assert "np.maximum(x, 0, out=x)" in result.stdout and "x += " in result.stdout
    files = sorted(p.name for p in (tmp_path / "dump" / "Network_construct").iterdir())
    assert files[0] == "000-input.txt" and any("memory-plan" in f for f in files)
    assert any(f.endswith("emitted.py") for f in files)
    result = runner.invoke(main, ["transpile", str(sample), "--input", "x=f32[64,1,28,28]", "--jit-level", "O2",
                                  "--emit", "graph"])
    assert result.exit_code == 0
    assert "inplace(" in result.stdout and "{out=0}" in result.stdout
    assert str(parse(result.stdout)) == result.stdout
    # the O2 module runs and matches eager
    import importlib.util
    (tmp_path / "gen_o2.py").write_text(runner.invoke(main, ["transpile", str(sample), "--input", "x=f32[64,1,28,28]",
                                                             "--jit-level", "O2"]).stdout)
    spec = importlib.util.spec_from_file_location("gen_o2", tmp_path / "gen_o2.py")
    generated = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generated)
    spec = importlib.util.spec_from_file_location("o2_sample_network", sample)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.Network()
    x = np.random.default_rng(0).standard_normal((64, 1, 28, 28)).astype(np.float32)
    np.testing.assert_allclose(generated.Network_construct(model, x), model.construct(x), rtol=1e-5, atol=1e-6)
    result = runner.invoke(main, ["transpile", str(sample), "--input", "x=f32[64,1,28,28]", "--emit", "dot"])
    assert result.exit_code == 0 and result.stdout.startswith('digraph "Network_construct" {')
    assert result.stdout.count("{") == result.stdout.count("}")


# --- docs ---------------------------------------------------------------------------------------

def test_docs_passes_md_lists_the_pipelines():
    text = (ROOT / "docs" / "passes.md").read_text()
    generated = manager.describe_pipelines()
    assert generated in text, "docs/passes.md is out of date; paste manager.describe_pipelines():\n" + generated
    for name in ("fold_constants", "simplify", "cse", "dce", "dead_branches", "licm", "memory_plan"):
        assert f"`{name.replace('_', '-')}`" in text


def test_math_constants_fold():
    def f(x):
        return x * math.sqrt(2.0) + np.sqrt(2.0)
    graph = ms.jit(f).graph(np.ones(2))
    assert not re.search(r"= sqrt\(", str(graph)), str(graph)
