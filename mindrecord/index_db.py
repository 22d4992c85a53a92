"""The SQLite index MindSpore keeps beside each MindRecord file (`<file>.db`): where each row is.

graphjit's reader does not need it (the header locates every row), but MindSpore's does, so
FileWriter writes it as MindSpore 2.x does: table INDEXES, one row per record with its raw and blob
page and offsets and the indexed scalar fields (`<field>_0`, each after an `INC_k` column), and table
SHARD_NAME with the file's name.
"""

from __future__ import annotations

import os
import sqlite3

from .schema import TYPES

_FIXED = ["ROW_ID", "PAGE_ID_RAW", "PAGE_OFFSET_RAW", "PAGE_OFFSET_RAW_END", "ROW_GROUP_ID", "PAGE_ID_BLOB",
          "PAGE_OFFSET_BLOB", "PAGE_OFFSET_BLOB_END"]


def write(path: str, shard_name: str, schema: dict, index_fields: list[str], entries: list[tuple]) -> None:
    """Write `path` (replacing it): `entries` are (the eight fixed columns..., {field: value})."""
    if os.path.exists(path):
        os.remove(path)
    columns = "  ".join(f"{c:<20} INT  NOT NULL," for c in _FIXED)
    extra = "".join(f"INC_{k} INT, {f}_0 {TYPES[schema[f]['type']][1]}," for k, f in enumerate(index_fields))
    key = ",".join(["ROW_ID"] + [f"INC_{k}" for k in range(len(index_fields))])
    db = sqlite3.connect(path)
    try:
        db.execute(f"CREATE TABLE INDEXES(  {columns}{extra} PRIMARY KEY({key}))")
        db.execute("CREATE TABLE SHARD_NAME(NAME TEXT NOT NULL)")
        db.execute("INSERT INTO SHARD_NAME VALUES (?)", (shard_name,))
        marks = ",".join("?" * (len(_FIXED) + 2 * len(index_fields)))
        db.executemany(f"INSERT INTO INDEXES VALUES ({marks})",
                       [(*fixed, *[v for f in index_fields for v in (0, values[f])]) for *fixed, values in entries])
        db.commit()
    finally:
        db.close()
