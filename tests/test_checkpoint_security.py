"""Hostile checkpoints (issue 23, item 8): every header fault is one CheckpointError line that names the
file and the entry, duplicate names of any kind are refused, types are exact (a bool is not an int),
only dtypes from a closed table are read, shapes and sizes are checked against the file before
anything is allocated, reading has no side effects, and `load_param_into_net` is linear.

Each test of a fault found by the attack (dtype strings NumPy does not know, impossible shapes, a
string named like a tensor, `data_bytes: true`, the quadratic prefix search) failed on the code
before the fix."""

import json
import os
import pathlib
import threading

import numpy as np
import pytest
from checkpoint_files import craft, entry, header, split
from hypothesis import given, settings
from hypothesis import strategies as st
from side_effects import watch

import graphjit as ms
from graphjit import checkpoint, nn

PROFILE = "graphjit-" + os.environ.get("GRAPHJIT_HYPOTHESIS_PROFILE", "ci")


def refused(path, *parts) -> str:
    """Load `path`: one CheckpointError line naming the file (and `parts`), no side effects."""
    with watch() as seen:
        with pytest.raises(ms.CheckpointError) as info:
            ms.load_checkpoint(path)
    seen.assert_none()
    message = str(info.value)
    assert "\n" not in message and repr(str(path)) in message, message
    for part in parts:
        assert part in message, message
    return message


# --- dtypes: a closed table, never handed to np.dtype -------------------------------------------------
@pytest.mark.parametrize("dtype,size", [
    ("<f3", 6), ("<u16", 32), ("<i16", 32), ("<f16", 32), ("<c32", 64), ("<i1", 2), ("|f4", 8), ("<b1", 2),
    ("<f4 ", 8), ("<F4", 8), ("<f04", 8), ("<f4\u0660", 8), ("b", 2), ("|b1,|b1", 4), ("", 0), ("<m8", 16),
])
def test_dtype_strings_outside_the_table_are_checkpoint_errors(tmp_path, dtype, size):
    path = craft(tmp_path / "dtype.ckpt", header([entry("w", dtype, (2,), 0, size)]), b"\0" * size)
    refused(path, "tensor 'w'", repr(dtype), "only boolean and numeric dtypes")


@pytest.mark.parametrize("dtype", [[], None, 4, {"<f4": 1}, True])
def test_a_dtype_that_is_not_a_string(tmp_path, dtype):
    path = craft(tmp_path / "dtype.ckpt", header([entry("w", dtype, (2,), 0, 8)]), b"\0" * 8)
    refused(path, "tensor 'w'", "dtype")


def test_the_dtype_table_is_every_numeric_dtype_and_round_trips(tmp_path):
    names = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
             "float32", "float64", "complex64", "complex128"]
    assert sorted(checkpoint.DTYPES) == sorted(np.dtype(n).newbyteorder("<").str for n in names)
    items = [{"name": n, "data": np.arange(6).reshape(2, 3).astype(n)} for n in names]
    ms.save_checkpoint(items, tmp_path / "all.ckpt")
    loaded = ms.load_checkpoint(tmp_path / "all.ckpt")
    for item in items:
        assert loaded[item["name"]].dtype == item["data"].dtype
        assert loaded[item["name"]].tobytes() == item["data"].tobytes()


@pytest.mark.parametrize("dtype", [np.longdouble, np.clongdouble])
def test_platform_dependent_dtypes_are_not_saved(tmp_path, dtype):
    """long double's bytes differ between x86 (80-bit) and other machines: refused, not silently wrong."""
    with pytest.raises(TypeError, match="checkpoints hold boolean and numeric"):
        ms.save_checkpoint([{"name": "w", "data": np.ones(2, dtype)}], tmp_path / "ld.ckpt")
    assert not list(tmp_path.iterdir())


