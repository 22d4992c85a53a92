"""The part of MessagePack a MindRecord row's scalars use: one map of field name -> int, float, str.

MindSpore writes RAW_DATA rows with nlohmann::json's `to_msgpack`: integers in their smallest form
(unsigned when non-negative), a float as float32 when that loses nothing, else float64, strings as
UTF-8. The decoder reads exactly that shape and refuses anything else (nested containers, binary,
extension types), so a hostile row can neither nest nor make it allocate more than the row's bytes.
"""

from __future__ import annotations

import math
import struct

from .errors import MindRecordError


def encode_map(row: dict) -> bytes:
    """A map of str -> int | float | str, keys in the given order."""
    out = bytearray(_header(len(row), 0x80, 15, 0xDE, 0xDF))
    for key, value in row.items():
        _encode(out, key)
        _encode(out, value)
    return bytes(out)


def _header(n: int, fix: int, fixmax: int, c16: int, c32: int) -> bytes:
    if n <= fixmax:
        return bytes([fix | n])
    if n < 1 << 16:
        return bytes([c16]) + struct.pack(">H", n)
    return bytes([c32]) + struct.pack(">I", n)


def _encode(out: bytearray, value) -> None:
    if isinstance(value, bool):
        out.append(0xC3 if value else 0xC2)
    elif isinstance(value, int):
        if 0 <= value < 128:
            out.append(value)
        elif value >= 0:
            for code, fmt, top in ((0xCC, ">B", 1 << 8), (0xCD, ">H", 1 << 16), (0xCE, ">I", 1 << 32), (0xCF, ">Q", 1 << 64)):
                if value < top:
                    out.append(code); out += struct.pack(fmt, value); return
            raise ValueError(f"integer {value} does not fit 64 bits")
        elif value >= -32:
            out.append(value & 0xFF)
        else:
            for code, fmt, bottom in ((0xD0, ">b", -(1 << 7)), (0xD1, ">h", -(1 << 15)), (0xD2, ">i", -(1 << 31)), (0xD3, ">q", -(1 << 63))):
                if value >= bottom:
                    out.append(code); out += struct.pack(fmt, value); return
            raise ValueError(f"integer {value} does not fit 64 bits")
    elif isinstance(value, float):
        try:
            single = struct.unpack(">f", struct.pack(">f", value))[0]
        except OverflowError:
            single = None
        exact = single is not None and (single == value or (math.isnan(value) and math.isnan(single)))
        if exact and math.copysign(1.0, single) == math.copysign(1.0, value):
            out.append(0xCA); out += struct.pack(">f", value)
        else:
            out.append(0xCB); out += struct.pack(">d", value)
    elif isinstance(value, str):
        data = value.encode("utf-8")
        out += _header(len(data), 0xA0, 31, 0xDA, 0xDB) if len(data) < 32 or len(data) >= 256 else bytes([0xD9, len(data)])
        out += data
    else:
        raise TypeError(f"MindRecord raw fields hold int, float or str, not {type(value).__name__}")


def decode_map(data: bytes, where: str) -> dict:
    """The map one RAW_DATA row holds; MindRecordError naming `where` for anything else."""
    reader = _Reader(data, where)
    code = reader.byte()
    if 0x80 <= code <= 0x8F:
        n = code & 0x0F
    elif code == 0xDE:
        n = reader.unpack(">H")
    elif code == 0xDF:
        n = reader.unpack(">I")
    else:
        raise MindRecordError(f"{where}: a row's scalars are not a MessagePack map")
    if n > len(data):
        raise MindRecordError(f"{where}: a map of {n} entries in {len(data)} bytes")
    row = {}
    for _ in range(n):
        key = reader.scalar()
        if not isinstance(key, str):
            raise MindRecordError(f"{where}: a map key is not a string")
        if key in row:
            raise MindRecordError(f"{where}: field {key!r} appears twice in one row")
        row[key] = reader.scalar()
    if reader.pos != len(data):
        raise MindRecordError(f"{where}: {len(data) - reader.pos} bytes after the row's map")
    return row


class _Reader:
    def __init__(self, data: bytes, where: str):
        self.data, self.pos, self.where = data, 0, where

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise MindRecordError(f"{self.where}: a row's scalars end early")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def byte(self) -> int:
        return self.take(1)[0]

    def unpack(self, fmt: str):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def scalar(self):
        code = self.byte()
        if code <= 0x7F:
            return code
        if code >= 0xE0:
            return code - 0x100
        if 0xA0 <= code <= 0xBF:
            return self.text(code & 0x1F)
        fixed = {0xCC: ">B", 0xCD: ">H", 0xCE: ">I", 0xCF: ">Q", 0xD0: ">b", 0xD1: ">h", 0xD2: ">i", 0xD3: ">q",
                 0xCA: ">f", 0xCB: ">d"}
        if code in fixed:
            return self.unpack(fixed[code])
        if code in (0xD9, 0xDA, 0xDB):
            return self.text(self.unpack({0xD9: ">B", 0xDA: ">H", 0xDB: ">I"}[code]))
        if code in (0xC2, 0xC3):
            return code == 0xC3
        raise MindRecordError(f"{self.where}: a row holds a MessagePack value of kind 0x{code:02x}; "
                              f"MindRecord rows hold only numbers and strings")

    def text(self, n: int) -> str:
        try:
            return self.take(n).decode("utf-8")
        except UnicodeDecodeError:
            raise MindRecordError(f"{self.where}: a string is not UTF-8") from None
