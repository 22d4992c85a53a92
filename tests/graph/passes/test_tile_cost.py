"""The tiling pass's cost rules (graph/passes/tile.py): a chain whose own values fit in cache together
is left whole, in graph text; the same chain on bigger arrays is tiled."""

import pytest

from graphjit.graph import parse
from graphjit.graph.passes import tile

from graph_testing import assert_pass_leaves


@pytest.fixture
def small_cache(monkeypatch):
    """Tile small arrays (64 bytes per tile) and call 1 KiB of the chain's own values 'big'."""
    monkeypatch.setattr(tile, "MIN_ELEMENTS", 8)
    monkeypatch.setattr(tile, "TILE_BYTES", 64)
    monkeypatch.setattr(tile, "MIN_INTERNAL", 3)
    monkeypatch.setattr(tile, "MIN_INTERNAL_BYTES", 1024)


# the shape of a stencil's flux limiter: `np.where((a - b) * r > 0, 0.0, r)`; its own values are the
# difference, the product and the mask (the where's result leaves the chain)
LIMITER = """
    graph f(%a: {t}, %b: {t}, %r: {t}) -> {t}
      %0 = sub(%a, %b) : {t}
      %1 = mul(%0, %r) : {t}
      %2 = gt(%1, 0) : {m}
      %3 = where(%2, 0.0, %r) : {t}
      return %3
"""


def test_a_chain_whose_own_values_fit_in_cache_is_left_whole(small_cache):
    # 8x4 float64: 256 + 256 + 32 bytes of its own, under 1 KiB
    assert_pass_leaves(tile.run, LIMITER.format(t="f64[8,4]", m="bool[8,4]"))


def test_the_same_chain_on_arrays_too_big_for_the_cache_is_tiled(small_cache):
    # 16x16 float64: 2048 + 2048 + 256 bytes of its own
    graph = parse(LIMITER.format(t="f64[16,16]", m="bool[16,16]"))
    assert tile.run(graph)
    loop = next(n for n in graph.nodes if n.op == "for_range")
    assert loop.attrs[tile.TILED] == 1   # one 128-byte row per tile
    assert [n.op for n in loop.regions[0].nodes if n.op not in ("add", "getitem", "const")] == \
        ["sub", "mul", "gt", "select", "setitem"]


def test_the_byte_rule_counts_the_dtype_of_each_value(small_cache, monkeypatch):
    # the same 16x16 chain in float32 with a mask: 1024 + 1024 + 256 bytes; at 2.5 KiB it is left whole
    monkeypatch.setattr(tile, "MIN_INTERNAL_BYTES", 2560)
    assert_pass_leaves(tile.run, LIMITER.format(t="f32[16,16]", m="bool[16,16]"))
    graph = parse(LIMITER.format(t="f64[16,16]", m="bool[16,16]"))
    assert tile.run(graph)