# --- shapes and sizes --------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,nbytes,part", [
    ([0, 2 ** 63], 0, "shape"),
    ([0, 2 ** 62], 0, "shape"),           # 2**62 float32 elements: more bytes than NumPy can address
    ([2 ** 40, 2 ** 40, 0], 0, "shape"),
    ([1] * 65, 4, "dimensions"),
    ([1] * 33, 4, "dimensions"),
    ([2 ** 64], 2 ** 66, "shape"),
    ([10 ** 400], 4, "shape"),
    ([True, 1], 4, "shape"),
    ([1.0], 4, "shape"),
    ([[1]], 4, "shape"),
    ([-1], 4, "shape"),
    ([None], 4, "shape"),
    ({"0": 1}, 4, "shape"),
    (None, 4, "shape"),
])
def test_impossible_shapes_are_checkpoint_errors(tmp_path, shape, nbytes, part):
    path = craft(tmp_path / "shape.ckpt", header([entry("w", "<f4", shape, 0, nbytes)], data_bytes=4), b"\0" * 4)
    refused(path, "tensor 'w'", part)


def test_32_dimensions_are_read_and_written(tmp_path):
    data = np.arange(4, dtype=np.int16).reshape([2, 2] + [1] * 30)
    ms.save_checkpoint({"w": data}, tmp_path / "deep.ckpt")
    assert np.array_equal(ms.load_checkpoint(tmp_path / "deep.ckpt")["w"], data)
    if np.__version__ >= "2":   # NumPy 2 makes 64 dimensions; a checkpoint holds at most 32 (NumPy 1's limit)
        with pytest.raises(ValueError, match="33 dimensions"):
            ms.save_checkpoint({"w": np.zeros([1] * 33)}, tmp_path / "deeper.ckpt")


def test_zero_size_arrays_with_large_dimensions_round_trip(tmp_path):
    data = np.zeros((0, 2 ** 40), np.float32)
    ms.save_checkpoint({"w": data}, tmp_path / "z.ckpt")
    loaded = ms.load_checkpoint(tmp_path / "z.ckpt")["w"]
    assert loaded.shape == (0, 2 ** 40) and loaded.dtype == np.float32


@pytest.mark.parametrize("offset,nbytes,data_bytes,part", [
    (0, 4, 8, "nbytes 4"),                 # nbytes is not the shape's
    (8, 8, 16, "offset 8"),               # a gap before the first tensor
    (0, 8, 16, "data_bytes 16"),          # data left over that no tensor owns
    (2 ** 64, 8, 8, "outside the data"),
])
def test_sizes_and_offsets_must_tile_the_data_exactly(tmp_path, offset, nbytes, data_bytes, part):
    path = craft(tmp_path / "size.ckpt", header([entry("w", "<f4", (2,), offset, nbytes)], data_bytes=data_bytes),
                 b"\0" * data_bytes)
    refused(path, part)


def test_two_tensors_over_the_same_bytes_are_refused(tmp_path):
    """Many entries over one big range would multiply memory: each tensor owns its own bytes, in order."""
    tensors = [entry(f"w{k}", "<f8", (1000,), 0, 8000) for k in range(3)]
    path = craft(tmp_path / "overlap.ckpt", header(tensors, data_bytes=8000), b"\0" * 8000)
    refused(path, "tensor 'w1'", "offset 0")


# --- exact types: a bool is not an int ---------------------------------------------------------------
@pytest.mark.parametrize("field,value", [
    ("data_bytes", True), ("version", True), ("data_bytes", 1.0), ("version", 1.0), ("data_bytes", "1"),
])
def test_a_bool_or_float_is_not_an_int_in_the_header(tmp_path, field, value):
    text = header([entry("w", "|u1", (1,), 0, 1)], data_bytes=1)
    text[field] = value
    path = craft(tmp_path / "bool.ckpt", text, b"\0")
    refused(path, field)


@pytest.mark.parametrize("field,value", [("offset", False), ("nbytes", True), ("offset", 0.0), ("nbytes", "1")])
def test_a_bool_or_float_is_not_an_int_in_an_entry(tmp_path, field, value):
    path = craft(tmp_path / "bool.ckpt", header([{**entry("w", "|u1", (1,), 0, 1), field: value}], data_bytes=1),
                 b"\0")
    refused(path, "tensor 'w'", field)


