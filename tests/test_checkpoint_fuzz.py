"""Fuzzing checkpoints (issue 23): hypothesis writes headers from the format's grammar (names, dtypes,
shapes, entry kinds, offsets and sizes, each sometimes wrong) with a valid digest, edits the parsed
headers of real checkpoints (entries duplicated, moved, renamed, resized), and mutates the bytes of
real checkpoints (the raw file, or the header's text with its length and digest fixed so the damage
reaches the parser).

Whatever the file, `load_checkpoint` returns or raises CheckpointError: one line naming the file,
no other exception, and no side effect (tests/side_effects.py). What it returns is exact: every
array is the bytes its entry points at, with the entry's dtype and shape, and every string is the
header's. A header written by the grammar without a fault must load. A loaded checkpoint goes into
a net, where only CheckpointMismatchError may be raised.

Profiles (tests/conftest.py): the CI one runs a few dozen files per test; GRAPHJIT_HYPOTHESIS_PROFILE=long
runs 20 000 per test, and `python -m pytest -s` prints how the files were refused.
"""

import collections
import json
import os
import pathlib
import warnings

import numpy as np
import pytest
from checkpoint_files import craft, put, split
from hypothesis import given, settings
from hypothesis import strategies as st
from side_effects import watch

import graphjit as ms
from graphjit import checkpoint, nn
from graphjit.checkpoint import DTYPES

LONG = os.environ.get("GRAPHJIT_HYPOTHESIS_PROFILE") == "long"
PROFILE = settings(settings.get_profile("graphjit-" + os.environ.get("GRAPHJIT_HYPOTHESIS_PROFILE", "ci")),
                   **({"max_examples": 20_000} if LONG else {}))
OUTCOMES = collections.Counter()


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    yield tmp_path_factory.mktemp("fuzz")
    if OUTCOMES:
        print("\ncheckpoint fuzz outcomes:", ", ".join(f"{k} {v}" for k, v in sorted(OUTCOMES.items())))


# --- what every load must satisfy ---------------------------------------------------------------------
REASONS = ["checksum", "neither 0 nor 1", "header would be", "not a graphjit checkpoint", "truncated",
           "bytes after its end", "not valid JSON",
           "no data size", "version", "twice", "unknown key", "no tensor list", "without a name", "strings are not",
           "two tensors", "two entries", "Unicode", "dtype", "dimensions", "shape", "outside the data", "offset",
           "nbytes", "data_bytes", "checkpoint is empty", "no "]


def load(path: str, test: str):
    """`load_checkpoint(path)`: the dict, or None after checking the CheckpointError it raised."""
    with watch() as seen:
        try:
            result = ms.load_checkpoint(path)
        except ms.CheckpointError as error:
            message = str(error)
            assert "\n" not in message and "\r" not in message and repr(path) in message, message
            assert len(message) < 600 + len(repr(path)), message
            reason = next((r for r in REASONS if r in message), "other")
            OUTCOMES[f"{test}: refused ({reason.strip()})"] += 1
            result = None
    seen.assert_none()
    if result is not None:
        OUTCOMES[f"{test}: loaded"] += 1
    return result


def assert_exact(result: dict, header_text: bytes, data: bytes) -> None:
    """A loaded checkpoint is what its header says, bit for bit."""
    header = json.loads(header_text)
    names = [t["name"] for t in header["tensors"]] + list(header["strings"])
    assert list(result) == names
    for entry in header["tensors"]:
        dtype = DTYPES[entry["dtype"]]
        raw = data[entry["offset"]:entry["offset"] + entry["nbytes"]]
        expected = np.frombuffer(raw, dtype).reshape(entry["shape"])
        value = result[entry["name"]]
        assert isinstance(value, ms.Parameter) and value.name == entry["name"]
        assert value.dtype == dtype.newbyteorder("=") and value.shape == tuple(entry["shape"])
        assert value.astype(dtype).tobytes() == raw == expected.tobytes()
    for name, text in header["strings"].items():
        assert result[name] == text


def into_a_net(result: dict) -> None:
    net = Net()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ms.GraphjitWarning)
            ms.load_param_into_net(net, result)
    except ms.CheckpointMismatchError as error:
        assert "\n" not in str(error)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(3, 2)
        self.w = ms.Parameter(np.zeros(2, np.float32), name="w")
        self.step = ms.Parameter(np.zeros((), np.int64), name="layer.0.bias")

    def construct(self, x):
        return self.dense(x) * self.w


