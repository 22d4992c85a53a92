"""GeneratorDataset and NumpySlicesDataset: the three kinds of source, their defaults (a
random-access source is shuffled unless told not to), num_samples, column_types, sharding, and the
one-line errors for rows that do not fit the column names or types."""

import numpy as np
import pytest

import graphjit as ms
import graphjit.dataset as ds
from graphjit.dataset import DatasetError


def rows(dataset, **kwargs):
    return [[a.tolist() for a in row] for row in dataset.create_tuple_iterator(output_numpy=True, **kwargs)]


class RandomAccess:
    def __init__(self):
        self.data = np.arange(10).reshape(5, 2).astype(np.float64)
        self.label = np.arange(5)[:, None]

    def __getitem__(self, index):
        return self.data[index], self.label[index]

    def __len__(self):
        return len(self.data)


class Iterable:
    def __init__(self, start, end):
        self.start, self.end = start, end

    def __next__(self):
        return next(self.data)

    def __iter__(self):
        self.data = iter(range(self.start, self.end))
        return self


def test_random_access_source_is_read_by_index_and_shuffled_by_default():
    ds.config.set_seed(0)
    dataset = ds.GeneratorDataset(source=RandomAccess(), column_names=["data", "label"])
    got = rows(dataset)
    assert sorted(got) == [[[0.0, 1.0], [0]], [[2.0, 3.0], [1]], [[4.0, 5.0], [2]], [[6.0, 7.0], [3]], [[8.0, 9.0], [4]]]
    assert got != sorted(got) or rows(dataset) != got          # shuffled (two tries: 1/120 each to look sorted)
    ordered = ds.GeneratorDataset(RandomAccess(), ["data", "label"], shuffle=False)
    assert [r[1] for r in rows(ordered)] == [[0], [1], [2], [3], [4]]
    first = next(iter(ordered))
    assert isinstance(first, list) and isinstance(first[0], ms.Tensor) and first[0].dtype == np.float64


def test_a_list_is_random_access_and_an_iterable_or_generator_is_read_in_order():
    assert sorted(rows(ds.GeneratorDataset([np.array(0), np.array(1), np.array(2)], ["data"]))) == [[0], [1], [2]]
    assert rows(ds.GeneratorDataset(Iterable(1, 5), column_names=["data"])) == [[1], [2], [3], [4]]

    def my_generator(start, end):
        for i in range(start, end):
            yield i
    dataset = ds.GeneratorDataset(source=lambda: my_generator(3, 6), column_names=["data"])
    assert rows(dataset) == [[3], [4], [5]] and rows(dataset) == [[3], [4], [5]]    # called again each epoch
    assert dataset.get_dataset_size() == 3
    assert next(iter(dataset))[0].dtype == np.int64          # Python ints are int64, as in MindSpore


def test_generator_rows_as_tuples_num_samples_and_strings():
    dataset = ds.GeneratorDataset(lambda: ((i, float(i) / 2) for i in range(10)), ["a", "b"], num_samples=4)
    assert rows(dataset) == [[0, 0.0], [1, 0.5], [2, 1.0], [3, 1.5]]
    assert dataset.output_types() == [np.int64, np.float64] and dataset.get_dataset_size() == 4
    words = ds.GeneratorDataset(["ab", "cde"], "text", shuffle=False)
    assert [r[0] for r in words.create_tuple_iterator(output_numpy=True)] == ["ab", "cde"]


def test_shuffle_and_samplers_need_a_random_access_source():
    with pytest.raises(ValueError, match="shuffle is not supported"):
        ds.GeneratorDataset(Iterable(0, 3), ["x"], shuffle=True)
    with pytest.raises(ValueError, match="sampler is not supported"):
        ds.GeneratorDataset(Iterable(0, 3), ["x"], sampler=ds.SequentialSampler())
    with pytest.raises(TypeError, match="column_names is required"):
        ds.GeneratorDataset([1, 2])


