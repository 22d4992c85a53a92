"""Checkpoint files written by hand, as an attacker can: any header, any data, a valid digest around them.

`craft(path, header, data)` writes a header (a dict, or JSON text as bytes) and data bytes with the
right length field and SHA-256, so a test reaches the header's checks and not only the digest's.
`header(tensors, strings, data_bytes)` and `entry(...)` build the form `save_checkpoint` writes.
"""

import hashlib
import json
import os

from graphjit.checkpoint import DIGEST_BYTES, MAGIC, PREFIX_BYTES


def craft(path, header, data: bytes = b"") -> str:
    """Write a checkpoint of this header (a dict or raw JSON bytes) and data; return the path."""
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    body = MAGIC + len(text).to_bytes(8, "little") + text + data
    return put(path, body + hashlib.sha256(body).digest())


def put(path, blob: bytes) -> str:
    """Write `blob` as the whole of `path`, in place: no truncation to zero first, which on ext4 flushes
    to disk at close (4 ms a file; the fuzz tests write thousands)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        os.pwrite(fd, blob, 0)
        os.ftruncate(fd, len(blob))
    finally:
        os.close(fd)
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