@pytest.mark.parametrize("change,part", [
    ({"extra": 1}, "'extra'"),
    ({"strings": []}, "strings"),
    ({"tensors": [[]]}, "entry 0"),
    ({"tensors": [{"name": "w"}]}, "tensor 'w'"),
    ({"format": None}, "format"),
])
def test_the_header_schema_is_strict(tmp_path, change, part):
    path = craft(tmp_path / "schema.ckpt", {**header(), **change})
    refused(path, part)


def test_an_entry_with_an_unknown_key_is_refused(tmp_path):
    path = craft(tmp_path / "key.ckpt", header([{**entry("w", "|u1", (1,), 0, 1), "pickle": "x"}], data_bytes=1),
                 b"\0")
    refused(path, "tensor 'w'", "'pickle'")


@pytest.mark.parametrize("text", [b'{"a": NaN}', b'{"a": Infinity}', b'{"a": -Infinity}', b'{"a": 1e400}'])
def test_json_constants_outside_the_schema(tmp_path, text):
    refused(craft(tmp_path / "nan.ckpt", text))


# --- names: one entry per name -----------------------------------------------------------------------
def test_a_string_named_like_a_tensor_is_refused(tmp_path):
    path = craft(tmp_path / "dup.ckpt", header([entry("w")], strings={"w": "replaces the tensor"}), b"\0" * 8)
    refused(path, "'w'", "two entries")


@pytest.mark.parametrize("where", ["strings", "entry", "top"])
def test_a_json_object_with_a_key_twice_is_refused(tmp_path, where):
    """json.loads keeps the last of two equal keys; a checkpoint must not mean two things."""
    one = {"name": "w", "dtype": "|u1", "shape": [1], "offset": 0, "nbytes": 1}
    fields = {
        "strings": '"strings": {"a": "1", "a": "2"}, "tensors": [%s]' % json.dumps(one),
        "entry": '"strings": {}, "tensors": [%s]' % json.dumps(one).replace('"name": "w"',
                                                                           '"name": "w", "name": "v"'),
        "top": '"strings": {}, "strings": {}, "tensors": [%s]' % json.dumps(one),
    }[where]
    text = ('{"format": "graphjit.checkpoint", "version": 1, %s, "data_bytes": 1}' % fields).encode()
    refused(craft(tmp_path / "twice.ckpt", text, b"\0"), "twice")


def test_two_tensors_of_one_name_name_the_entry(tmp_path):
    tensors = [entry("w", "|u1", (1,), 0, 1), entry("w", "|u1", (1,), 1, 1)]
    refused(craft(tmp_path / "two.ckpt", header(tensors), b"\0\0"), "tensor 'w'", "entry 1", "two tensors named")


def test_hostile_names_stay_on_one_short_line(tmp_path):
    name = "a\nb\r\u2028" + "x" * 100_000
    message = refused(craft(tmp_path / "long.ckpt", header([entry(name, "<f3")]), b"\0" * 8))
    assert len(message) < 1000


def test_a_boolean_stored_as_another_byte_is_refused(tmp_path):
    """NumPy reads any byte as a bool, but one that is neither 0 nor 1 compares unlike True and False."""
    path = craft(tmp_path / "bool.ckpt", header([entry("flags", "|b1", (3,), 0, 3)]), b"\x00\x01\x07")
    refused(path, "tensor 'flags'", "neither 0 nor 1")


def test_a_damaged_header_is_called_corrupt_not_malformed(tmp_path):
    ms.save_checkpoint({"w": np.ones(2)}, tmp_path / "d.ckpt")
    blob = bytearray((tmp_path / "d.ckpt").read_bytes())
    for old, new in [(b'"<f8"', b'"<f3"'), (b'"version": 1', b'"version": 7'), (b'{"format"', b'["format"')]:
        damaged = blob.replace(old, new)
        assert damaged != blob
        (tmp_path / "d.ckpt").write_bytes(bytes(damaged))
        refused(str(tmp_path / "d.ckpt"), "corrupt (sha256 checksum mismatch)")


