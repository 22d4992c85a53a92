"""Computing a value in the view it is copied into (graph/passes/destination.py): graph text in,
graph text out, each graph run before and after (tests/graph_testing.py), and where it must not fire;
then tiled chains compiled at every level against eager NumPy."""

import numpy as np
import pytest

from graphjit.graph.passes import destination, tile

from eager_vs_compiled import run_both
from graph_testing import assert_pass_leaves, assert_pass_output


def test_a_tile_is_computed_in_the_array_it_is_copied_into():
    assert_pass_output(destination.run, """
        graph f(%x: i64[64,8]) -> i64[64,8]
          %0 = empty((64, 8)) {dtype=np.int64} : i64[64,8]
          %1 = for_range(0, 64, 16, %0, %x) {carried=0} : tuple()
            body(%i: int, %out: i64[64,8], %x.1: i64[64,8]) {
              %2 = add(%i, 16) : int
              %d = getitem(%out, %i, %2) {index=[$1:$2]} : i64[16,8]
              %3 = getitem(%x.1, %i, %2) {index=[$1:$2]} : i64[16,8]
              %4 = clip(%3, 2, 10) : i64[16,8]
              %5 = inplace(%4, 4) {op='mul'} : i64[16,8]
              %6 = setitem(%d, %5) {index=[:]} : none
              yield
            }
          return %0
    """, """
        graph f(%x: i64[64,8]) -> i64[64,8]
          %0 = empty((64, 8)) {dtype=np.int64} : i64[64,8]
          %1 = for_range(0, 64, 16, %0, %x) {carried=0} : tuple()
            body(%i: int, %out: i64[64,8], %x.1: i64[64,8]) {
              %2 = add(%i, 16) : int
              %d = getitem(%out, %i, %2) {index=[$1:$2]} : i64[16,8]
              %3 = getitem(%x.1, %i, %2) {index=[$1:$2]} : i64[16,8]
              %4 = clip(%3, 2, 10, %d) {kw=('out',)} : i64[16,8]
              %5 = inplace(%4, 4) {op='mul'} : i64[16,8]
              yield
            }
          return %0
    """)


def test_an_operator_becomes_its_ufunc_call_and_other_values_may_be_computed_between():
    # `a * 2.0` has no `out=` as an operator: np.multiply(a, 2.0, out=d); %2, a fresh value
    # computed between the root and the copy, reads neither the view nor writes anything
    assert_pass_output(destination.run, """
        graph f(%a: f64[4,8], %b: f64[4,8]) -> f64[8,8]
          %o = empty((8, 8)) {dtype=np.float64} : f64[8,8]
          %d = getitem(%o) {index=[2:6]} : f64[4,8]
          %0 = mul(%a, 2.0) : f64[4,8]
          %1 = exp(%b) : f64[4,8]
          %2 = inplace(%0, %1) {op='add'} : f64[4,8]
          %3 = setitem(%d, %2) {index=[:]} : none
          %4 = setitem(%o, 0.0) {index=[0:2]} : none
          %5 = setitem(%o, 0.0) {index=[6:]} : none
          return %o
    """, """
        graph f(%a: f64[4,8], %b: f64[4,8]) -> f64[8,8]
          %o = empty((8, 8)) {dtype=np.float64} : f64[8,8]
          %d = getitem(%o) {index=[2:6]} : f64[4,8]
          %0 = multiply(%a, 2.0, %d) {kw=('out',)} : f64[4,8]
          %1 = exp(%b) : f64[4,8]
          %2 = inplace(%0, %1) {op='add'} : f64[4,8]
          %3 = setitem(%o, 0.0) {index=[0:2]} : none
          %4 = setitem(%o, 0.0) {index=[6:]} : none
          return %o
    """)


def test_temporaries_of_the_graph_may_be_written_between_the_root_and_the_copy():
    # arc_distance's tail: %1 updates another temporary in place before %2 reads both
    assert_pass_output(destination.run, """
        graph f(%a: f64[4,8]) -> f64[4,8]
          %o = zeros((4, 8)) : f64[4,8]
          %d = getitem(%o) {index=[:]} : f64[4,8]
          %t = mul(%a, %a) : f64[4,8]
          %0 = sqrt(%t) : f64[4,8]
          %1 = inplace(%t, 1.0) {op='add'} : f64[4,8]
          %2 = arctan2(%0, %1) {out=0} : f64[4,8]
          %3 = setitem(%d, %2) {index=[:]} : none
          return %o
    """, """
        graph f(%a: f64[4,8]) -> f64[4,8]
          %o = zeros((4, 8)) : f64[4,8]
          %d = getitem(%o) {index=[:]} : f64[4,8]
          %t = mul(%a, %a) : f64[4,8]
          %0 = sqrt(%t, %d) {kw=('out',)} : f64[4,8]
          %1 = inplace(%t, 1.0) {op='add'} : f64[4,8]
          %2 = arctan2(%0, %1) {out=0} : f64[4,8]
          return %o
    """)


# --- where it must not fire -------------------------------------------------------------------

def test_leaves_a_chain_that_reads_the_memory_it_would_write():
    # %d is rows 0..4 of %o and the chain reads rows 1..5 of it after its root: writing %d at the
    # root would change what %3 reads
    assert_pass_leaves(destination.run, """
        graph f(%a: f64[4,8]) -> f64[8,8]
          %o = ones((8, 8)) : f64[8,8]
          %d = getitem(%o) {index=[0:4]} : f64[4,8]
          %s = getitem(%o) {index=[1:5]} : f64[4,8]
          %0 = mul(%a, 2.0) : f64[4,8]
          %1 = inplace(%0, %s) {op='add'} : f64[4,8]
          %2 = setitem(%d, %1) {index=[:]} : none
          return %o
    """)


