"""graphjit.mindrecord against MindSpore 2.10's own files (tests/fixtures/mindrecord, recorded by
record_with_mindspore.py): graphjit reads what MindSpore wrote exactly as MindSpore reads it, and
graphjit's files hold the same bytes where MindSpore's layout is fixed and read back the same."""

import importlib.util
import json
import os
import sqlite3
import struct

import numpy as np
import pytest

from graphjit.mindrecord import FileReader, FileWriter, MindRecordError
from graphjit.mindrecord.reader import Dataset
from locations import TESTS

FIXTURES = TESTS / "fixtures" / "mindrecord"
_spec = importlib.util.spec_from_file_location("record_with_mindspore", FIXTURES / "record_with_mindspore.py")
recorder = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(recorder)
CASES = recorder.cases()


def first_file(folder, name, shards):
    return os.path.join(folder, name + ".mindrecord" + ("" if shards == 1 else "0"))


def read_as_json(path):
    data = Dataset(path)
    rows = [{k: recorder.column(v) for k, v in row.items()} for row in data.rows()]
    return {"columns": data.columns, "size": len(data), "rows": rows}


def write_cases(folder):
    """Every case written by graphjit's FileWriter with MindSpore's small sizes, into `folder`."""
    for name, (schema, rows, shards) in CASES.items():
        writer = FileWriter(os.path.join(folder, name + ".mindrecord"), shard_num=shards, overwrite=True)
        writer.set_header_size(1 << 14)
        writer.set_page_size(1 << 15)
        writer.add_schema(schema, name)
        for row in rows:
            writer.write_raw_data([row])
        writer.commit()


@pytest.mark.parametrize("name", sorted(CASES))
def test_reads_mindspore_files_as_mindspore_does(name):
    _, _, shards = CASES[name]
    expected = json.loads((FIXTURES / f"{name}.expected.json").read_text())
    assert read_as_json(first_file(FIXTURES, name, shards)) == expected


@pytest.mark.parametrize("name", sorted(CASES))
def test_graphjit_files_read_back_like_mindspore_files(name, tmp_path):
    write_cases(tmp_path)
    _, rows, shards = CASES[name]
    got = read_as_json(first_file(tmp_path, name, shards))
    expected = json.loads((FIXTURES / f"{name}.expected.json").read_text())
    assert got["columns"] == expected["columns"] and got["size"] == expected["size"]
    if shards == 1:   # MindSpore spreads rows over shards its own way; one shard keeps the order
        assert got["rows"] == expected["rows"]
    else:
        key = lambda r: json.dumps(r, sort_keys=True)
        assert sorted(map(key, got["rows"])) == sorted(map(key, expected["rows"]))


def test_one_shard_files_have_mindspores_bytes(tmp_path):
    """Header aside (key order and spacing of its JSON may differ), the pages are MindSpore's bytes."""
    write_cases(tmp_path)
    for name in ("chapter", "every_type"):
        ours = open(tmp_path / f"{name}.mindrecord", "rb").read()
        theirs = open(FIXTURES / f"{name}.mindrecord", "rb").read()
        assert len(ours) == len(theirs)
        assert ours[1 << 14:] == theirs[1 << 14:]
        header = lambda d: json.loads(d[8:8 + struct.unpack("<Q", d[:8])[0]])
        assert header(ours) == header(theirs)


def test_index_database_matches_mindspores(tmp_path):
    write_cases(tmp_path)
    for name in ("chapter", "every_type"):
        def dump(path):
            db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            try:
                return (db.execute("select * from INDEXES order by ROW_ID").fetchall(),
                        db.execute("select * from SHARD_NAME").fetchall(),
                        [c[1] for c in db.execute("pragma table_info(INDEXES)")])
            finally:
                db.close()
        assert dump(tmp_path / f"{name}.mindrecord.db") == dump(FIXTURES / f"{name}.mindrecord.db")


def test_file_reader_gives_python_scalars_and_arrays():
    reader = FileReader(str(FIXTURES / "chapter.mindrecord"))
    rows = list(reader.get_next())
    reader.close()
    assert [r["file_name"] for r in rows] == ["0.jpg", "1.jpg", "2.jpg", "3.jpg"]
    assert [r["label"] for r in rows] == [0, 1, 2, 3]
    np.testing.assert_array_equal(rows[3]["data"], np.array([3, 3, 3, 3], np.int32))


def test_rows_spill_over_many_pages_and_groups(tmp_path):
    path = str(tmp_path / "big.mindrecord")
    writer = FileWriter(path, shard_num=1)
    writer.set_page_size(1 << 15)
    writer.add_schema({"a": {"type": "float64", "shape": [-1]}, "s": {"type": "string"}})
    rng = np.random.default_rng(0)
    rows = [{"a": rng.standard_normal(int(rng.integers(1, 900))), "s": "x" * int(rng.integers(0, 400))} for _ in range(300)]
    writer.write_raw_data(rows)
    writer.commit()
    got = list(Dataset(path).rows())
    assert len(got) == 300
    for g, r in zip(got, rows):
        np.testing.assert_array_equal(g["a"], r["a"])
        assert str(g["s"]) == r["s"]


@pytest.mark.parametrize("bad, message", [
    ({"a": {"type": "complex"}}, "expected"),
    ({"a b": {"type": "int32"}}, "letters"),
    ({"a": {"type": "string", "shape": [2]}}, "shape is allowed only"),
    ({"a": {"type": "int32", "shape": [-1, -1]}}, "at most one -1"),
])
def test_bad_schemas_are_refused(tmp_path, bad, message):
    writer = FileWriter(str(tmp_path / "x.mindrecord"))
    with pytest.raises(MindRecordError, match=message):
        writer.add_schema(bad)


def test_bad_rows_are_refused_naming_the_row_and_field(tmp_path):
    writer = FileWriter(str(tmp_path / "x.mindrecord"))
    writer.add_schema({"label": {"type": "int32"}, "data": {"type": "int32", "shape": [2]}})
    writer.write_raw_data([{"label": 1, "data": np.array([1, 2])}])
    with pytest.raises(MindRecordError, match=r"row 1: field 'label': 4294967296 does not fit int32"):
        writer.write_raw_data([{"label": 2**32, "data": np.array([1, 2])}])
    with pytest.raises(MindRecordError, match=r"row 1: no value for field 'data'"):
        writer.write_raw_data([{"label": 1}])
    with pytest.raises(MindRecordError, match=r"row 1: .*3 values for shape \[2\]"):
        writer.write_raw_data([{"label": 1, "data": np.array([1, 2, 3])}])


def test_existing_files_are_kept_unless_overwrite(tmp_path):
    path = tmp_path / "x.mindrecord"
    path.write_bytes(b"mine")
    with pytest.raises(MindRecordError, match="overwrite=True"):
        FileWriter(str(path))
    assert path.read_bytes() == b"mine"
