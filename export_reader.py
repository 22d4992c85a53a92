"""Read the members of a `.gjir` archive with every size capped before it is read or allocated.

`read_archive(file)` gives the manifest, the graph text and the parameter arrays, or raises one
`GraphjitError` naming the file and the member. The zip's table of contents is sized from its end
record before `zipfile` reads it; each member's declared size is checked against its cap and the
reading stops past the cap whatever the declaration says; params.npz may hold only the arrays the
manifest declares, each read from its `.npy` header (no pickle, no object dtype) after its shape and
dtype were checked against the declaration. Limits: graph/loadable.py.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import stat
import struct
import zipfile

import numpy as np

from .graph import loadable
from .graph.diagnostics import GraphjitError
from .graph.types import SHORT_DTYPE_NAMES

MEMBERS = ("manifest.json", "graph.txt", "params.npz")
_EOCD = b"PK\x05\x06"


class ArchiveError(GraphjitError):
    """A `.gjir` file that is not a well-formed graphjit archive, or is bigger than it may be."""


def read_archive(file: str, format_name: str, version: int) -> tuple[dict, str, dict]:
    """(manifest, graph text, {name: array}) of the archive `file`."""
    def bad(message: str) -> ArchiveError:
        return ArchiveError(f"cannot load {file}: {message}")

    try:
        if not stat.S_ISREG(os.stat(file).st_mode):   # a FIFO or a device would never end
            raise bad("not a regular file")
        with open(file, "rb") as handle:
            _check_end_record(handle, bad)
            with zipfile.ZipFile(handle) as archive:
                infos = _members(archive, bad)
                manifest_bytes = _read_member(archive, infos["manifest.json"], loadable.MAX_MANIFEST_BYTES, bad)
                manifest = _manifest(manifest_bytes, format_name, version, bad)
                declared = _declared_params(manifest, bad)
                params_cap = min(loadable.MAX_PARAMS_BYTES,
                                 sum(n for _, _, n in declared.values()) + loadable.NPY_OVERHEAD * (len(declared) + 1))
                payload = {"graph.txt": _read_member(archive, infos["graph.txt"], loadable.MAX_GRAPH_TEXT_BYTES, bad),
                           "params.npz": _read_member(archive, infos["params.npz"], params_cap, bad)}
    except GraphjitError:
        raise
    except (Exception, MemoryError) as e:   # zipfile, zlib, bz2, lzma and the OS: anything means malformed
        raise bad(f"not a graphjit archive ({type(e).__name__}: {e})"[:500]) from None
    sums = manifest.get("sha256")
    if not isinstance(sums, dict):
        raise bad("manifest.json has no checksums")
    for name, data in payload.items():
        if sums.get(name) != hashlib.sha256(data).hexdigest():
            raise bad(f"{name} does not match its checksum: the file was modified or is corrupt")
    try:
        text = payload["graph.txt"].decode("utf-8")
    except UnicodeDecodeError as e:
        raise bad(f"graph.txt is not UTF-8 text ({e})") from None
    return manifest, text, _params(payload.pop("params.npz"), declared, bad)


def _check_end_record(handle, bad) -> None:
    """The zip's end record: at most MAX_MEMBERS entries and a small table of contents."""
    size = handle.seek(0, os.SEEK_END)
    tail_size = min(size, 22 + 0xFFFF)
    handle.seek(size - tail_size)
    tail = handle.read(tail_size)
    at = tail.rfind(_EOCD)
    if at < 0 or len(tail) - at < 22:
        raise bad("not a graphjit archive (no zip end record)")
    _, _, _, disk_entries, entries, directory_size, _, _ = struct.unpack("<4s4H2LH", tail[at:at + 22])
    if max(disk_entries, entries) > loadable.MAX_MEMBERS:
        raise bad(f"the archive has {max(disk_entries, entries)} members (a graphjit archive has {len(MEMBERS)})")
    if directory_size > loadable.MAX_CENTRAL_DIRECTORY:
        raise bad(f"the archive's table of contents is {directory_size} bytes "
                  f"(at most {loadable.MAX_CENTRAL_DIRECTORY})")
    handle.seek(0)


def _members(archive: zipfile.ZipFile, bad) -> dict:
    infos = archive.infolist()
    if len(infos) > loadable.MAX_MEMBERS:
        raise bad(f"the archive has {len(infos)} members (a graphjit archive has {len(MEMBERS)})")
    seen = {}
    for info in infos:
        if info.filename in seen:
            raise bad(f"{info.filename} is in the archive more than once")
        if info.filename not in MEMBERS:
            raise bad(f"unexpected member {info.filename!r} (a graphjit archive holds only {', '.join(MEMBERS)})")
        if info.flag_bits & 0x1:
            raise bad(f"{info.filename} is encrypted")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise bad(f"{info.filename} uses an unsupported compression")
        seen[info.filename] = info
    missing = [m for m in MEMBERS if m not in seen]
    if missing:
        raise bad(f"not a graphjit archive ({', '.join(missing)} missing)")
    return seen


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, cap: int, bad) -> bytes:
    """The member's bytes: refused if it declares more than `cap`, and reading stops past `cap`."""
    if info.file_size > cap:
        raise bad(f"{info.filename} expands to {info.file_size} bytes (at most {cap})")
    with archive.open(info) as stream:
        data = stream.read(cap + 1)
    if len(data) > cap:
        raise bad(f"{info.filename} expands to more than {cap} bytes")
    return data