def test_column_types_are_checked_not_cast():
    good = ds.GeneratorDataset([np.float32(1.0)], ["x"], column_types=[ms.float32], shuffle=False)
    assert rows(good) == [[1.0]]
    bad = ds.GeneratorDataset([np.float64(1.0), np.float64(2.0)], ["x"], column_types=[np.float32], shuffle=False)
    with pytest.raises(DatasetError, match=r"GeneratorDataset: column 'x', row 0 has dtype float64 but column_types "
                                           r"says float32"):
        rows(bad)


def test_rows_that_do_not_fit_the_column_names_and_a_raising_source():
    dataset = ds.GeneratorDataset(lambda: iter([(1, 2), (3,)]), ["a", "b"])
    with pytest.raises(DatasetError, match=r"GeneratorDataset: row 1 has 1 column\(s\) but column_names names 2"):
        rows(dataset)

    def broken():
        yield 1
        raise KeyError("gone")
    with pytest.raises(DatasetError, match=r"GeneratorDataset: the source raised at row 1: KeyError: 'gone'") as info:
        rows(ds.GeneratorDataset(broken, ["x"]))
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, ms.GraphjitError)
    assert "\n" not in str(info.value)


def test_sharded_generator_dataset():
    shards = [rows(ds.GeneratorDataset(list(range(10)), ["x"], shuffle=False, num_shards=3, shard_id=k))
              for k in range(3)]
    assert shards == [[[0], [3], [6], [9]], [[1], [4], [7], [0]], [[2], [5], [8], [1]]]


def test_numpy_slices_dataset_columns():
    data = ds.NumpySlicesDataset([[1, 2], [3, 4], [5, 6]], column_names=["col1"], shuffle=False)
    assert rows(data) == [[[1, 2]], [[3, 4]], [[5, 6]]]
    assert data.get_col_names() == ["col1"]
    two = ds.NumpySlicesDataset(([1, 2], [3, 4]), shuffle=False)
    assert two.get_col_names() == ["column_0", "column_1"] and rows(two) == [[1, 3], [2, 4]]
    named = ds.NumpySlicesDataset({"a": [1, 2], "b": [3.0, 4.0]}, shuffle=False)
    assert named.get_col_names() == ["a", "b"] and rows(named) == [[1, 3.0], [2, 4.0]]
    with pytest.raises(ValueError, match="different lengths"):
        ds.NumpySlicesDataset(([1, 2], [3]))
    ds.config.set_seed(3)
    shuffled = rows(ds.NumpySlicesDataset(np.arange(20)))
    assert sorted(shuffled) == [[k] for k in range(20)] and shuffled != [[k] for k in range(20)]


def test_num_samples_with_shuffle_draws_with_replacement_as_mindspore():
    """MindSpore's select_sampler: shuffle (or its default) with num_samples is RandomSampler(replacement=True)."""
    dataset = ds.NumpySlicesDataset(np.arange(5), num_samples=50)
    assert isinstance(dataset.sampler, ds.RandomSampler) and dataset.sampler.replacement
    assert dataset.get_dataset_size() == 5          # clamped to the source's size, as MindSpore's sampler does
    plain = ds.NumpySlicesDataset(np.arange(5), num_samples=3, shuffle=False)
    assert rows(plain) == [[0], [1], [2]]


def test_random_access_source_read_by_several_workers_keeps_the_order():
    import time

    class Slow:
        def __getitem__(self, i):
            time.sleep(0.001 * (i % 3))
            return np.array(i)

        def __len__(self):
            return 30
    dataset = ds.GeneratorDataset(Slow(), ["x"], shuffle=False, num_parallel_workers=4)
    assert rows(dataset) == [[k] for k in range(30)]
    with pytest.raises(DatasetError, match=r"GeneratorDataset: source\[3\] raised IndexError: no"):
        rows(ds.GeneratorDataset(Broken(), ["x"], shuffle=False, num_parallel_workers=2))


class Broken:
    def __getitem__(self, i):
        if i == 3:
            raise IndexError("no")
        return np.array(i)

    def __len__(self):
        return 5
