"""The operations against hand-computed rows: map (column order, several outputs, Python
callables), batch (drop_remainder, per_batch_map, a batch-size function, ragged rows), shuffle,
repeat, take, skip, project, rename, zip, concat, split, filter; each error names the operation,
the column and the row."""

import time

import numpy as np
import pytest

import graphjit.dataset as ds
from graphjit.dataset import DatasetError, transforms


def numbers(n=10, **kwargs):
    return ds.NumpySlicesDataset({"a": np.arange(n), "b": np.arange(n) * 10}, shuffle=False, **kwargs)


def rows(dataset):
    return [[np.asarray(a).tolist() for a in row] for row in dataset.create_tuple_iterator(output_numpy=True)]


def test_map_replaces_the_input_column_in_place():
    mapped = numbers(4).map(lambda x: x + 1, "a")
    assert mapped.get_col_names() == ["a", "b"] and rows(mapped) == [[1, 0], [2, 10], [3, 20], [4, 30]]
    renamed = numbers(2).map(lambda x: x * 2, input_columns="b", output_columns="c")
    assert renamed.get_col_names() == ["a", "c"] and rows(renamed) == [[0, 0], [1, 20]]
    first = numbers(2).map([lambda x: x + 1, lambda x: x * 3])      # default: the first column, ops in order
    assert rows(first) == [[3, 0], [6, 10]]


def test_map_with_more_outputs_puts_them_first():
    """MindSpore's MapOp: a different number of outputs go first, then the untouched columns."""
    duplicated = numbers(2).map(transforms.Duplicate(), "b", ["b", "b2"])
    assert duplicated.get_col_names() == ["b", "b2", "a"] and rows(duplicated) == [[0, 0, 0], [10, 10, 1]]
    merged = numbers(2).map(lambda a, b: a + b, ["a", "b"], ["s"])
    assert merged.get_col_names() == ["s"] and rows(merged) == [[0], [11]]


def test_map_errors_name_the_operation_column_and_row():
    def fails_on_three(x):
        if x == 3:
            raise ValueError("three")
        return x
    with pytest.raises(DatasetError, match=r"map: fails_on_three failed on column 'a', row 3: ValueError: three"):
        rows(numbers().map(fails_on_three, "a"))
    with pytest.raises(DatasetError, match=r"map: column 'c' is not in the dataset \(its columns: a, b\)"):
        numbers().map(lambda x: x, "c")
    with pytest.raises(DatasetError, match=r"the operations give 2 column\(s\) .* output_columns names 1"):
        rows(numbers().map(lambda x: (x, x), "a"))
    from graphjit.dataset import vision
    images = ds.NumpySlicesDataset(np.ones((6, 4, 4, 3), np.uint8), ["image"], shuffle=False)
    with pytest.raises(DatasetError, match=r"map: Normalize failed on column 'image', row 0: ValueError: Normalize: "
                                           r"the image has 3 channels but mean and std have 2 values"):
        rows(images.map(vision.Normalize(mean=(1, 2), std=(1, 1)), "image"))


def test_map_with_parallel_workers_keeps_the_order():
    before = ds.config.get_block_rows()
    ds.config.set_block_rows(4)
    try:
        def jitter(x):
            time.sleep(0.002 * ((7 * int(x)) % 5))
            return x * 2
        dataset = numbers(40).map(jitter, "a", num_parallel_workers=4)
        assert [r[0] for r in rows(dataset)] == [2 * k for k in range(40)]
    finally:
        ds.config.set_block_rows(before)


def test_batch():
    assert rows(numbers(5).batch(2)) == [[[0, 1], [0, 10]], [[2, 3], [20, 30]], [[4], [40]]]
    dropped = numbers(5).batch(2, drop_remainder=True)
    assert rows(dropped) == [[[0, 1], [0, 10]], [[2, 3], [20, 30]]] and dropped.get_dataset_size() == 2
    assert numbers(5).batch(2).get_dataset_size() == 3 and numbers(5).batch(2).get_batch_size() == 2
    batch = next(numbers(5).batch(4).create_tuple_iterator(output_numpy=True))
    assert batch[0].shape == (4,) and batch[0].dtype == np.int64


def test_batch_across_blocks():
    before = ds.config.get_block_rows()
    ds.config.set_block_rows(3)
    try:
        assert [r[0] for r in rows(numbers(10).batch(4))] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    finally:
        ds.config.set_block_rows(before)


def test_batch_per_batch_map_and_batch_size_function():
    def add_batch_number(a, b, info):
        return [x + info.get_batch_num() * 100 for x in a], b
    assert rows(numbers(4).batch(2, per_batch_map=add_batch_number)) == [[[0, 1], [0, 10]], [[102, 103], [20, 30]]]
    sizes = numbers(6).batch(lambda info: info.get_batch_num() + 1)
    assert [r[0] for r in rows(sizes)] == [[0], [1, 2], [3, 4, 5]] and sizes.get_dataset_size() == 3
    swapped = numbers(2).batch(2, per_batch_map=lambda a, info: ([x * 0 for x in a], a), input_columns=["a"],
                               output_columns=["zero", "a2"])
    assert swapped.get_col_names() == ["zero", "a2", "b"] and rows(swapped) == [[[0, 0], [0, 1], [0, 10]]]