def _manifest(data: bytes, format_name: str, version: int, bad) -> dict:
    try:
        manifest = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise bad(f"manifest.json is not valid JSON ({type(e).__name__}: {e})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != format_name:
        raise bad("not a graphjit archive (manifest format)")
    if manifest.get("version") != version:
        raise bad(f"format version {manifest.get('version')!r}; this graphjit reads version {version}")
    return manifest


def _declared_params(manifest: dict, bad) -> dict:
    """{name: (dtype, shape, bytes)} of the parameters manifest.json declares, each checked."""
    entries = manifest.get("params")
    if not isinstance(entries, list) or len(entries) > loadable.MAX_PARAM_ENTRIES:
        raise bad(f"manifest.json: `params` must be a list of at most {loadable.MAX_PARAM_ENTRIES} entries")
    declared = {}
    for k, entry in enumerate(entries):
        name = entry.get("name") if isinstance(entry, dict) else None
        dtype = entry.get("dtype") if isinstance(entry, dict) else None
        shape = entry.get("shape") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name.isidentifier() or name in declared:
            raise bad(f"manifest.json: parameter {k} has a bad or repeated name {name!r}")
        if not isinstance(dtype, str) or dtype not in SHORT_DTYPE_NAMES:
            raise bad(f"manifest.json: parameter {name!r} has dtype {dtype!r}, not a NumPy number type")
        if not isinstance(shape, list) or len(shape) > loadable.MAX_RANK or \
                not all(isinstance(d, int) and not isinstance(d, bool) and 0 <= d < 2 ** 63 for d in shape):
            raise bad(f"manifest.json: parameter {name!r} has a bad shape {shape!r}")
        nbytes = math.prod(shape) * np.dtype(dtype).itemsize
        if nbytes > loadable.MAX_PARAMS_BYTES:
            raise bad(f"manifest.json: parameter {name!r} declares {nbytes} bytes "
                      f"(at most {loadable.MAX_PARAMS_BYTES})")
        declared[name] = (np.dtype(dtype), tuple(shape), nbytes)
    return declared


def _params(data: bytes, declared: dict, bad) -> dict:
    """The arrays of params.npz, exactly those `declared`, read from their headers without pickle."""
    def wrong(message: str) -> ArchiveError:
        return bad(f"params.npz {message}")

    try:
        inner = zipfile.ZipFile(io.BytesIO(data))
        infos = inner.infolist()
    except Exception as e:   # anything zipfile raises on a malformed archive
        raise wrong(f"is not an .npz archive ({type(e).__name__}: {e})"[:500]) from None
    names = [i.filename for i in infos]
    if len(names) != len(set(names)) or len(names) > len(declared):
        raise wrong("holds more entries than manifest.json declares")
    params = {}
    for info in infos:
        name = info.filename[:-len(".npy")] if info.filename.endswith(".npy") else info.filename
        dtype, shape, nbytes = declared.get(name, (None, None, 0))
        try:
            raw = _read_member(inner, info, nbytes + loadable.NPY_OVERHEAD, wrong)
            stream = io.BytesIO(raw)
            major, _ = np.lib.format.read_magic(stream)
            if major == 1:
                stored_shape, fortran, stored_dtype = np.lib.format.read_array_header_1_0(stream)
            elif major == 2:
                stored_shape, fortran, stored_dtype = np.lib.format.read_array_header_2_0(stream)
            else:
                raise wrong(f"entry {name!r} has .npy format version {major}")
        except GraphjitError:
            raise
        except Exception as e:   # zipfile, zlib and NumPy's header parser on malformed bytes
            raise wrong(f"entry {name!r} cannot be read without pickle ({type(e).__name__}: {e})"[:500]) from None
        if stored_dtype.hasobject:
            raise wrong(f"entry {name!r} holds Python objects: it cannot be read without pickle")
        if dtype is None:
            raise wrong(f"holds an entry {name!r} that manifest.json does not declare")
        if stored_dtype != dtype or tuple(stored_shape) != shape:
            raise wrong(f"entry {name!r} holds {stored_dtype}{list(stored_shape)}, "
                        f"manifest.json declares {dtype}{list(shape)}")
        body = raw[stream.tell():]
        if len(body) != nbytes:
            raise wrong(f"entry {name!r} has {len(body)} bytes of data, its shape needs {nbytes}")
        flat = np.frombuffer(body, dtype=dtype, count=math.prod(shape))
        params[name] = flat.reshape(shape, order="F" if fortran else "C").copy(order="K")
    if len(params) != len(declared):
        raise wrong("does not hold every parameter manifest.json declares")
    return params
