"""Reading MindRecord files: the rows of every shard, one page in memory at a time.

`rows(path)` is what `graphjit.dataset.MindDataset` iterates; `FileReader` is MindSpore's
`mindspore.mindrecord.FileReader`. A dataset written as several shards is read shard by shard, each
in its row order, as MindSpore's MindDataset reads it with `shuffle=False`.
"""

from __future__ import annotations

import os
from typing import Iterator

import numpy as np

from . import blob, msgpack_subset
from .errors import MindRecordError
from .layout import read_header, split_rows
from .schema import TYPES, blob_fields, raw_fields


class Dataset:
    """The files of one MindRecord dataset, their schema and row counts (headers only read)."""

    def __init__(self, paths):
        paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
        if not paths:
            raise MindRecordError("no MindRecord file given")
        first = os.fspath(paths[0])
        self.headers = {}
        if len(paths) == 1:   # one file of a dataset: its header names the others, in the same folder
            header = self._header(first)
            folder = os.path.dirname(first)
            paths = [os.path.join(folder, name) for name in header["shard_addresses"]]
        self.paths = [os.fspath(p) for p in paths]
        for p in self.paths:
            self._header(p)
        schemas = {repr(h["schema"]) for h in self.headers.values()}
        if len(schemas) > 1:
            raise MindRecordError(f"{self.paths[0]}: the files of one dataset have different schemas")
        self.schema = self.headers[self.paths[0]]["schema"]
        self.blob_names, self.raw_names = blob_fields(self.schema), raw_fields(self.schema)
        self.columns = sorted(self.schema)

    def _header(self, path: str) -> dict:
        if path not in self.headers:
            try:
                with open(path, "rb") as f:
                    self.headers[path] = read_header(path, f)
            except OSError as e:
                raise MindRecordError(f"{path}: cannot read: {e.strerror or e}") from None
        return self.headers[path]

    def shard_sizes(self) -> list[int]:
        return [sum(p["end"] - p["start"] for p in h["pages"] if p["type"] == "BLOB_DATA")
                for h in (self.headers[p] for p in self.paths)]

    def __len__(self) -> int:
        return sum(self.shard_sizes())

    def rows(self, columns=None) -> Iterator[dict]:
        """Every row, shard by shard: {column: value} with MindDataset's NumPy values."""
        for path in self.paths:
            yield from self._shard_rows(path, columns)

    def _shard_rows(self, path: str, columns) -> Iterator[dict]:
        header = self.headers[path]
        raw_pages = {}
        for page in header["pages"]:
            if page["type"] == "RAW_DATA":
                for group, offset in page["groups"]:
                    if group in raw_pages:
                        raise MindRecordError(f"{path}: row group {group} is in two RAW_DATA pages")
                    raw_pages[group] = (page, offset)
        blob_pages = sorted((p for p in header["pages"] if p["type"] == "BLOB_DATA"), key=lambda p: p["group"])
        try:
            f = open(path, "rb")
        except OSError as e:
            raise MindRecordError(f"{path}: cannot read: {e.strerror or e}") from None
        with f:
            for page in blob_pages:
                count = page["end"] - page["start"]
                where = f"{path}: row group {page['group']}"
                if page["group"] not in raw_pages:
                    raise MindRecordError(f"{where}: no RAW_DATA page holds its rows")
                blobs = split_rows(_read(f, page["offset"], page["used"], path), count, where + " (blobs)")
                raw_page, offset = raw_pages[page["group"]]
                raw = _read(f, raw_page["offset"], raw_page["used"], path)[offset:]
                scalars = split_rows(raw, count, where + " (scalars)")
                for r, (b, s) in enumerate(zip(blobs, scalars)):
                    at = f"{where}, row {page['start'] + r}"
                    row = blob.decode_row(self.schema, self.blob_names, b, at)
                    row.update(self._scalars(msgpack_subset.decode_map(s, at), at))
                    yield {c: row[c] for c in (columns or self.columns)}

    def _scalars(self, values: dict, where: str) -> dict:
        if not self.raw_names:
            values.pop("id", None)   # MindSpore stores {"id": 0} for rows with no scalar field
        if set(values) != set(self.raw_names):
            raise MindRecordError(f"{where}: the row's fields {sorted(values)} are not the schema's {self.raw_names}"[:300])
        out = {}
        for name in self.raw_names:
            kind, value = self.schema[name]["type"], values[name]
            if kind == "string":
                if not isinstance(value, str):
                    raise MindRecordError(f"{where}, field {name!r}: expected a string")
                out[name] = np.array(value)
                continue
            dtype = TYPES[kind][0]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or (dtype.kind == "i" and isinstance(value, float)):
                raise MindRecordError(f"{where}, field {name!r}: expected {kind}, found {type(value).__name__}")
            if dtype.kind == "i" and not np.iinfo(dtype).min <= value <= np.iinfo(dtype).max:
                raise MindRecordError(f"{where}, field {name!r}: {value} does not fit {kind}")
            out[name] = np.array(value, dtype=dtype)
        return out


def _read(f, offset: int, n: int, path: str) -> bytes:
    f.seek(offset)
    data = f.read(n)
    if len(data) != n:
        raise MindRecordError(f"{path}: the file ends inside a page")
    return data


def rows(paths, columns=None) -> Iterator[dict]:
    return Dataset(paths).rows(columns)


class FileReader:
    """MindSpore's `mindrecord.FileReader(file_name, num_consumer=4, columns=None, operator=None)`:
    `get_next()` yields each row as a dict (scalars as Python values, arrays as NumPy, bytes as bytes)."""

    def __init__(self, file_name, num_consumer: int = 4, columns=None, operator=None):
        self._dataset = Dataset(file_name)
        unknown = sorted(set(columns or ()) - set(self._dataset.columns))
        if unknown:
            raise MindRecordError(f"{self._dataset.paths[0]}: no column {unknown[0]!r}; the columns are {self._dataset.columns}")
        self._columns = list(columns) if columns else None
        self._closed = False

    def get_next(self):
        for row in self._dataset.rows(self._columns):
            if self._closed:
                return
            yield {k: _plain(v) for k, v in row.items()}

    def len(self) -> int:
        return len(self._dataset)

    def schema(self) -> dict:
        return {k: dict(v) for k, v in self._dataset.schema.items()}

    def close(self) -> None:
        self._closed = True


def _plain(value):
    if value.dtype.kind == "S":
        return value[0]
    if value.ndim == 0:
        return value.item()
    return value
