"""The MindRecord file layout: a JSON header, then fixed-size pages.

A file starts with the header's length (8 bytes, little-endian) and the header itself (JSON) in a
block of `header_size` bytes. Page `k` starts at `header_size + k * page_size` and holds
`page["page_size"]` used bytes. A BLOB_DATA page is one *row group* (its `page_type_id`) holding the
blobs of rows `start_row_id` to `end_row_id`; a RAW_DATA page holds the scalar rows of one or more
row groups, each at an offset (`row_group_ids`). Each row in either is its length (8 bytes,
little-endian) and its bytes. A dataset of `shard_num` files lists them all in `shard_addresses`.

`read_header` checks every number against the file's size and the limits below before anything is
allocated, so a hostile file costs at most its own size in memory.
"""

from __future__ import annotations

import json
import os
import struct

from .errors import MindRecordError
from .schema import check_schema

VERSION = "3.0"
MIN_HEADER, MAX_HEADER = 1 << 14, 1 << 27       # MindSpore's bounds for header_size and page_size
MIN_PAGE, MAX_PAGE = 1 << 15, 1 << 28
MAX_HEADER_JSON = 1 << 26                       # bytes of header JSON read at most
MAX_PAGES = 1 << 20
MAX_SHARDS = 1000


def read_header(path: str, f) -> dict:
    """The checked header of the open file `f` (named `path` in errors)."""
    size = os.fstat(f.fileno()).st_size
    start = f.read(8)
    if len(start) < 8:
        raise MindRecordError(f"{path}: not a MindRecord file (shorter than its header)")
    n = struct.unpack("<Q", start)[0]
    if n == 0 or n > min(size - 8, MAX_HEADER_JSON):
        raise MindRecordError(f"{path}: not a MindRecord file (a header of {n} bytes in a file of {size})")
    text = f.read(n)
    try:
        header = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise MindRecordError(f"{path}: not a MindRecord file (its header is not JSON)") from None
    return check_header(header, path, size)


def _int(header: dict, key: str, path: str, low: int, high: int) -> int:
    value = header.get(key)
    if type(value) is not int or not low <= value <= high:
        raise MindRecordError(f"{path}: header field {key!r} is {value!r}; expected an integer in [{low}, {high}]"[:300])
    return value


def check_header(header, path: str, size: int) -> dict:
    if not isinstance(header, dict):
        raise MindRecordError(f"{path}: not a MindRecord file (its header is not a JSON object)")
    if header.get("version") != VERSION:
        raise MindRecordError(f"{path}: MindRecord version {header.get('version')!r}; graphjit reads {VERSION}"[:300])
    header_size = _int(header, "header_size", path, MIN_HEADER, MAX_HEADER)
    page_size = _int(header, "page_size", path, MIN_PAGE, MAX_PAGE)
    _int(header, "shard_id", path, 0, MAX_SHARDS - 1)
    schemas = header.get("schema")
    if not isinstance(schemas, list) or len(schemas) != 1 or not isinstance(schemas[0], dict):
        raise MindRecordError(f"{path}: a MindRecord file has exactly one schema")
    schema = check_schema(schemas[0].get("schema"), f"{path}: schema")
    addresses = header.get("shard_addresses")
    if (not isinstance(addresses, list) or not 1 <= len(addresses) <= MAX_SHARDS
            or not all(isinstance(a, str) and a and os.path.basename(a) == a and a not in (".", "..") for a in addresses)):
        raise MindRecordError(f"{path}: header field 'shard_addresses' must list 1 to {MAX_SHARDS} file names")
    pages = header.get("page")
    if not isinstance(pages, list) or len(pages) > MAX_PAGES:
        raise MindRecordError(f"{path}: header field 'page' must be a list of at most {MAX_PAGES} pages")
    checked = []
    for k, page in enumerate(pages):
        where = f"{path}: page {k}"
        if not isinstance(page, dict) or page.get("page_type") not in ("BLOB_DATA", "RAW_DATA"):
            raise MindRecordError(f"{where}: not a BLOB_DATA or RAW_DATA page")
        page_id = _int(page, "page_id", where, 0, MAX_PAGES)
        used = _int(page, "page_size", where, 0, page_size)
        offset = header_size + page_id * page_size
        if offset + used > size:
            raise MindRecordError(f"{where}: ends at byte {offset + used}, past the file's end ({size})")
        groups = page.get("row_group_ids")
        if not isinstance(groups, list) or len(groups) > used + 1 or not all(isinstance(g, dict) for g in groups):
            raise MindRecordError(f"{where}: 'row_group_ids' must be a list of row groups")
        entry = {"type": page["page_type"], "offset": offset, "used": used,
                 "group": _int(page, "page_type_id", where, 0, MAX_PAGES),
                 "start": _int(page, "start_row_id", where, 0, 1 << 40),
                 "end": _int(page, "end_row_id", where, 0, 1 << 40),
                 "groups": [(_int(g, "id", where, 0, MAX_PAGES), _int(g, "offset", where, 0, used)) for g in groups]}
        if entry["type"] == "BLOB_DATA" and entry["end"] < entry["start"]:
            raise MindRecordError(f"{where}: rows {entry['start']} to {entry['end']}")
        checked.append(entry)
    return {"header_size": header_size, "page_size": page_size, "schema": schema, "pages": checked,
            "shard_addresses": addresses, "shard_id": header["shard_id"]}


def split_rows(data: bytes, count: int, where: str) -> list[bytes]:
    """`count` length-prefixed rows from the start of `data`."""
    rows, pos = [], 0
    for r in range(count):
        if pos + 8 > len(data):
            raise MindRecordError(f"{where}: row {r} of {count} starts past the page's end")
        n = struct.unpack("<Q", data[pos:pos + 8])[0]
        if n > len(data) - pos - 8:
            raise MindRecordError(f"{where}: row {r} claims {n} bytes past the page's end")
        rows.append(data[pos + 8:pos + 8 + n])
        pos += 8 + n
    return rows


def build_header(schema: dict, desc: str, blob_names: list[str], index_fields: list[str], pages: list[dict],
                 header_size: int, page_size: int, addresses: list[str], shard_id: int, saved: int) -> bytes:
    """The header block of one shard, as MindSpore 2.x writes it."""
    header = {
        "header_size": header_size,
        "index_fields": [{"index_field": f, "schema_id": 0} for f in index_fields] or None,
        "page": pages,
        "page_size": page_size,
        "compression_size": saved,
        "schema": [{"blob_fields": blob_names, "desc": desc, "schema": schema}],
        "shard_addresses": addresses,
        "shard_id": shard_id,
        "statistics": None,
        "version": VERSION,
    }
    text = json.dumps(header, separators=(",", ":")).encode()
    if 8 + len(text) > header_size:
        raise MindRecordError(f"{addresses[shard_id]}: the header needs {8 + len(text)} bytes; "
                              f"the header size is {header_size} (FileWriter.set_header_size)")
    return struct.pack("<Q", len(text)) + text
