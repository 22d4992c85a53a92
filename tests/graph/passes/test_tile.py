"""Tiling (graph/passes/tile.py): graph text in, graph text out (tests/graph_testing.py),
including where it must not fire.
"""

import textwrap

import pytest

from graphjit.graph import parse
from graphjit.graph.passes import tile, vectorize

from graph_testing import assert_pass_leaves, assert_pass_output


# --- tiling ------------------------------------------------------------------------------------------

@pytest.fixture
def small_tiles(monkeypatch):
    """Tile small arrays (8 rows of 4 float64: 64 bytes per tile = 2 rows) so tests stay fast, and
    short chains, so each test shows one mechanism."""
    monkeypatch.setattr(tile, "MIN_ELEMENTS", 8)
    monkeypatch.setattr(tile, "TILE_BYTES", 64)
    monkeypatch.setattr(tile, "MIN_INTERNAL", 1)


def test_tile_slices_what_varies_along_rows_and_passes_the_rest_whole(small_tiles):
    assert_pass_output(tile.run, """
        graph f(%x: f64[8,4], %col: f64[8,1], %row: f64[1,4], %v: f64[4], %s: float) -> f64[8,4]
          %0 = sub(%x, %col) : f64[8,4]
          %1 = mul(%0, %row) : f64[8,4]
          %2 = add(%1, %v) : f64[8,4]
          %3 = mul(%2, %s) : f64[8,4]
          %4 = exp(%3) : f64[8,4]
          return %4
    """, """
        graph f(%x: f64[8,4], %col: f64[8,1], %row: f64[1,4], %v: f64[4], %s: float) -> f64[8,4]
          %0 = empty((8, 4)) {dtype=np.float64} : f64[8,4]
          %1 = for_range(0, 8, 2, %0, %x, %col, %row, %v, %s) {carried=0, tile=2} : tuple()
            body(%i: int, %2: f64[8,4], %x.1: f64[8,4], %col.1: f64[8,1], %row.1: f64[1,4], %v.1: f64[4], %s.1: float) {
              %3 = add(%i, 2) : int
              %4 = getitem(%2, %i, %3) {index=[$1:$2]} : f64[2,4]
              %5 = getitem(%x.1, %i, %3) {index=[$1:$2]} : f64[2,4]
              %6 = getitem(%col.1, %i, %3) {index=[$1:$2]} : f64[2,1]
              %7 = sub(%5, %6) : f64[2,4]
              %8 = mul(%7, %row.1) : f64[2,4]
              %9 = add(%8, %v.1) : f64[2,4]
              %10 = mul(%9, %s.1) : f64[2,4]
              %11 = exp(%10) : f64[2,4]
              %12 = setitem(%4, %11) {index=[:]} : none
              yield
            }
          return %0
    """)


def test_tile_writes_values_used_later_and_reuses_a_dead_input(small_tiles):
    # %t is a temporary nobody reads after the chain's first node: the first value the chain must
    # hand on (%1, summed later) is written into it; the result %2 gets a new array
    assert_pass_output(tile.run, """
        graph f(%x: f64[8,4]) -> tuple(f64[8,4], f64[])
          %t = copy(%x) : f64[8,4]
          %0 = mul(%t, 2.0) : f64[8,4]
          %1 = tanh(%0) : f64[8,4]
          %2 = add(%1, 1.0) : f64[8,4]
          %3 = sum(%1) : f64[]
          %4 = tuple(%2, %3) : tuple(f64[8,4], f64[])
          return %4
    """, """
        graph f(%x: f64[8,4]) -> tuple(f64[8,4], f64[])
          %t = copy(%x) : f64[8,4]
          %0 = empty((8, 4)) {dtype=np.float64} : f64[8,4]
          %1 = for_range(0, 8, 2, %t, %0) {carried=0, tile=2} : tuple()
            body(%i: int, %t.1: f64[8,4], %2: f64[8,4]) {
              %3 = add(%i, 2) : int
              %4 = getitem(%t.1, %i, %3) {index=[$1:$2]} : f64[2,4]
              %5 = getitem(%2, %i, %3) {index=[$1:$2]} : f64[2,4]
              %6 = mul(%4, 2.0) : f64[2,4]
              %7 = tanh(%6) : f64[2,4]
              %8 = setitem(%4, %7) {index=[:]} : none
              %9 = add(%7, 1.0) : f64[2,4]
              %10 = setitem(%5, %9) {index=[:]} : none
              yield
            }
          %11 = sum(%t) : f64[]
          %12 = tuple(%0, %11) : tuple(f64[8,4], f64[])
          return %12
    """)