# --- the header grammar ----------------------------------------------------------------------------
_JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70), st.floats(allow_nan=False),
                          st.text(max_size=4))
JSON_VALUES = st.recursive(_JSON_SCALARS, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=6)
NAMES = st.one_of(st.sampled_from(["w", "b", "layer.0.bias", "dense.weight", "dense.bias", "", " w", "x.w"]),
                  st.text(max_size=12), st.just("w\ud800"))
BAD_DTYPES = ["<f3", "<u16", "<i16", "<f16", "<c32", "|O", "|O8", "<V8", "<U4", "|S4", ">f4", "f4", "<M8[s]",
              "float32", "<i1", "|f4", "<b1", "", "<f4 ", "|b1\x00"]
DTYPE_TEXTS = st.one_of(st.sampled_from(sorted(DTYPES)), st.sampled_from(sorted(DTYPES)),
                        st.sampled_from(BAD_DTYPES), st.text(max_size=4), JSON_VALUES)
_BIG = [2 ** 31, 2 ** 32, 2 ** 62, 2 ** 63 - 1, 2 ** 63, 2 ** 64, 10 ** 30, -1, -(2 ** 63)]
DIMS = st.one_of(st.integers(0, 4), st.integers(0, 4), st.sampled_from(_BIG), JSON_VALUES)
SHAPES = st.one_of(st.lists(st.integers(0, 4), max_size=4), st.lists(st.integers(0, 4), max_size=4),
                   st.lists(DIMS, max_size=4), st.lists(st.integers(0, 1), min_size=30, max_size=70), JSON_VALUES)
_MAX_DATA = 4096


def consistent_size(text, shape):
    """The bytes of a well-formed (dtype, shape), or None when it is not well formed or too big to write."""
    if type(text) is not str or text not in DTYPES or type(shape) is not list or len(shape) > checkpoint.MAX_NDIM:
        return None
    if not all(type(d) is int and 0 <= d <= 4 for d in shape):
        return None
    size = DTYPES[text].itemsize * int(np.prod(shape, dtype=np.int64))
    return size if size <= _MAX_DATA else None


def either(clean: bool, good, bad):
    """`good` in a clean file; in a faulty one, `bad` a quarter of the time."""
    return good if clean else st.one_of(good, good, good, bad)


@st.composite
def edited(draw, obj: dict, keys: tuple, clean: bool):
    """`obj` unchanged, or (in a faulty file, a third of the time) with one fault: a key set to any JSON
    value, removed, added, or an int moved by one or made a bool. Returns (obj, whether it changed)."""
    kind = "none" if clean else draw(st.sampled_from(["none"] * 10 + ["set", "delete", "add", "shift", "bool"]))
    obj = dict(obj)
    key = draw(st.sampled_from(keys))
    if kind == "set":
        obj[key] = draw(JSON_VALUES)
    elif kind == "delete":
        obj.pop(key, None)
    elif kind == "add":
        obj[draw(st.text(max_size=6))] = draw(JSON_VALUES)
    elif kind in ("shift", "bool") and type(obj.get(key)) is int:
        obj[key] = obj[key] + draw(st.sampled_from([-1, 1])) if kind == "shift" else bool(obj[key])
    else:
        kind = "none"
    return obj, kind != "none"


GOOD_NAMES = st.one_of(st.sampled_from(["w", "b", "layer.0.bias", "dense.weight", "dense.bias", "", " w", "x.w",
                                        "w\n", "\u2028"]), st.text(max_size=12), st.text(min_size=1, max_size=40))
GOOD_SHAPES = st.lists(st.integers(0, 4), max_size=4)


