"""export(..., file_format="MINDIR") and load("model.mindir"): every op has a MindIR row or a reason,
docs/mindir.md is generated, graphjit still writes the very files MindSpore 2.10 loaded and ran equal
to eager (tests/golden/mindir/graphjit_exports.json), graphjit reads them back to MindSpore's outputs,
reads the small files MindSpore 2.10 exported itself to MindSpore's outputs, and refuses what it cannot
write or read with one error. MindSpore is never needed here: tests/golden/mindir/record.py recorded it."""

import importlib.util
import json
import os
import re
import sys

import numpy as np
import pytest

import graphjit as ms
from graphjit import Tensor, nn
from graphjit.graph import mindir_ops
from graphjit.graph.ops import OPS
import mindir_cases
from locations import DOCS, REPO
from side_effects import watch

pytest.importorskip("google.protobuf")
RECORDED = json.loads((mindir_cases.FIXTURES / "graphjit_exports.json").read_text())["cases"]
MS_FILES = sorted(p.stem[3:] for p in mindir_cases.FIXTURES.glob("ms_*.mindir"))


def _messages():
    from graphjit.backends.mindir_proto import messages
    return messages()


# --- the column -----------------------------------------------------------------------------------------

def test_every_op_has_a_mindir_row_or_a_reason():
    for name in OPS:
        kinds = [name in mindir_ops.SPELLINGS, name in mindir_ops.NOT_EXPORTED, name in mindir_ops.STRUCTURAL]
        assert kinds.count(True) == 1, f"{name}: needs exactly one of a MindIR row, a reason, or the writer's own"
        if name in mindir_ops.NOT_EXPORTED:
            assert len(mindir_ops.NOT_EXPORTED[name]) > 10, name
    assert set(mindir_ops.SPELLINGS) | set(mindir_ops.NOT_EXPORTED) | set(mindir_ops.STRUCTURAL) <= set(OPS)


def test_every_primitive_read_builds_graph_ops_and_is_documented():
    for name, read in mindir_ops.PRIMITIVES.items():
        assert callable(read) and mindir_ops.PRIMITIVE_NOTES.get(name), name


def test_mindir_md_is_generated_from_the_column():
    spec = importlib.util.spec_from_file_location("graphjit_docs_gen_mindir", DOCS / "gen_mindir.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = (DOCS / "mindir.md").read_text()
    assert text == module.render(), "docs/mindir.md is out of date: run `python docs/gen_mindir.py`"
    for name in OPS:
        assert f"| `{name}` |" in text, name


def _project_files(pattern: str) -> list:
    """The repository's own files matching `pattern` (not a venv's, not hidden folders' such as .ci-venv)."""
    return [p for p in REPO.rglob(pattern)
            if not any(part.startswith(".") or part in ("build", "dist") or "venv" in part
                       for part in p.relative_to(REPO).parts[:-1])]


def test_the_schema_is_graphjits_own():
    """No generated protobuf module is committed, and only the scripts that record MindSpore's outputs import it."""
    assert not _project_files("*_pb2.py")
    importers = [p.relative_to(REPO) for p in _project_files("*.py") if "tests" in p.parts or "backends" in p.parts
                 for line in p.read_text(errors="replace").splitlines()
                 if re.match(r"\s*(import|from) mindspore(\.|\s|$)", line)]
    recorders = {os.path.join("tests", "golden", "mindir", "record.py"), os.path.join("tests", "record_mindspore.py"),
                 os.path.join("tests", "fixtures", "mindrecord", "record_with_mindspore.py")}
    assert {str(p) for p in importers} <= recorders


# --- the chapter ------------------------------------------------------------------------------------------

def test_the_saving_and_loading_chapter(tmp_path, monkeypatch, capsys):
    """MindSpore's chapter with only the import changed."""
    monkeypatch.chdir(tmp_path)
    mindspore = ms
    mindspore.set_context(mode=mindspore.GRAPH_MODE, jit_syntax_level=mindspore.STRICT)
    try:
        model = nn.SequentialCell(nn.Flatten(), nn.Dense(28 * 28, 512), nn.ReLU(), nn.Dense(512, 512), nn.ReLU(),
                                  nn.Dense(512, 10))
        inputs = Tensor(np.ones([1, 1, 28, 28]).astype(np.float32))
        mindspore.export(model, inputs, file_name="model", file_format="MINDIR")
        graph = mindspore.load("model.mindir")
        loaded = nn.GraphCell(graph)
        outputs = loaded(inputs)
        print(outputs.shape)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE, jit_syntax_level=ms.LAX)
    assert capsys.readouterr().out == "(1, 10)\n"
    assert isinstance(outputs, Tensor)
    np.testing.assert_allclose(np.asarray(outputs), np.asarray(model(inputs)), rtol=1e-5, atol=1e-6)
    assert os.listdir(tmp_path) == ["model.mindir"]


