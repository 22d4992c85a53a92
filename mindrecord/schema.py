"""MindRecord schemas: which field types exist, which fields go to the blob pages, which are indexed.

A field is `{"type": T}` (a scalar) or `{"type": T, "shape": [...]}` (an array; at most one -1).
Arrays and `bytes` are *blob* fields, stored in BLOB_DATA pages; scalars are *raw* fields, stored as
a MessagePack map in RAW_DATA pages and, by default, indexed in the SQLite file.
"""

from __future__ import annotations

import re

import numpy as np

from .errors import MindRecordError

# type name -> NumPy dtype of its values (None: bytes), SQLite column type of an indexed scalar
TYPES = {
    "int32": (np.dtype("<i4"), "INTEGER"),
    "int64": (np.dtype("<i8"), "INTEGER"),
    "float32": (np.dtype("<f4"), "REAL"),
    "float64": (np.dtype("<f8"), "REAL"),
    "string": (None, "TEXT"),
    "bytes": (None, None),
}
ARRAY_TYPES = {"int32", "int64", "float32", "float64"}
FIELD_NAME = re.compile(r"^[0-9a-zA-Z_]{1,128}$")
MAX_FIELDS = 1024
MAX_DIMS = 32


def check_schema(schema, where: str) -> dict:
    """The schema as a dict of field -> {"type", optional "shape"}, or one MindRecordError."""
    if not isinstance(schema, dict) or not schema:
        raise MindRecordError(f"{where}: the schema must be a non-empty dict of fields")
    if len(schema) > MAX_FIELDS:
        raise MindRecordError(f"{where}: the schema has {len(schema)} fields (at most {MAX_FIELDS})")
    checked = {}
    for name, field in schema.items():
        if not isinstance(name, str) or not FIELD_NAME.match(name):
            raise MindRecordError(f"{where}: field name {name!r} is not letters, digits and underscores")
        if not isinstance(field, dict) or set(field) - {"type", "shape"} or field.get("type") not in TYPES:
            raise MindRecordError(f"{where}: field {name!r}: expected {{'type': one of {sorted(TYPES)}}}, "
                                  f"optionally with 'shape', got {field!r}"[:300])
        entry = {"type": field["type"]}
        if "shape" in field:
            shape = field["shape"]
            if field["type"] not in ARRAY_TYPES:
                raise MindRecordError(f"{where}: field {name!r}: a shape is allowed only for {sorted(ARRAY_TYPES)}")
            if (not isinstance(shape, list) or not 1 <= len(shape) <= MAX_DIMS
                    or any(type(d) is not int or d == 0 or d < -1 for d in shape)
                    or shape.count(-1) > 1):
                raise MindRecordError(f"{where}: field {name!r}: shape {shape!r} must be a list of positive "
                                      f"dimensions with at most one -1")
            entry["shape"] = list(shape)
        checked[name] = entry
    return checked


def blob_fields(schema: dict) -> list[str]:
    """The fields stored in blob pages, in MindSpore's (sorted) order."""
    return sorted(name for name, f in schema.items() if "shape" in f or f["type"] == "bytes")


def raw_fields(schema: dict) -> list[str]:
    return sorted(name for name in schema if name not in set(blob_fields(schema)))