@st.composite
def crafted_checkpoints(draw):
    """(header text, data, whether the header is well formed) from the checkpoint grammar: a clean file
    half of the time, else one with faults in any field."""
    clean = draw(st.booleans())
    tensors, data, offset, valid = [], bytearray(), 0, True
    for _ in range(draw(st.integers(0, 4))):
        text = draw(either(clean, st.sampled_from(sorted(DTYPES)), DTYPE_TEXTS))
        shape = draw(either(clean, GOOD_SHAPES, SHAPES))
        size = consistent_size(text, shape)
        nbytes = size if size is not None else draw(st.integers(0, 64))
        entry, changed = draw(edited({"name": draw(either(clean, GOOD_NAMES, NAMES)), "dtype": text, "shape": shape,
                                      "offset": offset, "nbytes": nbytes}, checkpoint.ENTRY_KEYS, clean))
        valid &= size is not None and not changed
        tensors.append(entry)
        chunk = draw(st.binary(min_size=nbytes, max_size=nbytes))
        if text == "|b1" and (clean or draw(st.booleans())):
            chunk = bytes(b & 1 for b in chunk)
        valid &= text != "|b1" or max(chunk, default=0) <= 1     # a bool is stored as 0 or 1
        data += chunk
        offset += nbytes
    strings = draw(st.dictionaries(either(clean, GOOD_NAMES, NAMES),
                                   either(clean, st.text(max_size=8), st.just("\udfff")), max_size=3))
    header, changed = draw(edited({"format": checkpoint.FORMAT, "version": checkpoint.VERSION, "tensors": tensors,
                                   "strings": strings, "data_bytes": offset}, checkpoint.HEADER_KEYS, clean))
    names = [t.get("name") for t in tensors] + list(strings)
    valid = valid and not changed and len(set(names)) == len(names) and bool(names) and all(
        "\ud800" not in n for n in names) and all("\udfff" not in s for s in strings.values())
    text = json.dumps(header).encode()
    twice = None if clean else draw(st.sampled_from([None] * 8 + ["top", "strings"]))
    if twice == "top":             # a key twice: json.loads would keep the last one
        text = text.replace(b'"strings": ', b'"strings": {}, "strings": ', 1)
    elif twice == "strings" and strings:
        key = json.dumps(next(iter(strings))).encode()
        text = text.replace(b'"strings": {', b'"strings": {' + key + b': "again", ', 1)
    valid &= twice is None or (twice == "strings" and not strings)
    slack = 0 if clean else draw(st.sampled_from([0] * 8 + [-1, 1]))
    if slack < 0:
        data = data[:-1]
    elif slack > 0:
        data += b"\0"
    valid &= slack == 0 or (slack < 0 and not len(data) and not offset)
    return text, bytes(data), valid


@PROFILE
@given(case=crafted_checkpoints())
def test_crafted_headers_load_exactly_or_give_one_checkpoint_error(folder, case):
    text, data, valid = case
    path = craft(folder / "crafted.ckpt", text, data)
    result = load(path, "crafted")
    if valid:
        assert result is not None, f"a well-formed header was refused: {text[:300]!r}"
    if result is not None:
        assert_exact(result, text, data)
        into_a_net(result)


# --- byte mutation of real checkpoints -------------------------------------------------------------
def real_checkpoints(folder) -> list:
    ms.set_seed(3)
    net = Net()
    first = folder / "net.ckpt"
    ms.save_checkpoint(net, first, append_dict={"epoch_num": 3, "lr": 0.5, "note": "warm-up \u00e9", "done": True})
    second = folder / "dtypes.ckpt"
    rng = np.random.default_rng(0)
    ms.save_checkpoint({text: (rng.standard_normal((2, 3)) * 50).astype(dtype) for text, dtype in DTYPES.items()},
                       second)
    return [first.read_bytes(), second.read_bytes()]


_REAL = []


@st.composite
def mutations(draw):
    """(which real checkpoint, [(op, position, argument)], whether to fix the header's length and digest)."""
    ops = draw(st.lists(st.tuples(st.sampled_from(["flip", "set", "insert", "delete", "truncate", "copy"]),
                                  st.floats(0, 1, exclude_max=True), st.integers(0, 255)), min_size=1, max_size=4))
    return draw(st.integers(0, 1)), ops, draw(st.booleans())


def mutate(blob: bytes, ops: list) -> bytes:
    out = bytearray(blob)
    for op, where, arg in ops:
        at = int(where * len(out)) if out else 0
        if op == "flip" and out:
            out[at] ^= 1 << (arg % 8)
        elif op == "set" and out:
            out[at] = arg
        elif op == "insert":
            out[at:at] = bytes([arg]) * (1 + arg % 4)
        elif op == "delete":
            del out[at:at + 1 + arg % 8]
        elif op == "truncate":
            del out[at:]
        elif op == "copy" and out:            # repeat a piece: a duplicated entry, key or digit
            start = int(arg / 256 * len(out))
            out[at:at] = out[start:start + 1 + arg % 24]
    return bytes(out)


@PROFILE
@given(case=mutations())
def test_mutated_checkpoints_load_exactly_or_give_one_checkpoint_error(folder, case):
    if not _REAL:
        _REAL.extend(real_checkpoints(folder))
    which, ops, fix = case
    blob = _REAL[which]
    path = str(folder / "mutated.ckpt")
    if fix:     # damage the header's text, then fix its length and the digest so the parser sees it
        text, data = split(blob)
        text = mutate(text, ops)
        craft(path, text, data)
    else:
        text, data = None, None
        put(path, mutate(blob, ops))
    result = load(path, "mutated header" if fix else "mutated bytes")
    if result is not None:
        if text is None:
            text, data = split(pathlib.Path(path).read_bytes())
        assert_exact(result, text, data)
        into_a_net(result)