# --- graphjit's files, as MindSpore 2.10 ran them ------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(mindir_cases.GRAPHJIT_CASES))
def test_graphjit_writes_the_file_mindspore_ran_and_reads_it_back(name, tmp_path):
    recorded = RECORDED[name]
    net, x = mindir_cases.graphjit_case(name)
    path = ms.export(net, x, file_name=str(tmp_path / name), file_format="MINDIR")
    data = open(path, "rb").read()
    model = _messages()["ModelProto"]()
    model.ParseFromString(data)
    kinds = {p.name: p.op_type for p in model.primitives}
    assert [kinds[n.op_type[5:]] for n in model.graph.node if n.op_type != "Constant"] == recorded["primitives"]
    assert mindir_cases.digest(data) == recorded["sha256"], "the file differs from the one MindSpore ran: " \
        "re-run tests/golden/mindir/record.py"
    out = ms.load(path)(x)
    eager = net(x)
    assert isinstance(out, tuple) == recorded["tuple"] == isinstance(eager, tuple)
    outs, eagers = (out, eager) if recorded["tuple"] else ((out,), (eager,))
    for got, saved, computed in zip(outs, recorded["outputs"], eagers):
        expected = np.array(saved["values"], dtype=saved["dtype"]).reshape(saved["shape"])
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)       # MindSpore's float32 sums
        tiny = np.abs(expected) < 1e-6           # where an absolute tolerance would hide a lost value (log1p)
        np.testing.assert_allclose(got[tiny], expected[tiny], rtol=1e-3, atol=1e-30)
        np.testing.assert_allclose(got, np.asarray(computed), rtol=1e-6, atol=1e-7)   # the same ops as eager


def test_a_training_cell_is_exported_in_inference_mode(tmp_path):
    bn = nn.BatchNorm2d(3)
    bn.set_train(True)
    x = mindir_cases.graphjit_case("batchnorm2d_eval")[1]
    path = ms.export(bn, x, file_name=str(tmp_path / "bn"), file_format="MINDIR")
    assert bn.training
    bn.set_train(False)
    np.testing.assert_allclose(ms.load(path)(x), np.asarray(bn(x)), rtol=1e-6, atol=1e-6)


def maximum_nan(x, y):
    return np.maximum(x, y) + np.minimum(x, 0.0) + np.max(x, axis=1, keepdims=True)


def test_nan_propagates_as_in_numpy(tmp_path):
    """MindSpore's Maximum, Minimum and ReduceMax skip NaN: the written file keeps NumPy's NaN."""
    x = np.array([[1.0, np.nan, -2.0], [0.5, 2.0, 3.0]], np.float32)
    y = np.array([[np.nan, 1.0, -3.0], [1.0, np.nan, 2.0]], np.float32)
    path = ms.export(maximum_nan, x, y, file_name=str(tmp_path / "m"), file_format="MINDIR")
    np.testing.assert_array_equal(ms.load(path)(x, y), maximum_nan(x, y))


# --- MindSpore's files ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", MS_FILES)
def test_files_mindspore_exported_give_mindsporess_outputs(name):
    path = str(mindir_cases.FIXTURES / f"ms_{name}.mindir")
    with np.load(mindir_cases.FIXTURES / f"ms_{name}.npz") as saved:
        x = saved["input"]
        expected = [saved[f"output{k}"] for k in range(len(saved.files) - 1)]
    ms.load(path)       # protobuf's modules imported before watching
    with watch() as seen:
        graph = ms.load(path)
        out = nn.GraphCell(graph)(Tensor(x))
    seen.assert_none()
    outs = out if isinstance(out, tuple) else (out,)
    assert len(outs) == len(expected)
    for got, want in zip(outs, expected):
        assert isinstance(got, Tensor) and got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