def test_ragged_rows_in_batch_name_the_column_and_row():
    ragged = ds.GeneratorDataset(lambda: (np.zeros(2 + (k == 3)) for k in range(6)), ["x"])
    with pytest.raises(DatasetError, match=r"batch: column 'x', row 3 has shape \(3,\) but row 2 \(the first of its "
                                           r"batch\) has shape \(2,\)"):
        rows(ragged.batch(2))
    mixed = ds.GeneratorDataset(lambda: iter([np.int32(1), np.int64(1)]), ["x"])
    with pytest.raises(DatasetError, match=r"batch: column 'x', row 1 has dtype int64 but row 0"):
        rows(mixed.batch(2))
    assert rows(ragged.batch(1))[3] == [[[0.0, 0.0, 0.0]]]


def test_shuffle_is_a_permutation_and_reproducible():
    ds.config.set_seed(7)
    once = [r[0] for r in rows(numbers(100).shuffle(10))]
    ds.config.set_seed(7)
    again = [r[0] for r in rows(numbers(100).shuffle(10))]
    assert sorted(once) == list(range(100)) and once != list(range(100)) and once == again
    with pytest.raises(ValueError):
        numbers().shuffle(1)
    epochs = numbers(20).shuffle(20).create_tuple_iterator(num_epochs=2, output_numpy=True)
    first, second = [int(r[0]) for r in epochs], [int(r[0]) for r in epochs]
    assert sorted(first) == sorted(second) == list(range(20)) and first != second     # a new order each epoch


def test_repeat_take_skip():
    assert [r[0] for r in rows(numbers(3).repeat(2))] == [0, 1, 2, 0, 1, 2]
    assert numbers(3).repeat(2).get_dataset_size() == 6 and numbers(3).repeat(2).get_repeat_count() == 2
    assert [r[0] for r in rows(numbers(3).repeat().take(7))] == [0, 1, 2, 0, 1, 2, 0]
    assert [r[0] for r in rows(numbers(5).take(2))] == [0, 1] and numbers(5).take(2).get_dataset_size() == 2
    assert [r[0] for r in rows(numbers(5).skip(3))] == [3, 4] and numbers(5).skip(9).get_dataset_size() == 0
    assert [r[0] for r in rows(numbers(5).skip(1).take(2))] == [1, 2]


def test_project_rename():
    assert rows(numbers(2).project(["b", "a"])) == [[0, 0], [10, 1]]
    renamed = numbers(2).rename(["a"], ["x"])
    assert renamed.get_col_names() == ["x", "b"]
    with pytest.raises(DatasetError, match="project: column 'z' is not in the dataset"):
        numbers().project("z")
    with pytest.raises(ValueError, match="repeat a name"):
        numbers().rename("a", "b")


def test_zip_and_concat():
    other = ds.NumpySlicesDataset({"c": np.arange(3) + 100}, shuffle=False)
    zipped = numbers(5).zip(other)
    assert zipped.get_col_names() == ["a", "b", "c"] and rows(zipped) == [[0, 0, 100], [1, 10, 101], [2, 20, 102]]
    assert zipped.get_dataset_size() == 3
    with pytest.raises(ValueError, match="column\\(s\\) a, b are in more than one dataset"):
        numbers().zip(numbers())
    joined = numbers(2) + numbers(3)
    assert [r[0] for r in rows(joined)] == [0, 1, 0, 1, 2] and joined.get_dataset_size() == 5
    with pytest.raises(ValueError, match="different columns"):
        numbers().concat(other)


def test_split():
    ds.config.set_seed(0)
    train, test = numbers(10).split([0.8, 0.2])
    first, second = sorted(r[0] for r in rows(train)), sorted(r[0] for r in rows(test))
    assert len(first) == 8 and len(second) == 2 and sorted(first + second) == list(range(10))
    assert sorted(r[0] for r in rows(train)) == first                # the same rows every epoch
    a, b = numbers(5).split([3, 2], randomize=False)
    assert [r[0] for r in rows(a)] == [0, 1, 2] and [r[0] for r in rows(b)] == [3, 4]
    mapped = numbers(10).map(lambda x: x, "a")                       # not a source: take/skip
    c, d = mapped.split([0.5, 0.5])
    left, right = [r[0] for r in rows(c)], [r[0] for r in rows(d)]
    assert sorted(left + right) == list(range(10)) and [r[0] for r in rows(c)] == left
    with pytest.raises(ValueError, match="sum to 11"):
        numbers(10).split([5, 6])


def test_filter():
    kept = numbers(10).filter(lambda a: a % 3 == 0, ["a"])
    assert [r[0] for r in rows(kept)] == [0, 3, 6, 9] and kept.get_dataset_size() == 4


def test_padded_batch():
    ragged = ds.GeneratorDataset(lambda: ((np.arange(k + 1), np.array([k])) for k in range(4)), ["x", "y"])
    padded = rows(ragged.padded_batch(2, pad_info={"x": ([4], -1)}))
    assert padded[0] == [[[0, -1, -1, -1], [0, 1, -1, -1]], [[0], [1]]]
    longest = rows(ragged.padded_batch(2, pad_info={}))
    assert longest[1][0] == [[0, 1, 2, 0], [0, 1, 2, 3]]
    with pytest.raises(DatasetError, match=r"padded_batch: column 'x', row 3 has shape \(4,\), larger than the pad "
                                           r"shape \(3,\)"):
        rows(ragged.padded_batch(2, pad_info={"x": ([3], 0)}))
