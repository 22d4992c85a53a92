"""docs/array-api.md is what docs/gen_array_api.py renders from the backend column of the op table
(graph/backend_ops.py), and that column covers every op of the table."""

import pathlib

from graphjit.graph.backend_ops import BACKENDS, NUMPY_ONLY, NUMPY_ONLY_PASSES, SPELLINGS
from graphjit.graph.ops import OPS
from graphjit.graph.passes.manager import PIPELINES, pipeline_for
from test_docs import DOCS, _load_generator


def test_array_api_md_is_generated_from_the_backend_table():
    assert (DOCS / "array-api.md").read_text() == _load_generator("gen_array_api").render(), \
        "docs/array-api.md is out of date: run `python docs/gen_array_api.py`"


def test_every_op_is_spelled_or_numpy_only_and_documented():
    text = (DOCS / "array-api.md").read_text()
    assert set(SPELLINGS) | set(NUMPY_ONLY) == set(OPS), "each op: a spelling in SPELLINGS or a reason in NUMPY_ONLY"
    assert not set(SPELLINGS) & set(NUMPY_ONLY)
    for name in OPS:
        assert f"| `{name}` |" in text
    for backend in BACKENDS:
        assert f"| {backend.name} | `{backend.namespace}` |" in text


def test_the_numpy_only_passes_are_passes_and_are_turned_off():
    modules = {run.__module__.rsplit(".", 1)[-1] for passes in PIPELINES.values() for run, _ in passes}
    assert set(NUMPY_ONLY_PASSES) <= modules
    kept = {run.__module__.rsplit(".", 1)[-1] for run, _ in pipeline_for("O2", True, numpy=False)}
    assert not kept & set(NUMPY_ONLY_PASSES) and "vectorize" in kept


def test_the_architecture_map_names_the_backend_column():
    assert "graph/backend_ops.py" in (DOCS / "architecture.md").read_text()


def test_docs_name_real_files():
    root = pathlib.Path(__file__).resolve().parent.parent
    for path in ("backends/namespaces.py", "backends/emit_xp.py", "backends/xp_interpreter.py",
                 "tests/backends/test_array_api_strict.py"):
        assert (root / path).exists(), path
