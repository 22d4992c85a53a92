"""MindSpore's `mindrecord.FileWriter`: rows of a schema written as MindRecord files MindSpore reads.

Rows go to the shards in turn (row k to shard k % shard_num). Each shard streams its pages to its
file as they fill (one blob page and one raw page in memory per shard); `commit()` writes each
file's header and its SQLite index.
"""

from __future__ import annotations

import os
import struct

import numpy as np

from . import blob, index_db, layout, msgpack_subset
from .errors import MindRecordError
from .schema import TYPES, blob_fields, check_schema, raw_fields

DEFAULT_HEADER_SIZE, DEFAULT_PAGE_SIZE = 1 << 24, 1 << 25


class _Shard:
    """One file being written: its open pages and its index entries."""

    def __init__(self, path: str, page_size: int, header_size: int):
        self.path, self.page_size, self.header_size = path, page_size, header_size
        self.file = open(path, "wb")
        self.pages: list[dict] = []
        self.next_page = 0
        self.rows = 0
        self.blob = self.raw = None       # the open pages: dict(page, data bytearray)
        self.groups = 0
        self.entries: list[tuple] = []
        self.saved = 0

    def _open(self, kind: str, group: int) -> dict:
        page = {"end_row_id": 0, "page_id": self.next_page, "page_size": 0, "page_type": kind,
                "page_type_id": group, "row_group_ids": [], "shard_id": 0, "start_row_id": 0}
        self.next_page += 1
        self.pages.append(page)
        return {"page": page, "data": bytearray()}

    def _flush(self, open_page: dict) -> None:
        page = open_page["page"]
        page["page_size"] = len(open_page["data"])
        self.file.seek(self.header_size + page["page_id"] * self.page_size)
        self.file.write(open_page["data"])

    def add(self, blob_bytes: bytes, raw_bytes: bytes, values: dict) -> None:
        b = struct.pack("<Q", len(blob_bytes)) + blob_bytes
        r = struct.pack("<Q", len(raw_bytes)) + raw_bytes
        for name, n in (("blob", len(b)), ("scalar", len(r))):
            if n > self.page_size:
                raise MindRecordError(f"{self.path}: a row's {name} data is {n} bytes, more than a page "
                                      f"({self.page_size}); raise it with FileWriter.set_page_size")
        blob_full = self.blob is None or len(self.blob["data"]) + len(b) > self.page_size
        raw_full = self.raw is None or len(self.raw["data"]) + len(r) > self.page_size
        if blob_full or raw_full:   # a new row group: a new blob page, in the raw page (or a new one)
            if self.blob is not None:
                self._flush(self.blob)
            self.blob = self._open("BLOB_DATA", self.groups)
            self.blob["page"].update(start_row_id=self.rows, end_row_id=self.rows, row_group_ids=[{"id": 0, "offset": 0}])
            self.groups += 1
            if raw_full:
                if self.raw is not None:
                    self._flush(self.raw)
                self.raw = self._open("RAW_DATA", sum(p["page_type"] == "RAW_DATA" for p in self.pages))
            self.raw["page"]["row_group_ids"].append({"id": self.blob["page"]["page_type_id"], "offset": len(self.raw["data"])})
        blob_at, raw_at = len(self.blob["data"]), len(self.raw["data"])
        self.blob["data"] += b
        self.raw["data"] += r
        self.blob["page"]["end_row_id"] = self.rows + 1
        self.entries.append((self.rows, self.raw["page"]["page_id"], raw_at, raw_at + len(r),
                             self.blob["page"]["page_type_id"], self.blob["page"]["page_id"], blob_at, blob_at + len(b),
                             values))
        self.rows += 1

    def close_pages(self) -> None:
        for open_page in (self.blob, self.raw):
            if open_page is not None:
                self._flush(open_page)
        self.blob = self.raw = None

    def finish(self, header: bytes) -> None:
        self.file.seek(0)
        self.file.write(header)
        self.file.close()


