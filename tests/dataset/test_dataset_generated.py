"""Generated pipelines against a reference on plain lists: random sizes, block sizes and chains of
batch / take / skip / repeat / map / concat / zip / project, so that rows crossing block
boundaries are never dropped, repeated or reordered (and batches of batches of different sizes
are refused, as MindSpore refuses them). Profiles: tests/conftest.py
(GRAPHJIT_HYPOTHESIS_PROFILE=long for 2 000 pipelines)."""

import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import graphjit.dataset as ds
from graphjit.dataset import DatasetError

PROFILE = "graphjit-" + os.environ.get("GRAPHJIT_HYPOTHESIS_PROFILE", "ci")

STEP = st.one_of(
    st.tuples(st.just("batch"), st.integers(1, 5), st.booleans()),
    st.tuples(st.just("take"), st.integers(1, 12)),
    st.tuples(st.just("skip"), st.integers(0, 6)),
    st.tuples(st.just("repeat"), st.integers(1, 3)),
    st.tuples(st.just("map")),
    st.tuples(st.just("concat"), st.integers(0, 7)),
    st.tuples(st.just("zip"), st.integers(0, 12)),
)


def reference(rows, steps):
    """The pipeline on lists of row tuples: what each operation means."""
    for step in steps:
        kind = step[0]
        if kind == "batch":
            size, drop = step[1], step[2]
            groups = [rows[k:k + size] for k in range(0, len(rows), size)]
            if drop and groups and len(groups[-1]) < size:
                groups.pop()
            for g in groups:
                if any(len({shape(r[c]) for r in g}) > 1 for c in range(len(g[0]))):
                    raise Ragged
            rows = [tuple(tuple(r[c] for r in g) for c in range(len(g[0]))) for g in groups]
        elif kind == "take":
            rows = rows[:step[1]]
        elif kind == "skip":
            rows = rows[step[1]:]
        elif kind == "repeat":
            rows = rows * step[1]
        elif kind == "map":
            rows = [(_plus_one(r[0]),) + tuple(r[1:]) for r in rows]
        elif kind == "concat":
            rows = rows + rows[:step[1]]
        elif kind == "zip":
            rows = [r + (k,) for r, k in zip(rows, range(step[1]))]
    return rows


class Ragged(Exception):
    """The reference's rows of a batch differ in shape: the pipeline must refuse them."""


def shape(value):
    return (len(value),) + shape(value[0]) if isinstance(value, tuple) else ()


def _plus_one(value):
    return tuple(_plus_one(v) for v in value) if isinstance(value, tuple) else value + 1


def as_tuple(value):
    array = np.asarray(value)
    return array.item() if array.ndim == 0 else tuple(as_tuple(v) for v in array)


def build(n, steps):
    dataset = ds.NumpySlicesDataset({"c0": np.arange(n), "c1": np.arange(n) * 10}, shuffle=False)
    columns = 2
    for step in steps:
        kind = step[0]
        if kind == "batch":
            dataset = dataset.batch(step[1], drop_remainder=step[2])
        elif kind == "take":
            dataset = dataset.take(step[1])
        elif kind == "skip":
            dataset = dataset.skip(step[1])
        elif kind == "repeat":
            dataset = dataset.repeat(step[1])
        elif kind == "map":
            dataset = dataset.map(lambda x: x + 1, dataset.get_col_names()[0])
        elif kind == "concat":
            dataset = dataset + dataset.take(step[1]) if step[1] else dataset + dataset.take(1).skip(1)
        elif kind == "zip":
            name = f"c{columns}"
            columns += 1
            dataset = dataset.zip(ds.NumpySlicesDataset({name: np.arange(step[1])}, shuffle=False))
    return dataset


@settings(settings.get_profile(PROFILE))
@given(n=st.integers(0, 20), block_rows=st.integers(1, 9), steps=st.lists(STEP, max_size=5))
def test_generated_pipeline_equals_the_list_reference(n, block_rows, steps):
    before = ds.config.get_block_rows()
    ds.config.set_block_rows(block_rows)
    try:
        dataset = build(n, steps)
        try:
            expected = reference([(k, 10 * k) for k in range(n)], steps)
        except Ragged:
            with pytest.raises(DatasetError, match="rows of a batch need one shape"):
                list(dataset.create_tuple_iterator(output_numpy=True))
            return
        got = [tuple(as_tuple(a) for a in row) for row in dataset.create_tuple_iterator(output_numpy=True)]
        assert got == expected
        assert dataset.get_dataset_size() == len(expected)
    finally:
        ds.config.set_block_rows(before)
