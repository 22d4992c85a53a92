"""Hostile MindRecord files: mutated bytes and crafted headers give MindRecordError and nothing else,
with no side effect (docs/security.md). The short hypothesis profile runs in CI; the long one with
GRAPHJIT_HYPOTHESIS_PROFILE=long."""

import json
import os
import shutil
import struct

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from graphjit.mindrecord import MindRecordError
from graphjit.mindrecord.reader import Dataset
from locations import TESTS
from side_effects import watch

PROFILE = settings.get_profile("graphjit-" + os.environ.get("GRAPHJIT_HYPOTHESIS_PROFILE", "ci"))   # ci: 30, long: 2 000

FIXTURES = TESTS / "fixtures" / "mindrecord"
ORIGINALS = {name: (FIXTURES / f"{name}.mindrecord").read_bytes() for name in ("chapter", "every_type")}


def read_all(path) -> None:
    with watch() as seen:
        try:
            for _ in Dataset(str(path)).rows():
                pass
        except MindRecordError as e:
            # one line naming the file, or the shard its (mutated) header names beside it
            assert "\n" not in str(e) and str(path.parent) in str(e)
    seen.assert_none()


@settings(PROFILE, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(sorted(ORIGINALS)), flips=st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 255)),
                                                                min_size=1, max_size=8))
def test_byte_mutations_give_mindrecorderror(tmp_path, name, flips):
    data = bytearray(ORIGINALS[name])
    used = [k for k in range(len(data)) if k < 2048 or k >= 1 << 14]   # the header and the pages
    for at, value in flips:
        data[used[at % len(used)]] = value
    path = tmp_path / f"{name}.mindrecord"
    path.write_bytes(bytes(data))
    read_all(path)


@settings(PROFILE, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(0, 50000))
def test_truncation_gives_mindrecorderror(tmp_path, cut):
    path = tmp_path / "chapter.mindrecord"
    path.write_bytes(ORIGINALS["chapter"][:cut])
    read_all(path)


def _with_header(header: dict, rest: bytes = b"") -> bytes:
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + rest


def _header(name="chapter"):
    data = ORIGINALS[name]
    return json.loads(data[8:8 + struct.unpack("<Q", data[:8])[0]])


@pytest.mark.parametrize("change, message", [
    (lambda h: h.update(version="9.9"), "version"),
    (lambda h: h.update(header_size=True), "header_size"),
    (lambda h: h.update(page_size=1 << 40), "page_size"),
    (lambda h: h.update(shard_addresses=["../../etc/passwd"]), "shard_addresses"),
    (lambda h: h.update(shard_addresses=["/etc/passwd"]), "shard_addresses"),
    (lambda h: h["page"][0].update(page_id=10**6), "past the file's end"),
    (lambda h: h["page"][0].update(end_row_id=10**9), "starts past the page's end"),
    (lambda h: h["schema"][0].update(schema={"a": {"type": "object"}}), "expected"),
    (lambda h: h.update(schema=[h["schema"][0], h["schema"][0]]), "one schema"),
])
def test_crafted_headers_are_refused_before_reading(tmp_path, change, message):
    header = _header()
    change(header)
    data = ORIGINALS["chapter"]
    path = tmp_path / "chapter.mindrecord"
    path.write_bytes(_with_header(header) + data[8 + struct.unpack("<Q", data[:8])[0]:])
    with pytest.raises(MindRecordError, match=message):
        list(Dataset(str(path)).rows())


def test_deeply_nested_header_json(tmp_path):
    path = tmp_path / "x.mindrecord"
    text = b"[" * 100000 + b"]" * 100000
    path.write_bytes(struct.pack("<Q", len(text)) + text)
    with pytest.raises(MindRecordError, match="not JSON|not a JSON object"):
        Dataset(str(path))


def test_a_header_longer_than_the_file(tmp_path):
    path = tmp_path / "x.mindrecord"
    path.write_bytes(struct.pack("<Q", 1 << 60) + b"{}")
    with pytest.raises(MindRecordError, match="not a MindRecord file"):
        Dataset(str(path))


def test_shards_are_found_only_beside_the_file(tmp_path):
    for f in ("pages_and_shards.mindrecord0", "pages_and_shards.mindrecord1"):
        shutil.copy(FIXTURES / f, tmp_path / f)
    assert len(Dataset(str(tmp_path / "pages_and_shards.mindrecord0"))) == 40
