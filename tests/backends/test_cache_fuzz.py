"""Fuzzing the reading of disk cache entries: real entries mutated byte by byte, and with code planted
and their check line recomputed (v1's sha256, an HMAC under another key), are never run.

Reading an entry has no side effect at all (tests/side_effects.py's `watch()`), and a call after it
returns the eager result, writing only graphjit's own files in the cache. Profiles: tests/conftest.py
(`GRAPHJIT_HYPOTHESIS_PROFILE=long` for 2 000 mutations; the CI runs 30, derandomized).
"""

import hashlib
import os
import pathlib
import re
import secrets

import numpy as np
from hypothesis import given, note, settings
from hypothesis import strategies as st

import graphjit as ms
from graphjit.backends import cache_trust, disk_cache

from side_effects import watch

PROFILE = "graphjit-" + os.environ.get("GRAPHJIT_HYPOTHESIS_PROFILE", "ci")
X = np.arange(5.0)


def target(x):
    y = x * 3.0 + 1.0
    return y.sum() * y


EXPECTED = target(X)
_STATE: dict = {}   # per cache directory: the real entry, its path and its key


def real_entry(monkeypatch) -> tuple:
    """(path, bytes, cache key) of the entry a first call writes (once per test's cache directory)."""
    root = os.environ["GRAPHJIT_CACHE_DIR"]
    if root not in _STATE:
        keys = []
        load = disk_cache.DiskCache.load
        monkeypatch.setattr(disk_cache.DiskCache, "load", lambda self, key: keys.append(key) or load(self, key))
        ms.jit(target)(X)
        monkeypatch.setattr(disk_cache.DiskCache, "load", load)
        [path] = pathlib.Path(root).glob("v2/*/*.py")
        _STATE.clear()
        _STATE[root] = (path, path.read_bytes(), keys[0])
    return _STATE[root]


# --- mutations ------------------------------------------------------------------------------------
@st.composite
def byte_mutations(draw, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["flip", "set", "delete", "insert", "truncate"]))
        at = draw(st.integers(0, max(len(out) - 1, 0)))
        if kind == "flip" and out:
            out[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "set" and out:
            out[at] = draw(st.integers(0, 255))
        elif kind == "delete":
            del out[at:at + draw(st.integers(1, 64))]
        elif kind == "insert":
            out[at:at] = draw(st.binary(min_size=1, max_size=64))
        else:
            del out[at:]
    return bytes(out)


PAYLOADS = [   # what an attacker would add to the generated code
    "    open({sentinel!r}, 'w').write('planted code ran')\n",
    "    __import__('os').system('touch ' + {sentinel!r})\n",
    "    import socket\n",
]


@st.composite
def planted(draw, data: bytes, sentinel: str) -> bytes:
    text = data.decode()
    magic, _, rest = text.partition("\n")
    check, _, rest = rest.partition("\n")
    head, sep, body = rest.partition("\ndef ")
    body = sep + body
    line = draw(st.sampled_from(PAYLOADS)).format(sentinel=sentinel)
    first, _, after = body[1:].partition("\n")
    body = "\n" + first + "\n" + line + after
    if draw(st.booleans()):
        body = re.sub(r"return (.*)", r"return \1 + 100.0", body, count=1)
    if draw(st.booleans()):   # the key's lines or the metadata edited as well
        head = head.replace("jit_level: O1", "jit_level: O0")
    rest = head + body
    how = draw(st.sampled_from(["kept", "sha256", "other-key", "no-check", "v1"]))
    if how == "sha256":
        check = f"# sha256: {hashlib.sha256(rest.encode()).hexdigest()}"
    elif how == "other-key":
        check = f"# hmac-sha256: {cache_trust.sign(secrets.token_bytes(32), (magic + chr(10) + rest).encode())}"
    elif how == "no-check":
        return f"{magic}\n{rest}".encode()
    elif how == "v1":
        magic = "# graphjit cache entry v1"
        check = f"# sha256: {hashlib.sha256(rest.encode()).hexdigest()}"
    return f"{magic}\n{check}\n{rest}".encode()


def ours(event: tuple, root: str) -> bool:
    """A side effect graphjit may have while it compiles and stores: only in its cache directory."""
    name, args = event
    if root in args:
        return name in ("open", "os.rename", "os.mkdir", "os.chmod", "os.utime", "os.remove")
    if name == "open":   # os.fdopen of a file it created (that open named the path)
        return args.isdigit()
    return name == "os.chmod" and re.match(r"\(\d+, 384\b", args) is not None   # fchmod(fd, 0o600)


# --- the property -------------------------------------------------------------------------------
@settings(settings.get_profile(PROFILE))
@given(data=st.data())
def test_mutated_entries_never_run_and_results_stay_correct(data, monkeypatch, tmp_path):
    path, original, key = real_entry(monkeypatch)
    sentinel = str(tmp_path / "planted")
    mutated = data.draw(st.one_of(byte_mutations(original), planted(original, sentinel)), label="entry")
    note(repr(mutated[:2000]))
    path.write_bytes(mutated)
    store = disk_cache.current()

    with watch() as seen:                                   # reading: no side effect whatsoever
        loaded = store.load(key)
    seen.assert_none()
    assert not loaded or mutated == original, "a modified entry was accepted"

    root = os.environ["GRAPHJIT_CACHE_DIR"]
    with watch(allow_exec=True) as seen:                    # the call: graphjit's own files only
        out = ms.jit(target)(X)
    others = [e for e in seen.events if not ours(e, root)]
    assert not others, f"side effects outside the cache: {others}"
    assert not os.path.exists(sentinel), "planted code ran"
    np.testing.assert_array_equal(out, EXPECTED)
    assert len(store.load(key)) == 1           # rebuilt (or left as it was): it verifies again
