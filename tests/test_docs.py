"""The docs cannot drift: docs/ops.md is what docs/gen_ops.py renders from the op table, docs/nn.md what
docs/gen_nn.py renders from `graphjit.nn` and `graphjit.ops`, and every graph example in
docs/graph-text.md parses and prints back exactly as written."""

import importlib.util
import pathlib
import re

import numpy as np
import pytest

from graphjit.graph import parse, verify

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"


def _load_generator(name: str):
    spec = importlib.util.spec_from_file_location(f"graphjit_docs_{name}", DOCS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _load_gen_ops():
    return _load_generator("gen_ops")


def test_ops_md_is_generated_from_the_op_table():
    gen_ops = _load_gen_ops()
    assert (DOCS / "ops.md").read_text() == gen_ops.render(), \
        "docs/ops.md is out of date: run `python docs/gen_ops.py`"


def test_ops_md_lists_every_op():
    from graphjit.graph.ops import OPS
    text = (DOCS / "ops.md").read_text()
    for name in OPS:
        assert f"| `{name}` |" in text


def test_nn_md_is_generated_from_the_namespaces():
    gen_nn = _load_generator("gen_nn")
    assert (DOCS / "nn.md").read_text() == gen_nn.render(), "docs/nn.md is out of date: run `python docs/gen_nn.py`"


def test_nn_md_lists_every_public_name():
    from graphjit import nn, ops
    text = (DOCS / "nn.md").read_text()
    for prefix, module in (("nn", nn), ("ops", ops)):
        for name in module.__all__:
            assert f"| `{prefix}.{name}` |" in text, f"{prefix}.{name}"


def test_gen_nn_picks_up_a_new_layer_with_its_defaults_and_docstring(monkeypatch):
    """A layer added to `nn.__all__` by any module appears with no edit to the generator."""
    from graphjit import nn

    class Widget(nn.Cell):
        """A new layer: `y = x * gain`.

        Details that stay out of the summary.
        """

        def __init__(self, channels: int, gain: float = 0.5, pad_mode: str = "same", dtype=np.float32,
                     *, axis=-1, **kwargs):
            super().__init__()

        def construct(self, x):
            return x

    class Plain(nn.Cell):
        def construct(self, x):
            return x

    monkeypatch.setattr(nn, "Widget", Widget, raising=False)
    monkeypatch.setattr(nn, "Plain", Plain, raising=False)
    monkeypatch.setattr(nn, "__all__", [*nn.__all__, "Widget", "Plain"])
    text = _load_generator("gen_nn").render()
    row = next(line for line in text.splitlines() if line.startswith("| `nn.Widget` |"))
    assert row.startswith("| `nn.Widget` | `(channels, gain=0.5, pad_mode='same', dtype=ms.float32, *, axis=-1, "
                          "**kwargs)` | Cell | `")
    assert row.endswith("test_docs` | A new layer: `y = x * gain`. |")
    assert "| `nn.Plain` | `()` | Cell |" in text
    assert "Base class of layers" not in text.split("`nn.Plain`")[1].split("\n")[0]   # no inherited docstring


def _graph_examples() -> list[tuple[int, str]]:
    """(line number, text) of each ```text fence in graph-text.md whose text starts with `graph `."""
    lines = (DOCS / "graph-text.md").read_text().split("\n")
    examples, k = [], 0
    while k < len(lines):
        if lines[k].strip() == "```text":
            start = k + 1
            end = start
            while end < len(lines) and lines[end].strip() != "```":
                end += 1
            assert end < len(lines), f"graph-text.md:{k + 1}: unclosed ```text fence"
            body = "\n".join(lines[start:end]) + "\n"
            if body.startswith("graph "):
                examples.append((start + 1, body))
            k = end
        k += 1
    return examples


EXAMPLES = _graph_examples()


def test_graph_text_has_examples():
    assert len(EXAMPLES) >= 10
    # the regions and the access-path roots the page documents all appear in some example
    joined = "".join(text for _, text in EXAMPLES)
    for needle in ["param ", "= if(", "= for_range(", "= while(", "{carried=", "$1", "globals['", "const[",
                   "np.float32(", "f32[*]", "?[*]", "tuple("]:
        assert needle in joined, needle


@pytest.mark.parametrize("line,text", EXAMPLES, ids=[f"line{line}" for line, _ in EXAMPLES])
def test_graph_text_example_round_trips(line, text):
    graph = parse(text, filename=f"graph-text.md:{line}")
    assert str(graph) == text, f"graph-text.md:{line}: the example does not print back as written"
    verify(graph)


def test_graph_text_names_real_ops():
    """Every `op(` on a node line of the examples is in the op table (the parser checks too)."""
    from graphjit.graph.ops import OPS
    for line, text in EXAMPLES:
        for op in re.findall(r"^\s*%[\w.]+ = ([A-Za-z_]\w*)\(", text, flags=re.M):
            assert op in OPS, f"graph-text.md:{line}: unknown op {op}"