def test_saving_refuses_what_loading_would_refuse(tmp_path):
    with pytest.raises(ValueError, match="cannot be written"):
        ms.save_checkpoint({"\ud800": np.ones(1)}, tmp_path / "surrogate.ckpt")
    assert not list(tmp_path.iterdir())


# --- the file itself ---------------------------------------------------------------------------------
def test_a_header_over_the_limit_is_refused_before_parsing(tmp_path, monkeypatch):
    path = craft(tmp_path / "big.ckpt", header(strings={"s": "x" * 5000}))
    monkeypatch.setattr(checkpoint, "MAX_HEADER_BYTES", 4096)
    refused(path, "header", "4096")
    with pytest.raises(ValueError, match="header"):
        ms.save_checkpoint({"w": np.ones(1)}, tmp_path / "x.ckpt", append_dict={"s": "x" * 5000})


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_is_refused_without_waiting(tmp_path):
    path = tmp_path / "pipe.ckpt"
    os.mkfifo(path)
    done = []

    def load():
        try:
            ms.load_checkpoint(str(path))
        except ms.CheckpointError as error:
            done.append(str(error))

    thread = threading.Thread(target=load, daemon=True)
    thread.start()
    thread.join(20)
    if thread.is_alive():   # unblock the reader so the thread ends
        with open(path, "wb"):
            pass
        pytest.fail("load_checkpoint waited on a named pipe")
    assert done and "not a regular file" in done[0]


def test_a_symlink_loop_is_a_checkpoint_error(tmp_path):
    (tmp_path / "a.ckpt").symlink_to(tmp_path / "b.ckpt")
    (tmp_path / "b.ckpt").symlink_to(tmp_path / "a.ckpt")
    with pytest.raises(ms.CheckpointError, match="cannot be read"):
        ms.load_checkpoint(str(tmp_path / "a.ckpt"))


def test_a_valid_checkpoint_loads_without_side_effects(tmp_path):
    ms.set_seed(1)
    net = nn.SequentialCell([nn.Dense(3, 4), nn.ReLU(), nn.Dense(4, 2)])
    ms.save_checkpoint(net, tmp_path / "net.ckpt", append_dict={"note": "x", "epoch": 3})
    with watch() as seen:
        loaded = ms.load_checkpoint(str(tmp_path / "net.ckpt"))
    seen.assert_none()
    assert loaded["note"] == "x" and int(loaded["epoch"]) == 3


def test_loaded_arrays_are_writable_and_do_not_keep_the_file_alive(tmp_path):
    ms.save_checkpoint({"w": np.arange(4.0)}, tmp_path / "w.ckpt")
    w = ms.load_checkpoint(tmp_path / "w.ckpt")["w"]
    root = w
    while isinstance(root.base, np.ndarray):
        root = root.base
    assert root.base is None and w.flags.writeable      # not a view of the file's bytes
    w += 1
    assert list(w) == [1.0, 2.0, 3.0, 4.0]


def test_the_header_of_a_saved_file_is_the_documented_one(tmp_path):
    ms.save_checkpoint({"w": np.ones((2, 3), np.float32)}, tmp_path / "w.ckpt", append_dict={"s": "t"})
    text, data = split(pathlib.Path(tmp_path / "w.ckpt").read_bytes())
    assert json.loads(text) == header([entry("w", "<f4", (2, 3), 0, 24)], strings={"s": "t"})
    assert data == np.ones((2, 3), np.float32).tobytes()


# --- load_param_into_net is linear -------------------------------------------------------------------
class Counted(str):
    """A checkpoint name that counts the string operations done on it (hash, compare, slice, endswith)."""
    ops = 0

    def __hash__(self):
        Counted.ops += 1
        return str.__hash__(self)

    def __eq__(self, other):
        Counted.ops += 1
        return str.__eq__(self, other)

    def __ne__(self, other):
        Counted.ops += 1
        return str.__ne__(self, other)

    def __getitem__(self, index):
        Counted.ops += 1
        return str.__getitem__(self, index)

    def endswith(self, *args):
        Counted.ops += 1
        return str.endswith(self, *args)

    def startswith(self, *args):
        Counted.ops += 1
        return str.startswith(self, *args)


