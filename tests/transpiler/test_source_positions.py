"""transpiler/source.py's positions: the same `CodeRange` for every node as LibCST's own `PositionProvider`."""

import sys

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from graphjit.transpiler.source import node_positions

from locations import REPO


@pytest.mark.parametrize("relative", ["transpiler/lower/calls.py", "samples/network.py", "cli/__init__.py"])
def test_fast_positions_equal_libcsts_provider(relative):
    text = (REPO / relative).read_text()
    module = cst.parse_module(text + "\n\nif x:\n    pass\nelif y:  # comment\n    z = (1 +\n         2);  w = 3\n")
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    found = node_positions(module)
    assert len(dict(found)) == len(expected)
    assert all(found[node] == where for node, where in expected.items())
    assert found.get(cst.Name("not_in_the_module")) is None
