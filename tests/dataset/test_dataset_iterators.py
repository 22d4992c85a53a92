"""Iterators: Tensors or NumPy arrays, tuples or dicts, columns picked, epochs (num_epochs and
`for` over the same iterator), an early `break` that leaves no thread behind, errors raised in
order from the prefetch thread, and the dataset's properties."""

import threading
import time

import numpy as np
import pytest

import graphjit as ms
import graphjit.dataset as ds
from graphjit.dataset import DatasetError


def numbers(n=6):
    return ds.NumpySlicesDataset({"a": np.arange(n), "b": np.arange(n) * 10.0}, shuffle=False)


def test_tuple_and_dict_iterators():
    row = next(numbers().create_tuple_iterator())
    assert isinstance(row, list) and all(isinstance(a, ms.Tensor) for a in row)
    row = next(numbers().create_tuple_iterator(output_numpy=True))
    assert all(type(a) is np.ndarray for a in row)
    assert next(numbers().create_tuple_iterator(columns=["b"], output_numpy=True))[0].tolist() == 0.0
    item = next(numbers().create_dict_iterator())
    assert list(item) == ["a", "b"] and isinstance(item["b"], ms.Tensor) and item["b"].dtype == np.float64
    with pytest.raises(DatasetError, match="create_tuple_iterator: column 'c' is not in the dataset"):
        numbers().create_tuple_iterator(columns=["c"])


def test_epochs():
    iterator = numbers(3).create_tuple_iterator(num_epochs=2, output_numpy=True)
    assert [int(r[0]) for r in iterator] == [0, 1, 2]
    assert [int(r[0]) for r in iterator] == [0, 1, 2]
    assert list(iterator) == []                              # two epochs asked for, two given
    endless = numbers(2).create_tuple_iterator(output_numpy=True)
    for _ in range(3):
        assert len(list(endless)) == 2
    assert len(list(numbers(2))) == 2 and len(list(numbers(2))) == 2      # `for row in ds`: one epoch each time


def test_break_leaves_no_thread_running():
    before = threading.active_count()
    for _ in range(5):
        for row in ds.NumpySlicesDataset(np.arange(100000), shuffle=False).batch(2):
            break
    time.sleep(0.5)
    assert threading.active_count() <= before + 1


def test_error_arrives_after_the_rows_before_it():
    def fails_at_five(x):
        if x == 5:
            raise ValueError("five")
        return x
    seen = []
    with pytest.raises(DatasetError, match="row 5"):
        for row in numbers(8).map(fails_at_five, "a").create_tuple_iterator(output_numpy=True):
            seen.append(int(row[0]))
    assert seen == []       # the failing block holds rows 0..7: nothing of it is handed out


def test_properties():
    dataset = numbers(5).batch(2)
    assert dataset.get_col_names() == ["a", "b"]
    assert dataset.output_shapes() == [[2], [2]] and dataset.output_types() == [np.int64, np.float64]
    assert dataset.get_dataset_size() == 3 and dataset.get_batch_size() == 2 and dataset.get_repeat_count() == 1
    assert numbers().get_batch_size() == 1