class Many(nn.Cell):
    def __init__(self, count):
        super().__init__()
        for k in range(count):
            setattr(self, f"p{k}", ms.Parameter(np.zeros(1, np.float32), name=f"layer{k}.weight"))

    def construct(self, x):
        return x


def prefix_attack(params: int, entries: int, cls=str) -> dict:
    """The shape of the attack: half the net's names have no value (each search scans them all again),
    the other half each take a value under a prefix of its own, and junk fills the rest."""
    values = {}
    for k in range(params // 2, params):
        values[cls(f"q{k}.layer{k}.weight")] = ms.Parameter(np.ones(1, np.float32))
    for k in range(entries - len(values)):
        values[cls(f"junk{k}.bias")] = ms.Parameter(np.zeros(0, np.float32))
    return values


def test_load_param_into_net_does_linear_work():
    """The old prefix search rescanned every missing name against every entry for each prefix it tried
    (parameters^2 x entries: 47 s for 400 parameters and 10 000 entries). Counted on the names."""
    counts = {}
    for params, entries in [(60, 2000), (120, 4000)]:
        net, values = Many(params), prefix_attack(params, entries, Counted)
        Counted.ops = 0
        with pytest.warns(ms.GraphjitWarning):
            not_loaded, unused = ms.load_param_into_net(net, values)
        counts[params, entries] = Counted.ops
        assert not_loaded == [f"layer{k}.weight" for k in range(params // 2)]
        assert len(unused) == entries - params // 2
        assert all(float(getattr(net, f"p{k}")[0]) == 1.0 for k in range(params // 2, params))
        assert Counted.ops <= 20 * (params + entries), Counted.ops
    assert counts[120, 4000] <= 2.5 * counts[60, 2000], counts


def reference_prefixed_matches(missing: list, values: dict, used: set) -> dict:
    """The prefix search as it was before (quadratic): the semantics the linear one keeps."""
    out, tried = {}, set()
    while True:
        prefix = next((key[:-len(n)] for n in missing if n not in out for key in values
                       if key not in used and key.endswith("." + n) and key[:-len(n)] not in tried), None)
        if prefix is None:
            return out
        tried.add(prefix)
        for n in missing:
            if n not in out and prefix + n in values and prefix + n not in used:
                out[n] = prefix + n
                used.add(prefix + n)


_PART = st.sampled_from(["a", "b", "w", "a.b", "x.a", ".", "", "b.w"])
_NAME = st.lists(_PART, min_size=1, max_size=4).map(".".join)


@settings(settings.get_profile(PROFILE))
@given(net_names=st.lists(_NAME.filter(bool), max_size=8, unique=True), keys=st.lists(_NAME, max_size=12, unique=True),
       strict=st.booleans())
def test_the_linear_search_loads_what_the_old_one_loaded(net_names, keys, strict):
    class Named(nn.Cell):
        def __init__(self):
            super().__init__()
            for k, n in enumerate(net_names):
                setattr(self, f"p{k}", ms.Parameter(np.zeros(1), name=n))

        def construct(self, x):
            return x

    net = Named()
    values = {k: ms.Parameter(np.full(1, float(i + 1))) for i, k in enumerate(keys)}
    chosen = {n: n for n in net_names if n in values}
    if not strict:
        chosen.update(reference_prefixed_matches([n for n in net_names if n not in chosen], values,
                                                 set(chosen.values())))
    with pytest.warns() if len(chosen) < len(net_names) else _no_warning():
        not_loaded, unused = ms.load_param_into_net(net, values, strict_load=strict)
    assert not_loaded == [n for n in net_names if n not in chosen]
    assert unused == [k for k in keys if k not in set(chosen.values())]
    for k, n in enumerate(net_names):
        expected = float(values[chosen[n]][0]) if n in chosen else 0.0
        assert float(getattr(net, f"p{k}")[0]) == expected


class _no_warning:
    def __enter__(self):
        import warnings
        self._catch = warnings.catch_warnings()
        self._catch.__enter__()
        warnings.simplefilter("error")

    def __exit__(self, *exc):
        return self._catch.__exit__(*exc)