class FileWriter:
    """`FileWriter(file_name, shard_num=1, overwrite=False)`: `add_schema`, `add_index`,
    `write_raw_data`, `commit`, as in MindSpore 2.x."""

    def __init__(self, file_name, shard_num: int = 1, overwrite: bool = False):
        if not isinstance(file_name, (str, os.PathLike)) or not os.fspath(file_name):
            raise MindRecordError(f"FileWriter: file_name must be a path, got {file_name!r}")
        if type(shard_num) is not int or not 1 <= shard_num <= layout.MAX_SHARDS:
            raise MindRecordError(f"FileWriter: shard_num must be an integer in [1, {layout.MAX_SHARDS}], got {shard_num!r}")
        name = os.fspath(file_name)
        self._paths = [name] if shard_num == 1 else [f"{name}{k}" for k in range(shard_num)]
        for path in self._paths:
            for p in (path, path + ".db"):
                if os.path.exists(p):
                    if not overwrite:
                        raise MindRecordError(f"FileWriter: {p} exists; pass overwrite=True to replace it")
                    os.remove(p)
            if not os.path.isdir(os.path.dirname(os.path.abspath(path))):
                raise MindRecordError(f"FileWriter: the folder of {path} does not exist")
        self._schema = None
        self._desc = ""
        self._index = None
        self._header_size, self._page_size = DEFAULT_HEADER_SIZE, DEFAULT_PAGE_SIZE
        self._shards = None
        self._written = 0

    def set_header_size(self, header_size: int) -> None:
        self._before_writing("set_header_size")
        if type(header_size) is not int or not layout.MIN_HEADER <= header_size <= layout.MAX_HEADER:
            raise MindRecordError(f"set_header_size: {header_size!r} is not in [{layout.MIN_HEADER}, {layout.MAX_HEADER}]")
        self._header_size = header_size

    def set_page_size(self, page_size: int) -> None:
        self._before_writing("set_page_size")
        if type(page_size) is not int or not layout.MIN_PAGE <= page_size <= layout.MAX_PAGE:
            raise MindRecordError(f"set_page_size: {page_size!r} is not in [{layout.MIN_PAGE}, {layout.MAX_PAGE}]")
        self._page_size = page_size

    def add_schema(self, content: dict, desc: str = None) -> int:
        self._before_writing("add_schema")
        if self._schema is not None:
            raise MindRecordError("add_schema: a MindRecord file holds one schema, and it was added already")
        self._schema = check_schema(content, "add_schema")
        self._desc = "" if desc is None else str(desc)
        return 0

    def add_index(self, index_fields) -> None:
        self._before_writing("add_index")
        if self._schema is None:
            raise MindRecordError("add_index: add the schema first (add_schema)")
        fields = list(index_fields) if isinstance(index_fields, (list, tuple)) else None
        scalars = raw_fields(self._schema)
        if not fields or any(f not in scalars for f in fields):
            raise MindRecordError(f"add_index: index fields must be a list of the schema's scalar fields {scalars}")
        self._index = fields

    def _before_writing(self, what: str) -> None:
        if self._shards is not None:
            raise MindRecordError(f"{what}: call it before write_raw_data")

    def write_raw_data(self, raw_data, parallel_writer: bool = False) -> None:
        if self._schema is None:
            raise MindRecordError("write_raw_data: add the schema first (add_schema)")
        if not isinstance(raw_data, list) or not all(isinstance(r, dict) for r in raw_data):
            raise MindRecordError("write_raw_data: raw_data must be a list of dicts, one per row")
        if self._shards is None:
            self._shards = [_Shard(p, self._page_size, self._header_size) for p in self._paths]
        blobs, scalars = blob_fields(self._schema), raw_fields(self._schema)
        for row in raw_data:
            at = f"write_raw_data: row {self._written}"
            missing = sorted(set(self._schema) - set(row))
            if missing:
                raise MindRecordError(f"{at}: no value for field {missing[0]!r}")
            try:
                blob_bytes, saved = blob.encode_row(self._schema, blobs, row)
            except MindRecordError as e:
                raise MindRecordError(f"{at}: {e}") from None
            values = {name: self._scalar(name, row[name], at) for name in scalars}
            raw_bytes = msgpack_subset.encode_map(values if scalars else {"id": 0})
            shard = self._shards[self._written % len(self._shards)]
            shard.add(blob_bytes, raw_bytes, values)
            shard.saved += saved
            self._written += 1

    def _scalar(self, name: str, value, at: str):
        kind = self._schema[name]["type"]
        if kind == "string":
            if not isinstance(value, (str, np.str_)):
                raise MindRecordError(f"{at}: field {name!r} is a string; got {type(value).__name__}")
            return str(value)
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value.item()
        if isinstance(value, np.generic):
            value = value.item()
        dtype = TYPES[kind][0]
        if dtype.kind == "i":
            if isinstance(value, bool) or not isinstance(value, int):
                raise MindRecordError(f"{at}: field {name!r} is {kind}; got {type(value).__name__}")
            if not np.iinfo(dtype).min <= value <= np.iinfo(dtype).max:
                raise MindRecordError(f"{at}: field {name!r}: {value} does not fit {kind}")
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise MindRecordError(f"{at}: field {name!r} is {kind}; got {type(value).__name__}")
        return float(np.float32(value)) if kind == "float32" else float(value)

    def commit(self) -> None:
        if self._schema is None:
            raise MindRecordError("commit: add the schema first (add_schema)")
        if self._shards is None:
            self._shards = [_Shard(p, self._page_size, self._header_size) for p in self._paths]
        names = [os.path.basename(p) for p in self._paths]
        index = self._index if self._index is not None else raw_fields(self._schema)
        for k, shard in enumerate(self._shards):
            shard.close_pages()
            for page in shard.pages:
                page["shard_id"] = k
            header = layout.build_header(self._schema, self._desc, blob_fields(self._schema), index, shard.pages,
                                         self._header_size, self._page_size, names, k, shard.saved)
            shard.finish(header)
            index_db.write(shard.path + ".db", names[k], self._schema, index,
                           [(*e[:8], e[8]) for e in shard.entries])
