"""`MindDataset`: rows of MindRecord files (graphjit.mindrecord; written by MindSpore's FileWriter or
graphjit's), as `mindspore.dataset.MindDataset` gives them: columns in sorted order, numbers as
arrays of the schema's dtype, strings as NumPy str arrays, bytes as 1-element bytes arrays.

The files are read once, on first use, into memory (as MnistDataset reads its idx files); their
headers are read and checked when the dataset is made.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..mindrecord import MindRecordError
from ..mindrecord.reader import Dataset as MindRecordFiles
from .columns import stack
from .errors import DatasetError
from .sources import MappableSource
from .vision_datasets import LoadedOnce


class MindDataset(MappableSource):
    """`MindDataset(dataset_files, columns_list=None, num_parallel_workers=None, shuffle=None,
    num_shards=None, shard_id=None, sampler=None, padded_sample=None, num_padded=None,
    num_samples=None, cache=None)`. `dataset_files` is one file of a dataset (its other shards are
    found beside it, as the header lists them) or a list of files. Shuffled by default."""

    def __init__(self, dataset_files, columns_list=None, num_parallel_workers=None, shuffle=None, num_shards=None,
                 shard_id=None, sampler=None, padded_sample=None, num_padded=None, num_samples=None, cache=None):
        try:
            self.files = MindRecordFiles(dataset_files)
        except MindRecordError as e:
            raise DatasetError(f"MindDataset: {e}") from None
        names = self.files.columns
        if columns_list is not None:
            if not isinstance(columns_list, (list, tuple)) or not columns_list or not all(isinstance(c, str) for c in columns_list):
                raise TypeError(f"MindDataset: columns_list must be a non-empty list of column names, got {columns_list!r}")
            unknown = [c for c in columns_list if c not in names]
            if unknown:
                raise DatasetError(f"MindDataset: no column {unknown[0]!r} in {self.files.paths[0]}; its columns are {names}")
            names = list(columns_list)
        self.names = names
        self.padded = self._check_padding(padded_sample, num_padded)
        self._data = LoadedOnce(self._load)
        self._init_sampler(num_samples, shuffle, sampler, num_shards, shard_id, num_parallel_workers)

    def _check_padding(self, padded_sample, num_padded):
        if padded_sample is None and not num_padded:
            return None
        if not isinstance(padded_sample, dict) or isinstance(num_padded, bool) or \
                not isinstance(num_padded, numbers.Integral) or num_padded < 0:
            raise ValueError("MindDataset: padded_sample (a dict of every column) and num_padded (an int) go together")
        missing = [c for c in self.names if c not in padded_sample]
        if missing:
            raise ValueError(f"MindDataset: padded_sample has no value for column {missing[0]!r}")
        return {c: np.asarray(padded_sample[c]) for c in self.names}, int(num_padded)

    def _load(self):
        columns = {c: [] for c in self.names}
        try:
            for row in self.files.rows(self.names):
                for c in self.names:
                    columns[c].append(row[c])
        except MindRecordError as e:
            raise DatasetError(f"MindDataset: {e}") from None
        if self.padded:
            sample, count = self.padded
            for c in self.names:
                columns[c].extend([sample[c]] * count)
        return [columns[c] for c in self.names]

    def _col_names(self):
        return list(self.names)

    def _num_rows(self):
        return len(self.files) + (self.padded[1] if self.padded else 0)

    def _read(self, ids):
        data = self._data.get()
        return [stack([column[i] for i in ids.tolist()]) for column in data]
