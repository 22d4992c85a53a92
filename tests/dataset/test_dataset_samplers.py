"""The samplers against hand-computed ids: sequential, random (a permutation, or draws with
replacement), subsets, distributed shards (interleaved, wrapped to equal sizes), weighted, user
samplers, child samplers, and the conflicts MindSpore refuses."""

import numpy as np
import pytest

import graphjit.dataset as ds
from graphjit.dataset import DatasetError


def ids(sampler, n=10, **kwargs):
    dataset = ds.NumpySlicesDataset(np.arange(n), sampler=sampler, **kwargs)
    return [int(r[0]) for r in dataset.create_tuple_iterator(output_numpy=True)]


def test_sequential_sampler():
    assert ids(ds.SequentialSampler()) == list(range(10))
    assert ids(ds.SequentialSampler(start_index=3, num_samples=4)) == [3, 4, 5, 6]
    assert ids(ds.SequentialSampler(start_index=8, num_samples=5)) == [8, 9]
    with pytest.raises(DatasetError, match="start_index 12 is not below the dataset size 10"):
        ids(ds.SequentialSampler(start_index=12))


def test_random_sampler():
    ds.config.set_seed(1)
    got = ids(ds.RandomSampler())
    assert sorted(got) == list(range(10)) and got != list(range(10))
    assert len(ids(ds.RandomSampler(num_samples=4))) == 4
    drawn = ids(ds.RandomSampler(replacement=True, num_samples=8), n=3)
    assert len(drawn) == 3 and set(drawn) <= {0, 1, 2}        # num_samples is clamped to the size
    with pytest.raises(TypeError):
        ds.RandomSampler(replacement=1)


def test_subset_samplers():
    assert ids(ds.SubsetSampler([7, 2, 2, 5])) == [7, 2, 2, 5]
    assert ids(ds.SubsetSampler([7, 2, 5], num_samples=2)) == [7, 2]
    assert sorted(ids(ds.SubsetRandomSampler([1, 3, 5]))) == [1, 3, 5]
    assert ids([4, 1]) == [4, 1]                               # a list is a SubsetSampler
    with pytest.raises(DatasetError, match=r"SubsetSampler: index 10 \(item 1\) is out of range for a dataset of 10"):
        ids(ds.SubsetSampler([0, 10]))
    with pytest.raises(TypeError, match="Type of indices element must be int"):
        ds.SubsetSampler([0, 1.5])


def test_distributed_sampler_shards_interleave_and_wrap():
    shards = [ids(ds.DistributedSampler(4, k, shuffle=False)) for k in range(4)]
    assert shards == [[0, 4, 8], [1, 5, 9], [2, 6, 0], [3, 7, 1]]
    assert ids(ds.DistributedSampler(4, 1, shuffle=False, num_samples=2)) == [1, 5]
    shuffled = [ids(ds.DistributedSampler(2, k)) for k in range(2)]       # same seed: the shards agree
    assert sorted(shuffled[0] + shuffled[1]) == list(range(10))
    with pytest.raises(RuntimeError, match="shard_id must be in"):
        ds.DistributedSampler(2, 2)


def test_weighted_and_user_samplers():
    ds.config.set_seed(0)
    assert set(ids(ds.WeightedRandomSampler([0, 0, 1, 0], num_samples=6), n=4)) == {2}

    class Reverse(ds.Sampler):
        def __iter__(self):
            return iter(range(self.dataset_size - 1, -1, -1))
    assert ids(Reverse()) == list(range(9, -1, -1))
    assert ids(Reverse(num_samples=3)) == [9, 8, 7]
    assert ids(iter([3, 1])) == [3, 1]


def test_child_sampler_picks_first():
    parent = ds.SequentialSampler(start_index=1, num_samples=2)
    parent.add_child(ds.SubsetSampler([9, 8, 7, 6]))
    assert ids(parent) == [8, 7]


def test_conflicting_arguments():
    with pytest.raises(ValueError, match="Conflicting arguments"):
        ds.NumpySlicesDataset(np.arange(3), sampler=ds.SequentialSampler(), shuffle=False)
    with pytest.raises(RuntimeError, match="num_shards and shard_id"):
        ds.NumpySlicesDataset(np.arange(3), num_shards=2)
