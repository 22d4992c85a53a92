"""A MindRecord row's blob: its array and bytes fields, as BLOB_DATA pages store them.

A row's blob is its fields in sorted order; with more than one blob field each is preceded by its
length (8 bytes, big-endian). `bytes` fields and float arrays are their raw little-endian bytes.
int32/int64 arrays are compressed as MindSpore 2.x compresses them: the element count (4 bytes,
big-endian), then two bits per element giving its width (00: 1 byte, 01: 2, 10: 4, 11: 8; most
significant bits first), then each element, little-endian and signed, in its width. A row with no
blob field stores four zero bytes.
"""

from __future__ import annotations

import struct

import numpy as np

from .errors import MindRecordError
from .schema import TYPES

_WIDTHS = (1, 2, 4, 8)
_SIGNED = {1: "<i1", 2: "<i2", 4: "<i4", 8: "<i8"}
EMPTY = b"\0\0\0\0"


def encode_row(schema: dict, fields: list[str], row: dict) -> tuple[bytes, int]:
    """The blob of one row, and the bytes its integer compression saved (MindSpore's compression_size)."""
    if not fields:
        return EMPTY, 0
    parts, saved = [], 0
    for name in fields:
        payload, s = _encode_field(name, schema[name], row[name])
        saved += s
        parts.append(payload if len(fields) == 1 else struct.pack(">Q", len(payload)) + payload)
    return b"".join(parts), saved


def _encode_field(name: str, field: dict, value) -> tuple[bytes, int]:
    if field["type"] == "bytes":
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise MindRecordError(f"field {name!r} is bytes; got {type(value).__name__}")
        return bytes(value), 0
    dtype = TYPES[field["type"]][0]
    array = np.asarray(value)
    if array.dtype.kind not in "biuf" or (array.dtype.kind == "f" and dtype.kind == "i"):
        raise MindRecordError(f"field {name!r} is an array of {field['type']}; got {array.dtype}")
    if dtype.kind == "i" and array.size and (array.min() < np.iinfo(dtype).min or array.max() > np.iinfo(dtype).max):
        raise MindRecordError(f"field {name!r}: a value does not fit {field['type']}")
    array = array.astype(dtype).reshape(-1)
    _check_shape(name, field["shape"], array.size, f"field {name!r}")
    if dtype.kind == "f":
        return array.tobytes(), 0
    packed = _compress(array)
    return packed, array.nbytes - len(packed)


def _compress(values: np.ndarray) -> bytes:
    v = values.astype(np.int64)
    codes = np.full(v.shape, 3, np.uint8)
    for code, width in ((2, 4), (1, 2), (0, 1)):
        bound = 1 << (8 * width - 1)
        codes[(v >= -bound) & (v < bound)] = code
    packed = np.zeros((len(v) + 3) // 4, np.uint8)
    for k in range(4):
        part = codes[k::4]
        packed[:len(part)] |= part << (6 - 2 * k)
    widths = np.array(_WIDTHS)[codes] if len(v) else np.zeros(0, np.int64)
    starts = np.cumsum(widths) - widths
    body = np.zeros(int(widths.sum()), np.uint8)
    for width in _WIDTHS:   # each element little-endian in its width, one vectorized scatter per width
        mask = widths == width
        if mask.any():
            data = v[mask].astype(_SIGNED[width]).view(np.uint8).reshape(-1, width)
            body[starts[mask][:, None] + np.arange(width)] = data
    body = body.tobytes()
    return struct.pack(">I", len(v)) + packed.tobytes() + body


def decode_row(schema: dict, fields: list[str], blob: bytes, where: str) -> dict:
    """The blob fields of one row, as MindDataset yields them (arrays; bytes as a 1-element |S array)."""
    if not fields:
        return {}
    if len(fields) == 1:
        chunks = [blob]
    else:
        chunks, pos = [], 0
        for name in fields:
            if pos + 8 > len(blob):
                raise MindRecordError(f"{where}: the blob ends before field {name!r}")
            n = struct.unpack(">Q", blob[pos:pos + 8])[0]
            if n > len(blob) - pos - 8:
                raise MindRecordError(f"{where}: field {name!r} claims {n} bytes; the blob has {len(blob) - pos - 8}")
            chunks.append(blob[pos + 8:pos + 8 + n])
            pos += 8 + n
        if pos != len(blob):
            raise MindRecordError(f"{where}: {len(blob) - pos} bytes after the last blob field")
    return {name: _decode_field(name, schema[name], chunk, f"{where}, field {name!r}")
            for name, chunk in zip(fields, chunks)}


def _decode_field(name: str, field: dict, data: bytes, where: str):
    if field["type"] == "bytes":
        return np.array([data], dtype=f"S{max(len(data), 1)}")
    dtype = TYPES[field["type"]][0]
    if dtype.kind == "f":
        if len(data) % dtype.itemsize:
            raise MindRecordError(f"{where}: {len(data)} bytes is not a whole number of {field['type']}")
        values = np.frombuffer(data, dtype).copy()
    else:
        values = _decompress(data, dtype, where)
    return values.reshape(_check_shape(name, field["shape"], values.size, where))


def _decompress(data: bytes, dtype: np.dtype, where: str) -> np.ndarray:
    if len(data) < 4:
        raise MindRecordError(f"{where}: a compressed integer array shorter than its count")
    n = struct.unpack(">I", data[:4])[0]
    code_bytes = (n + 3) // 4
    if 4 + code_bytes + n > len(data):
        raise MindRecordError(f"{where}: {n} integers cannot fit in {len(data)} bytes")
    packed = np.frombuffer(data, np.uint8, code_bytes, 4)
    codes = np.stack([(packed >> (6 - 2 * k)) & 3 for k in range(4)], axis=1).reshape(-1)[:n]
    widths = np.array(_WIDTHS)[codes] if n else np.zeros(0, np.int64)
    if 4 + code_bytes + int(widths.sum()) != len(data):
        raise MindRecordError(f"{where}: a compressed integer array's widths do not add up to its bytes")
    out = np.empty(n, np.int64)
    starts = 4 + code_bytes + np.cumsum(widths) - widths      # where each element begins
    raw = np.frombuffer(data, np.uint8)
    for width in _WIDTHS:   # one vectorized gather per width
        mask = widths == width
        if mask.any():
            gathered = raw[starts[mask][:, None] + np.arange(width)].reshape(-1)
            out[mask] = np.frombuffer(gathered.tobytes(), _SIGNED[width]).astype(np.int64)
    if dtype.itemsize == 4 and n and (out.min() < -(1 << 31) or out.max() >= 1 << 31):
        raise MindRecordError(f"{where}: a value does not fit int32")
    return out.astype(dtype)


def _check_shape(name: str, shape: list[int], size: int, where: str) -> tuple[int, ...]:
    known = 1
    for d in shape:
        if d != -1:
            known *= d
    if -1 in shape:
        if size % known:
            raise MindRecordError(f"{where}: {size} values do not fill shape {shape}")
        return tuple(size // known if d == -1 else d for d in shape)
    if size != known:
        raise MindRecordError(f"{where}: {size} values for shape {shape}")
    return tuple(shape)