def test_tile_stops_a_chain_at_a_scalar_operation(small_tiles):
    assert_pass_output(tile.run, """
        graph f(%x: f64[8,4], %n: int) -> tuple(f64[8,4], int)
          %0 = mul(%x, 2.0) : f64[8,4]
          %1 = exp(%0) : f64[8,4]
          %2 = add(%n, 1) : int
          %3 = tuple(%1, %2) : tuple(f64[8,4], int)
          return %3
    """, """
        graph f(%x: f64[8,4], %n: int) -> tuple(f64[8,4], int)
          %0 = empty((8, 4)) {dtype=np.float64} : f64[8,4]
          %1 = for_range(0, 8, 2, %0, %x) {carried=0, tile=2} : tuple()
            body(%i: int, %2: f64[8,4], %x.1: f64[8,4]) {
              %3 = add(%i, 2) : int
              %4 = getitem(%2, %i, %3) {index=[$1:$2]} : f64[2,4]
              %5 = getitem(%x.1, %i, %3) {index=[$1:$2]} : f64[2,4]
              %6 = mul(%5, 2.0) : f64[2,4]
              %7 = exp(%6) : f64[2,4]
              %8 = setitem(%4, %7) {index=[:]} : none
              yield
            }
          %9 = add(%n, 1) : int
          %10 = tuple(%0, %9) : tuple(f64[8,4], int)
          return %10
    """)


def test_tile_leaves_chains_that_keep_too_little_to_themselves(small_tiles, monkeypatch):
    monkeypatch.setattr(tile, "MIN_INTERNAL", 3)
    assert_pass_leaves(tile.run, """
        graph f(%x: f64[8,4], %s: f64[8,1]) -> f64[8,4]
          %0 = truediv(%x, %s) : f64[8,4]
          %1 = mul(%0, 1.5) : f64[8,4]
          %2 = add(%1, 0.25) : f64[8,4]
          return %2
    """)


def test_tile_leaves_small_split_escaping_and_indivisible_chains(small_tiles):
    # %0..%1: every value is used after the chain; %2: a chain of one (the sum splits it);
    # %5..%6: 7 rows of 16 bytes cannot be cut into equal tiles near 64 bytes; %7..%8: too small
    assert_pass_leaves(tile.run, """
        graph f(%x: f64[8,4], %y: f64[7,2], %z: f64[2,3]) -> tuple(f64[8,4], f64[8,4], f64[8,4], f64[7,2], f64[2,3])
          %0 = mul(%x, 2.0) : f64[8,4]
          %1 = add(%0, 1.0) : f64[8,4]
          %2 = exp(%1) : f64[8,4]
          %3 = sum(%2) : f64[]
          %4 = mul(%2, %3) : f64[8,4]
          %5 = mul(%y, 2.0) : f64[7,2]
          %6 = exp(%5) : f64[7,2]
          %7 = mul(%z, 2.0) : f64[2,3]
          %8 = exp(%7) : f64[2,3]
          %9 = tuple(%0, %1, %4, %6, %8) : tuple(f64[8,4], f64[8,4], f64[8,4], f64[7,2], f64[2,3])
          return %9
    """)


def test_tile_sizes_tiles_by_the_widest_element_of_the_chain(small_tiles):
    # the chain starts with a bool comparison; tiles are 64 bytes of float64 (8 elements), not of bool
    assert_pass_output(tile.run, """
        graph f(%x: f64[32]) -> f64[32]
          %0 = gt(%x, 1.0) : bool[32]
          %1 = mul(%x, 0.01) : f64[32]
          %2 = where(%0, 1.0, %1) : f64[32]
          return %2
    """, """
        graph f(%x: f64[32]) -> f64[32]
          %0 = empty((32,)) {dtype=np.float64} : f64[32]
          %1 = for_range(0, 32, 8, %0, %x) {carried=0, tile=8} : tuple()
            body(%i: int, %2: f64[32], %x.1: f64[32]) {
              %3 = add(%i, 8) : int
              %4 = getitem(%2, %i, %3) {index=[$1:$2]} : f64[8]
              %5 = getitem(%x.1, %i, %3) {index=[$1:$2]} : f64[8]
              %6 = gt(%5, 1.0) : bool[8]
              %7 = mul(%5, 0.01) : f64[8]
              %8 = select(%6, 1.0, %7) : f64[8]
              %9 = setitem(%4, %8) {index=[:]} : none
              yield
            }
          return %0
    """)


def test_tile_and_vectorize_leave_the_loops_tile_made(small_tiles):
    # another round of the O2 passes must not tile a tile again, nor turn its loop back into slices
    g = parse(textwrap.dedent("""
        graph f(%x: f64[64]) -> f64[64]
          %0 = gt(%x, 1.0) : bool[64]
          %1 = mul(%x, 0.01) : f64[64]
          %2 = where(%0, 1.0, %1) : f64[64]
          return %2
    """))
    assert tile.run(g)
    once = str(g)
    assert not tile.run(g) and not vectorize.run(g)
    assert str(g) == once