def test_leaves_a_copy_when_the_view_s_array_or_the_caller_s_memory_is_written_before_it():
    # %1 writes row 0 of %o, which %d views; %4 writes an argument, which may be anything
    assert_pass_leaves(destination.run, """
        graph f(%a: f64[4,8], %w: f64[4,8]) -> f64[4,8]
          %o = zeros((4, 8)) : f64[4,8]
          %d = getitem(%o) {index=[:]} : f64[4,8]
          %0 = mul(%a, 2.0) : f64[4,8]
          %1 = setitem(%o, 5.0) {index=[0]} : none
          %2 = setitem(%d, %0) {index=[:]} : none
          %p = zeros((4, 8)) : f64[4,8]
          %e = getitem(%p) {index=[:]} : f64[4,8]
          %3 = mul(%a, 3.0) : f64[4,8]
          %4 = setitem(%w, 1.0) {index=[0]} : none
          %5 = setitem(%e, %3) {index=[:]} : none
          %6 = add(%o, %p) : f64[4,8]
          return %6
    """)


def test_leaves_the_caller_s_memory_a_value_read_after_the_copy_and_casts():
    # %d views an argument, which may share memory with %a; %2's buffer is returned after the copy;
    # %5 casts float64 into a float32 view
    assert_pass_leaves(destination.run, """
        graph f(%a: f64[4,8], %out: f64[8,8], %o32: f32[4,8]) -> f64[4,8]
          %d = getitem(%out) {index=[0:4]} : f64[4,8]
          %0 = mul(%a, 2.0) : f64[4,8]
          %1 = setitem(%d, %0) {index=[:]} : none
          %o = empty((8, 8)) {dtype=np.float64} : f64[8,8]
          %e = getitem(%o) {index=[0:4]} : f64[4,8]
          %2 = mul(%a, 3.0) : f64[4,8]
          %3 = setitem(%e, %2) {index=[:]} : none
          %4 = setitem(%o32, %2) {index=[:]} : none
          return %2
    """)


def test_leaves_roots_without_an_out_form_partial_copies_and_views_made_after_the_root():
    assert_pass_leaves(destination.run, """
        graph f(%a: f64[4,8], %c: bool[4,8]) -> f64[8,8]
          %o = empty((8, 8)) {dtype=np.float64} : f64[8,8]
          %d = getitem(%o) {index=[0:4]} : f64[4,8]
          %0 = where(%c, %a, 0.0) : f64[4,8]
          %1 = setitem(%d, %0) {index=[:]} : none
          %2 = mul(%a, 2.0) : f64[4,8]
          %e = getitem(%o) {index=[4:8]} : f64[4,8]
          %3 = setitem(%e, %2) {index=[:]} : none
          %4 = exp(%a) : f64[4,8]
          %5 = setitem(%o, %4) {index=[2:6]} : none
          return %o
    """)


# --- tiled chains, compiled against eager ---------------------------------------------------------

@pytest.fixture
def small_tiles(monkeypatch):
    monkeypatch.setattr(tile, "MIN_ELEMENTS", 64)
    monkeypatch.setattr(tile, "TILE_BYTES", 256)


def clipped_sum(x, y, a, b, c):
    return np.clip(x, 2, 10) * a + y * b + c


def gelu_and_input(x):
    y = 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))
    return y, y * 2.0 + x


def shifted_in_place(x):
    t = x * 1.0
    t[1:] = np.exp(t[:-1]) * 2.0 + t[1:] * 0.5 - 1.0   # reads and writes one buffer
    return t


def shifted_view(x):
    t = x * 1.0
    d = t[1:]
    d[:] = np.exp(t[:-1]) * 2.0 + d * 0.5 - 1.0      # `out=d` would overwrite what exp reads next
    e = t[:4]
    e[:] = np.sqrt(np.abs(x[:4])) + 1.0              # here it may
    return t


@pytest.mark.parametrize("level", ["O0", "O1", "O2"])
@pytest.mark.parametrize("exec_mode", ["sink", "no_sink"])
def test_tiled_chains_equal_eager(small_tiles, level, exec_mode, rng):
    ints = rng.integers(-5, 20, (32, 16))
    options = dict(jit_level=level, exec_mode=exec_mode)
    for args in [(ints, ints[::-1].copy(), 4, 3, 9), (ints, ints.T.copy(), np.int64(4), np.int64(-3), np.int64(9)),
                 (ints.astype(np.float32), ints, 0.5, 2, np.float32(1.5))]:
        jitted = run_both(clipped_sum, args, **options)
    if level == "O2" and exec_mode == "sink":
        source = jitted.source(*args)
        assert "out=" in source and "[:] =" not in source, source
    run_both(gelu_and_input, (rng.standard_normal((32, 16)),), **options)
    run_both(shifted_in_place, (rng.standard_normal((33, 16)),), **options)
    jitted = run_both(shifted_view, (rng.standard_normal((33, 16)),), **options)
    if level == "O2" and exec_mode == "sink":
        source = jitted.source(rng.standard_normal((33, 16)))
        assert "d[:] = " in source and "out=e" in source, source