_ENTRY_EDITS = ["duplicate", "swap", "delete", "set", "shift", "dim", "dtype", "name of a string", "name of a tensor"]
_HEADER_EDITS = ["set", "delete", "add", "string", "data_bytes"]


def edit_header(header: dict, draw) -> None:
    """One structural edit of a parsed header, in place: an entry duplicated, moved, removed, a field of it
    set to any JSON value, an int moved, a dimension or dtype changed, a name taken from another entry;
    or a key of the header set, removed or added, a string added, data_bytes moved."""
    tensors = header.get("tensors") if type(header.get("tensors")) is list else []
    strings = header.get("strings") if type(header.get("strings")) is dict else {}
    action = draw(st.sampled_from(_ENTRY_EDITS + _HEADER_EDITS))
    if action in _ENTRY_EDITS and tensors:
        k = draw(st.integers(0, len(tensors) - 1))
        entry = tensors[k] if type(tensors[k]) is dict else {}
        if action == "duplicate":
            tensors.insert(draw(st.integers(0, len(tensors))), json.loads(json.dumps(tensors[k])))
        elif action == "swap":
            tensors[k], tensors[-1] = tensors[-1], tensors[k]
        elif action == "delete":
            del tensors[k]
        elif action == "set":
            entry[draw(st.sampled_from(checkpoint.ENTRY_KEYS))] = draw(JSON_VALUES)
        elif action == "shift":
            key = draw(st.sampled_from(["offset", "nbytes"]))
            if type(entry.get(key)) is int:
                entry[key] += draw(st.sampled_from([-8, -1, 1, 8]))
        elif action == "dim" and type(entry.get("shape")) is list:
            shape = entry["shape"]
            if shape and draw(st.booleans()):
                shape[draw(st.integers(0, len(shape) - 1))] = draw(DIMS)
            else:
                shape.insert(draw(st.integers(0, len(shape))), draw(st.sampled_from([0, 1, 2] + _BIG)))
        elif action == "dtype":
            entry["dtype"] = draw(DTYPE_TEXTS)
        elif action == "name of a string" and strings:
            entry["name"] = draw(st.sampled_from(sorted(strings)))
        elif action == "name of a tensor":
            entry["name"] = tensors[draw(st.integers(0, len(tensors) - 1))].get("name")
    elif action == "set":
        header[draw(st.sampled_from(checkpoint.HEADER_KEYS))] = draw(JSON_VALUES)
    elif action == "delete":
        header.pop(draw(st.sampled_from(checkpoint.HEADER_KEYS)), None)
    elif action == "add":
        header[draw(st.text(max_size=6))] = draw(JSON_VALUES)
    elif action == "string" and type(header.get("strings")) is dict:
        header["strings"][draw(NAMES)] = draw(st.text(max_size=8))
    elif action == "data_bytes" and type(header.get("data_bytes")) is int:
        header["data_bytes"] += draw(st.sampled_from([-8, -1, 1, 8]))


@PROFILE
@given(which=st.integers(0, 1), edits=st.integers(1, 3), data=st.data())
def test_edited_headers_of_real_checkpoints_load_exactly_or_give_one_checkpoint_error(folder, which, edits, data):
    if not _REAL:
        _REAL.extend(real_checkpoints(folder))
    text, body = split(_REAL[which])
    header = json.loads(text)
    for _ in range(edits):
        edit_header(header, data.draw)
    text = json.dumps(header).encode()
    path = craft(folder / "edited.ckpt", text, body)
    result = load(path, "edited header")
    if result is not None:
        assert_exact(result, text, body)
        into_a_net(result)


def test_every_truncation_and_bit_flip_of_a_real_checkpoint(folder):
    """What held before the fix, kept: truncation at every offset and flips of every byte's bit."""
    blob = real_checkpoints(folder)[0]
    path = str(folder / "cut.ckpt")
    for cut in range(len(blob)):
        put(path, blob[:cut])
        assert load(path, "truncated") is None
    for position in range(len(blob)):
        damaged = bytearray(blob)
        damaged[position] ^= 1 << (position % 8)
        put(path, bytes(damaged))
        assert load(path, "bit flip") is None

