"""MindDataset against MindSpore 2.10's reading of the same files (tests/fixtures/mindrecord): the same
columns, order and values; columns_list, shards, padding; strings stay NumPy; bad input in one line."""

import importlib.util
import json

import numpy as np
import pytest

import graphjit
import graphjit.dataset as ds
from graphjit.mindrecord import FileWriter
from locations import TESTS

FIXTURES = TESTS / "fixtures" / "mindrecord"
_spec = importlib.util.spec_from_file_location("record_with_mindspore", FIXTURES / "record_with_mindspore.py")
recorder = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(recorder)


@pytest.mark.parametrize("name, first", [("chapter", "chapter.mindrecord"), ("every_type", "every_type.mindrecord"),
                                         ("pages_and_shards", "pages_and_shards.mindrecord0")])
def test_rows_equal_mindspores(name, first):
    expected = json.loads((FIXTURES / f"{name}.expected.json").read_text())
    data = ds.MindDataset(str(FIXTURES / first), shuffle=False)
    assert data.get_col_names() == expected["columns"]
    assert data.get_dataset_size() == expected["size"]
    rows = [{k: recorder.column(v) for k, v in row.items()} for row in data.create_dict_iterator(output_numpy=True)]
    assert rows == expected["rows"]


def test_the_chapters_iteration_gives_tensors_and_string_arrays():
    rows = list(ds.MindDataset(str(FIXTURES / "chapter.mindrecord"), shuffle=False))
    data, file_name, label = rows[2]
    assert isinstance(data, graphjit.Tensor) and data.dtype == np.int32 and data.tolist() == [2, 2, 2]
    assert type(file_name) is np.ndarray and file_name.dtype == np.dtype("<U5") and str(file_name) == "2.jpg"
    assert isinstance(label, graphjit.Tensor) and label.shape == () and int(label) == 2


def test_columns_list_picks_and_orders_columns():
    data = ds.MindDataset(str(FIXTURES / "chapter.mindrecord"), columns_list=["label", "data"], shuffle=False)
    assert data.get_col_names() == ["label", "data"]
    assert [int(r[0]) for r in data] == [0, 1, 2, 3]


def test_shards_split_the_rows_and_shuffle_is_seeded():
    path = str(FIXTURES / "pages_and_shards.mindrecord0")
    parts = [sorted(int(r[0]) for r in ds.MindDataset(path, columns_list=["label"], num_shards=2, shard_id=k))
             for k in (0, 1)]
    everything = sorted(int(r[0]) for r in ds.MindDataset(path, columns_list=["label"]))
    assert sorted(parts[0] + parts[1]) == everything and len(parts[0]) == len(parts[1]) == 20
    graphjit.set_seed(5)
    first = [int(r[0]) for r in ds.MindDataset(path, columns_list=["label"])]
    graphjit.set_seed(5)
    assert first == [int(r[0]) for r in ds.MindDataset(path, columns_list=["label"])]


def test_padded_samples_are_appended():
    data = ds.MindDataset(str(FIXTURES / "chapter.mindrecord"), columns_list=["label"], shuffle=False,
                          padded_sample={"label": np.int32(-1)}, num_padded=2)
    assert [int(r[0]) for r in data] == [0, 1, 2, 3, -1, -1]


def test_graphjit_writes_what_mindDataset_reads_batched(tmp_path):
    path = str(tmp_path / "w.mindrecord")
    writer = FileWriter(path, shard_num=1)
    writer.add_schema({"x": {"type": "float32", "shape": [2, 3]}, "y": {"type": "int64"}}, "w")
    rng = np.random.default_rng(0)
    rows = [{"x": rng.standard_normal((2, 3)).astype(np.float32), "y": k} for k in range(10)]
    writer.write_raw_data(rows)
    writer.commit()
    batches = list(ds.MindDataset(path, shuffle=False).batch(4).create_tuple_iterator(output_numpy=True))
    assert [b[0].shape for b in batches] == [(4, 2, 3), (4, 2, 3), (2, 2, 3)]
    np.testing.assert_array_equal(np.concatenate([b[0] for b in batches]), np.stack([r["x"] for r in rows]))


def test_bad_input_is_one_line(tmp_path):
    with pytest.raises(ds.DatasetError, match="no column 'nope'"):
        ds.MindDataset(str(FIXTURES / "chapter.mindrecord"), columns_list=["nope"])
    bad = tmp_path / "bad.mindrecord"
    bad.write_bytes(b"\x05\0\0\0\0\0\0\0hello")
    with pytest.raises(ds.DatasetError, match=r"MindDataset: .*bad.mindrecord: not a MindRecord file") as info:
        ds.MindDataset(str(bad))
    assert "\n" not in str(info.value)
