"""Checkpoint files written by hand, as an attacker can: any header, any data, a valid digest around them.

`craft(path, header, data)` writes a header (a dict, or JSON text as bytes) and data bytes with the
right length field and SHA-256, so a test reaches the header's checks and not only the digest's.
`header(tensors, strings, data_bytes)` and `entry(...)` build the form `save_checkpoint` writes.
"""

import hashlib
import json
import pathlib

from graphjit.checkpoint import DIGEST_BYTES, MAGIC, PREFIX_BYTES


def craft(path, header, data: bytes = b"") -> str:
    """Write a checkpoint of this header (a dict or raw JSON bytes) and data; return the path."""
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    body = MAGIC + len(text).to_bytes(8, "little") + text + data
    pathlib.Path(path).write_bytes(body + hashlib.sha256(body).digest())
    return str(path)


def header(tensors=(), strings=None, data_bytes=None) -> dict:
    tensors = list(tensors)
    if data_bytes is None:
        data_bytes = sum(t["nbytes"] for t in tensors if isinstance(t, dict) and type(t.get("nbytes")) is int)
    return {"format": "graphjit.checkpoint", "version": 1, "tensors": tensors,
            "strings": {} if strings is None else strings, "data_bytes": data_bytes}


def entry(name="w", dtype="<f4", shape=(2,), offset=0, nbytes=8) -> dict:
    return {"name": name, "dtype": dtype, "shape": list(shape) if isinstance(shape, tuple) else shape,
            "offset": offset, "nbytes": nbytes}


def split(blob: bytes) -> tuple:
    """(header bytes, data bytes) of a checkpoint file's contents."""
    size = int.from_bytes(blob[len(MAGIC):PREFIX_BYTES], "little")
    return blob[PREFIX_BYTES:PREFIX_BYTES + size], blob[PREFIX_BYTES + size:len(blob) - DIGEST_BYTES]