def test_mindspore_fixtures_are_small():
    assert sum(p.stat().st_size for p in mindir_cases.FIXTURES.iterdir()) < 1_000_000
    assert {"dense", "conv_pool", "batchnorm", "activations", "tuple"} <= set(MS_FILES)


# --- refusals -------------------------------------------------------------------------------------------

def sorts(x):
    return np.sort(x) * 2.0


def int_floordiv(x):
    return x // 3


def nested_outputs(x):
    return x + 1.0, (x * 2.0, x)


@pytest.mark.parametrize("fn,x,message", [
    (sorts, np.ones((2, 3), np.float32), r"to MINDIR: `sort` no MindIR row"),
    (int_floordiv, np.ones((2, 3), np.int32), r"to MINDIR: `floordiv`"),
    (nested_outputs, np.ones((2, 3), np.float32), r"returns tuple.*an array or a tuple of arrays"),
])
def test_what_cannot_be_written_is_refused_naming_the_op_and_line(fn, x, message, tmp_path):
    with pytest.raises(ms.GraphjitError, match=message) as info:
        ms.export(fn, x, file_name=str(tmp_path / "m"), file_format="MINDIR")
    assert "test_export_mindir.py" in str(info.value)
    assert not list(tmp_path.iterdir())


def _crafted(tmp_path, prims=("Foo", "Bar"), name="crafted.mindir"):
    M = _messages()
    model = M["ModelProto"](ir_version="1.1", producer_name="test")
    g = model.graph
    g.name = "g"
    info = g.input.add(name="g:x")
    info.tensor.add(dims=[2], data_type=1)
    previous = "g:x"
    for k, prim in enumerate(prims):
        g.node.add(input=[previous], output=[f"n{k}"], name=f"n{k}", op_type=f"REF::{prim}:{k}")
        model.primitives.add(name=f"{prim}:{k}", op_type=prim, prim_type=2)
        previous = f"n{k}"
    g.output.add(name=previous).tensor.add(dims=[2], data_type=1)
    path = tmp_path / name
    path.write_bytes(model.SerializeToString())
    return str(path)


def test_unknown_primitives_are_named_in_one_error(tmp_path):
    with pytest.raises(ms.GraphjitError, match="does not read: Bar, Foo"):
        ms.load(_crafted(tmp_path))
    np.testing.assert_array_equal(ms.load(_crafted(tmp_path, ("ReLU", "Neg")))(np.array([-1.0, 2.0], np.float32)),
                                  [0.0, -2.0])


def test_air_is_still_refused(tmp_path):
    with pytest.raises(ms.GraphjitError, match="cannot export to AIR: .* GJIR, ONNX and MINDIR"):
        ms.export(nn.ReLU(), np.ones((2, 3), np.float32), file_name=str(tmp_path / "m"), file_format="AIR")


def test_without_protobuf_the_errors_say_what_to_install(tmp_path, monkeypatch):
    from graphjit.backends import mindir_proto
    path = ms.export(nn.ReLU(), np.ones((2, 3), np.float32), file_name=str(tmp_path / "m"), file_format="MINDIR")
    mindir_proto.messages.cache_clear()
    monkeypatch.setitem(sys.modules, "google.protobuf", None)
    try:
        with pytest.raises(ms.GraphjitError, match=r"pip install 'graphjit\[mindir\]'"):
            ms.export(nn.ReLU(), np.ones((2, 3), np.float32), file_name=str(tmp_path / "n"), file_format="MINDIR")
        assert not (tmp_path / "n.mindir").exists()
        with pytest.raises(ms.GraphjitError, match=r"cannot load .*m.mindir: .*pip install 'graphjit\[mindir\]'"):
            ms.load(path)
    finally:
        monkeypatch.undo()
        mindir_proto.messages.cache_clear()


@pytest.mark.parametrize("file_format", ["MINDIR", "ONNX"])
def test_exported_files_name_source_places_without_folders(tmp_path, file_format):
    """A node's place is `layers.py:31:13`: the exporter's folders never go into a file sent to others."""
    pytest.importorskip("onnx") if file_format == "ONNX" else None
    path = ms.export(nn.Dense(4, 2), np.ones((1, 4), np.float32), file_name=str(tmp_path / "dense"),
                     file_format=file_format)
    data = open(path, "rb").read()
    assert b"layers.py:" in data
    assert os.path.dirname(ms.__file__).encode() not in data
