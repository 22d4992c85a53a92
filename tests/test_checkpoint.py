"""Checkpoints (graphjit/checkpoint.py): MindSpore's save/load API, a bit-exact round trip for every
dtype, loading in place (so compiled functions see the new values), and a file format that is
checked (magic, sizes, sha256, dtypes) and never unpickled."""

import ast
import hashlib
import json
import pathlib
import pickle
import warnings

import numpy as np
import pytest

import graphjit as ms
from graphjit import nn
from graphjit.checkpoint import DIGEST_BYTES, MAGIC, PREFIX_BYTES

CKPT = pathlib.Path(ms.__file__).resolve().parent / "checkpoint.py"


def mlp(seed):
    ms.set_seed(seed)
    return nn.SequentialCell([nn.Dense(4, 8), nn.ReLU(), nn.Dense(8, 8, has_bias=False), nn.Tanh(), nn.Dense(8, 3)])


class Model(nn.Cell):
    """Sub-cells at two depths, a non-trainable Parameter and optimizer-like state Parameters."""

    def __init__(self, seed):
        super().__init__()
        self.body = mlp(seed)
        self.head = nn.Dense(3, 2)
        self.scale = ms.Parameter(np.float64(1.5), name="scale", requires_grad=False)
        self.step = ms.Parameter(np.array(7, dtype=np.int32), name="global_step", requires_grad=False)
        self.moment = ms.Parameter(np.arange(6, dtype=np.float16).reshape(2, 3), name="moment1.head.weight")

    def construct(self, x):
        return self.head(self.body(x)) * self.scale


def params_of(net):
    return {name: np.array(p) for name, p in net.parameters_and_names()}


def assert_bit_exact(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


def test_a_net_round_trips_bit_exact_and_loads_in_place(tmp_path):
    saved, target = Model(1), Model(2)
    ms.save_checkpoint(saved, str(tmp_path / "model.ckpt"))
    loaded = ms.load_checkpoint(str(tmp_path / "model.ckpt"))
    names = [n for n, _ in saved.parameters_and_names()]
    assert list(loaded) == ["scale", "global_step", "moment1.head.weight", "body.0.weight", "body.0.bias",
                            "body.2.weight", "body.4.weight", "body.4.bias", "head.weight", "head.bias"]
    assert sorted(loaded) == sorted(p.name for _, p in saved.parameters_and_names()) and len(names) == len(loaded)
    for name, value in loaded.items():
        assert isinstance(value, ms.Parameter) and value.name == name
    before = {name: p for name, p in target.parameters_and_names()}
    assert ms.load_param_into_net(target, loaded) == ([], [])
    for (name, p), (_, q) in zip(target.parameters_and_names(), saved.parameters_and_names()):
        assert p is before[name] and p.name == q.name        # same objects, same names
        assert_bit_exact(np.asarray(p), np.asarray(q))
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    assert_bit_exact(target(x), saved(x))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64,
                                   np.uint8, np.uint32, np.bool_, np.complex64])
def test_every_dtype_round_trips_bit_exact(tmp_path, dtype):
    rng = np.random.default_rng(3)
    values = [rng.standard_normal((3, 5)) * 100, rng.standard_normal(()) * 100, np.zeros((0, 4)),
              rng.standard_normal((2, 1, 3))]
    special = [np.array([np.nan, np.inf, -np.inf, -0.0])] if np.dtype(dtype).kind in "fc" else []
    items = [{"name": f"t{k}", "data": np.asarray(v).astype(dtype)} for k, v in enumerate(values + special)]
    items.append({"name": "strided", "data": np.asarray(values[0]).astype(dtype).T[::2]})   # not contiguous
    ms.save_checkpoint(items, str(tmp_path / "t"))
    loaded = ms.load_checkpoint(str(tmp_path / "t.ckpt"))
    for item in items:
        assert_bit_exact(np.asarray(loaded[item["name"]]), np.array(item["data"], order="C"))


def test_big_endian_arrays_are_stored_little_endian_and_read_native(tmp_path):
    data = np.arange(6, dtype=">f8").reshape(2, 3)
    ms.save_checkpoint([{"name": "w", "data": data}], str(tmp_path / "be.ckpt"))
    header = _header(tmp_path / "be.ckpt")
    assert header["tensors"][0]["dtype"] == "<f8"
    loaded = ms.load_checkpoint(str(tmp_path / "be.ckpt"))["w"]
    assert loaded.dtype == np.dtype("=f8") and np.array_equal(loaded, data)


def test_the_forms_mindspore_saves(tmp_path):
    net = mlp(4)
    reference = params_of(net)
    forms = {
        "cell": net,
        "trainable": net.trainable_params(),
        "dicts": [{"name": n, "data": p} for n, p in net.parameters_and_names()],
        "loaded": ms.load_checkpoint(_save(net, tmp_path / "first")),
    }
    for label, obj in forms.items():
        ms.save_checkpoint(obj, str(tmp_path / label))
        loaded = ms.load_checkpoint(str(tmp_path / f"{label}.ckpt"))
        assert list(loaded) == list(reference), label
        for name in reference:
            assert_bit_exact(np.asarray(loaded[name]), reference[name])


def test_a_shared_weight_is_saved_once(tmp_path):
    class Tied(nn.Cell):
        def __init__(self):
            super().__init__()
            self.a = nn.Dense(3, 3)
            self.b = nn.Dense(3, 3)
            self.b.weight = self.a.weight

        def construct(self, x):
            return self.b(self.a(x))

    loaded = ms.load_checkpoint(_save(Tied(), tmp_path / "tied"))
    assert list(loaded) == ["a.weight", "a.bias", "b.bias"]


def test_append_dict_choice_func_and_the_load_filters(tmp_path):
    net = mlp(5)
    path = str(tmp_path / "extra.ckpt")
    ms.save_checkpoint(net, path, append_dict={"epoch_num": 3, "lr": 0.5, "done": True, "note": "warm-up",
                                               "ema": np.ones(2)},
                       choice_func=lambda name: not name.startswith("2."))
    loaded = ms.load_checkpoint(path)
    assert "2.weight" not in loaded and "0.weight" in loaded
    assert loaded["note"] == "warm-up"
    assert loaded["epoch_num"].dtype == np.int64 and int(loaded["epoch_num"]) == 3
    assert loaded["lr"].dtype == np.float32 and float(loaded["lr"]) == 0.5
    assert loaded["done"].dtype == np.bool_ and bool(loaded["done"])
    assert list(ms.load_checkpoint(path, filter_prefix="0.")) == ["4.weight", "4.bias", "epoch_num", "lr", "done",
                                                                   "ema", "note"]
    assert list(ms.load_checkpoint(path, filter_prefix=["0.", "4.", "e", "lr", "d"])) == ["note"]
    assert list(ms.load_checkpoint(path, specify_prefix=("4.", "note"))) == ["4.weight", "4.bias", "note"]
    assert list(ms.load_checkpoint(path, choice_func=lambda n: n.endswith("bias"))) == ["0.bias", "4.bias"]
    # filter_prefix and specify_prefix override choice_func, as in MindSpore
    assert list(ms.load_checkpoint(path, specify_prefix="4.", choice_func=lambda n: False)) == ["4.weight", "4.bias"]
    with pytest.raises(ValueError, match="nothing to load.*filter_prefix"):
        ms.load_checkpoint(path, specify_prefix="nope")
    with pytest.raises(TypeError, match="filter_prefix must be"):
        ms.load_checkpoint(path, filter_prefix=3)
    with pytest.raises(ValueError, match="also a parameter's name"):
        ms.save_checkpoint(net, path, append_dict={"0.bias": 1})


def test_the_suffix_is_appended_like_mindspore(tmp_path):
    net = mlp(6)
    ms.save_checkpoint(net, str(tmp_path / "plain"))
    assert (tmp_path / "plain.ckpt").exists() and not (tmp_path / "plain").exists()
    assert list(ms.load_checkpoint(str(tmp_path / "plain"))) == list(ms.load_checkpoint(tmp_path / "plain.ckpt"))
    ms.save_checkpoint(net, tmp_path / "again.ckpt")              # a pathlib.Path works too
    assert (tmp_path / "again.ckpt").exists() and not (tmp_path / "again.ckpt.ckpt").exists()
    assert not list(tmp_path.glob("*.tmp*"))                      # the temporary file is gone


@pytest.mark.parametrize("level", ["O0", "O1", "O2"])
@pytest.mark.parametrize("exec_mode", ["auto", "no_sink"])
def test_a_compiled_net_computes_with_the_loaded_values(tmp_path, level, exec_mode):
    """The Parameters are updated in place: a jitted net and a jitted training-style function that
    close over them give the new results with no recompile and no stale constant."""
    source, net = mlp(7), mlp(8)
    x = np.random.default_rng(1).standard_normal((6, 4)).astype(np.float32)
    forward = ms.jit(net, jit_level=level, exec_mode=exec_mode)
    weight = net[0].weight

    @ms.jit(jit_level=level, exec_mode=exec_mode)
    def uses_weight(x):
        return x @ weight.T * 2.0

    old, old_w = forward(x), uses_weight(x)
    assert_bit_exact(old, net(x))
    ms.load_param_into_net(net, ms.load_checkpoint(_save(source, tmp_path / "src")))
    new = forward(x)
    assert_bit_exact(new, source(x))
    assert not np.array_equal(new, old)
    np.testing.assert_array_equal(uses_weight(x), x @ np.asarray(source[0].weight).T * 2.0)
    assert not np.array_equal(uses_weight(x), old_w)
    assert net[0].weight is weight and weight.name == "0.weight"


def test_graph_mode_cell_sees_loaded_values(tmp_path):
    source, net = mlp(9), mlp(10)
    x = np.ones((2, 4), np.float32)
    ms.set_context(mode=ms.GRAPH_MODE)
    net(x)
    ms.load_checkpoint(_save(source, tmp_path / "g"), net=net)
    assert_bit_exact(net(x), source(x))


def test_missing_parameters_are_listed_returned_and_warned(tmp_path):
    small = nn.SequentialCell([nn.Dense(4, 8)])
    big = mlp(11)
    before = np.array(big[4].weight)
    with pytest.warns(ms.GraphjitWarning, match=r"3 parameter\(s\) of the net are not in the checkpoint.*"
                                                r"2.weight, 4.weight, 4.bias"):
        not_loaded, unused = ms.load_param_into_net(big, ms.load_checkpoint(_save(small, tmp_path / "s")))
    assert not_loaded == ["2.weight", "4.weight", "4.bias"] and unused == []
    assert_bit_exact(np.asarray(big[0].weight), np.asarray(small[0].weight))
    assert_bit_exact(np.asarray(big[4].weight), before)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ms.GraphjitWarning)
        not_loaded, unused = ms.load_param_into_net(small, ms.load_checkpoint(_save(big, tmp_path / "b")))
    assert not_loaded == [] and unused == ["2.weight", "4.weight", "4.bias"]


def test_a_wrapped_nets_checkpoint_loads_across_the_prefix(tmp_path):
    class Wrapper(nn.Cell):
        def __init__(self, net):
            super().__init__()
            self.backbone = net

        def construct(self, x):
            return self.backbone(x)

    ms.set_seed(12)
    wrapped = Wrapper(nn.SequentialCell([nn.Dense(4, 3)]))
    loaded = ms.load_checkpoint(_save(wrapped, tmp_path / "w"))
    assert list(loaded) == ["backbone.0.weight", "backbone.0.bias"]
    plain = nn.SequentialCell([nn.Dense(4, 3)])
    assert ms.load_param_into_net(plain, loaded) == ([], [])
    assert_bit_exact(np.asarray(plain[0].weight), np.asarray(wrapped.backbone[0].weight))
    fresh = nn.SequentialCell([nn.Dense(4, 3)])
    with pytest.warns(ms.GraphjitWarning):
        assert ms.load_param_into_net(fresh, loaded, strict_load=True) == (
            ["0.weight", "0.bias"], ["backbone.0.weight", "backbone.0.bias"])


def test_a_shape_mismatch_raises_and_loads_nothing(tmp_path):
    net = nn.SequentialCell([nn.Dense(4, 8), nn.Dense(8, 3)])
    other = nn.SequentialCell([nn.Dense(4, 8), nn.Dense(8, 5)])
    before = params_of(net)
    with pytest.raises(ms.CheckpointMismatchError) as info:
        ms.load_param_into_net(net, ms.load_checkpoint(_save(other, tmp_path / "o")))
    message = str(info.value)
    assert "\n" not in message
    assert "1.weight has shape (3, 8) in the net and (5, 8) in the checkpoint" in message
    assert "1.bias has shape (3,) in the net and (5,) in the checkpoint" in message
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, ValueError)
    for name, value in params_of(net).items():     # not even the matching first layer was loaded
        assert_bit_exact(value, before[name])


def test_dtypes_convert_within_a_kind_unless_strict(tmp_path):
    half = nn.SequentialCell([nn.Dense(2, 2, dtype=np.float16)])
    single = nn.SequentialCell([nn.Dense(2, 2, dtype=np.float32)])
    loaded = ms.load_checkpoint(_save(single, tmp_path / "f32"))
    ms.load_param_into_net(half, loaded)
    assert half[0].weight.dtype == np.float16
    assert_bit_exact(np.asarray(half[0].weight), np.asarray(single[0].weight).astype(np.float16))
    with pytest.raises(ms.CheckpointMismatchError, match=r"0.weight has dtype float16 in the net and float32 in "
                                                         r"the checkpoint \(strict_load=True\)"):
        ms.load_param_into_net(half, loaded, strict_load=True)
    ints = {"0.weight": ms.Parameter(np.ones((2, 2), np.int32), "0.weight"),
            "0.bias": ms.Parameter(np.ones(2, np.float32), "0.bias")}
    with pytest.raises(ms.CheckpointMismatchError, match="0.weight has dtype float16 in the net and int32"):
        ms.load_param_into_net(half, ints)


def test_load_param_into_net_checks_its_arguments():
    with pytest.raises(TypeError, match="net must be a Cell"):
        ms.load_param_into_net(object(), {})
    with pytest.raises(TypeError, match="parameter_dict must be a dict"):
        ms.load_param_into_net(mlp(0), [])
    with pytest.raises(TypeError, match="must map names to Parameters"):
        ms.load_param_into_net(mlp(0), {"0.weight": 1.0})


def test_save_checkpoint_checks_its_arguments(tmp_path):
    with pytest.raises(TypeError, match="save_obj must be a Cell, a list or a dict"):
        ms.save_checkpoint(3, str(tmp_path / "x"))
    with pytest.raises(TypeError, match="ckpt_file_name must be a string or a path"):
        ms.save_checkpoint(mlp(0), 3)
    with pytest.raises(TypeError, match="integrated_save must be a bool"):
        ms.save_checkpoint(mlp(0), str(tmp_path / "x"), integrated_save="yes")
    with pytest.raises(TypeError, match="item 0 of the list must have the keys"):
        ms.save_checkpoint([{"name": "w"}], str(tmp_path / "x"))
    with pytest.raises(TypeError, match="item 0 of the list must be a named Parameter"):
        ms.save_checkpoint([np.ones(2)], str(tmp_path / "x"))
    with pytest.raises(TypeError, match="'w' has dtype object"):
        ms.save_checkpoint([{"name": "w", "data": np.array([None, 1])}], str(tmp_path / "x"))
    with pytest.raises(TypeError, match="'w' must be a Parameter or an array"):
        ms.save_checkpoint([{"name": "w", "data": [1, 2]}], str(tmp_path / "x"))
    with pytest.raises(ValueError, match="two parameters are named 'w'"):
        ms.save_checkpoint([{"name": "w", "data": np.ones(1)}] * 2, str(tmp_path / "x"))
    with pytest.raises(ValueError, match="enc_key is not supported"):
        ms.save_checkpoint(mlp(0), str(tmp_path / "x"), enc_key=b"0123456789abcdef")
    with pytest.raises(TypeError, match="unexpected keyword arguments: colour"):
        ms.save_checkpoint(mlp(0), str(tmp_path / "x"), colour=1)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        ms.save_checkpoint(mlp(0), str(tmp_path / "no" / "such" / "x"))
    assert not list(tmp_path.iterdir())


# --- damaged and hostile files -----------------------------------------------------------------------
def _save(net, path) -> str:
    ms.save_checkpoint(net, str(path))
    return str(path) + ".ckpt"


def _header(path) -> dict:
    blob = pathlib.Path(path).read_bytes()
    size = int.from_bytes(blob[len(MAGIC):PREFIX_BYTES], "little")
    return json.loads(blob[PREFIX_BYTES:PREFIX_BYTES + size])


def _rewrite(path, header: dict, data: bytes) -> None:
    """A file with a valid digest around a header of our choosing (what an attacker can write)."""
    text = json.dumps(header).encode()
    body = MAGIC + len(text).to_bytes(8, "little") + text + data
    pathlib.Path(path).write_bytes(body + hashlib.sha256(body).digest())


def test_a_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="no checkpoint file .*nothing.ckpt"):
        ms.load_checkpoint(str(tmp_path / "nothing.ckpt"))
    with pytest.raises(ms.CheckpointError, match="is a folder"):
        ms.load_checkpoint(str(tmp_path))


@pytest.mark.parametrize("cut", [0, 5, PREFIX_BYTES + 3, -DIGEST_BYTES - 1, -1])
def test_a_truncated_file(tmp_path, cut):
    path = _save(mlp(0), tmp_path / "t")
    blob = pathlib.Path(path).read_bytes()
    pathlib.Path(path).write_bytes(blob[:cut] if cut else b"")
    with pytest.raises(ms.CheckpointError, match="truncated|not a graphjit checkpoint") as info:
        ms.load_checkpoint(path)
    assert path in str(info.value) and "\n" not in str(info.value)


def test_flipped_bits_fail_the_checksum(tmp_path):
    path = _save(mlp(0), tmp_path / "c")
    blob = bytearray(pathlib.Path(path).read_bytes())
    for position in (len(blob) - DIGEST_BYTES - 3, len(blob) - 1):   # in the data, in the digest
        damaged = bytearray(blob)
        damaged[position] ^= 0x10
        pathlib.Path(path).write_bytes(bytes(damaged))
        with pytest.raises(ms.CheckpointError, match="corrupt \\(sha256 checksum mismatch\\)"):
            ms.load_checkpoint(path)
    pathlib.Path(path).write_bytes(bytes(blob) + b"\0")
    with pytest.raises(ms.CheckpointError, match="bytes after its end"):
        ms.load_checkpoint(path)


class _Payload:
    def __reduce__(self):
        return (pathlib.Path.touch, (pathlib.Path(self.marker),))


def test_a_pickle_is_refused_and_never_run(tmp_path):
    payload = _Payload()
    payload.marker = str(tmp_path / "pwned")
    path = tmp_path / "evil.ckpt"
    path.write_bytes(pickle.dumps({"0.weight": payload}))
    with pytest.raises(ms.CheckpointError, match="not a graphjit checkpoint"):
        ms.load_checkpoint(str(path))
    np.save(tmp_path / "evil.npy", np.array([payload], dtype=object), allow_pickle=True)
    with pytest.raises(ms.CheckpointError, match="not a graphjit checkpoint"):
        ms.load_checkpoint(str(tmp_path / "evil.npy"))
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize("dtype", ["|O", "|O8", "<V8", "<U4", "|S4", ">f4", "f4", "<M8[s]", "float32"])
def test_a_header_asking_for_other_dtypes_is_refused(tmp_path, dtype):
    path = tmp_path / "dtype.ckpt"
    _rewrite(path, {"format": "graphjit.checkpoint", "version": 1, "strings": {}, "data_bytes": 8,
                    "tensors": [{"name": "w", "dtype": dtype, "shape": [2], "offset": 0, "nbytes": 8}]}, b"\0" * 8)
    with pytest.raises(ms.CheckpointError, match="only boolean and numeric dtypes"):
        ms.load_checkpoint(str(path))


@pytest.mark.parametrize("change,match", [
    ({"shape": [3]}, "not its shape's"),
    ({"offset": 4}, "outside the data"),
    ({"nbytes": -8}, "outside the data"),
    ({"shape": [-2, -1]}, "has shape"),
    ({"shape": "2"}, "has shape"),
    ({"name": 3}, "without a name"),
])
def test_a_header_that_does_not_fit_its_data_is_refused(tmp_path, change, match):
    path = tmp_path / "bad.ckpt"
    entry = {"name": "w", "dtype": "<f4", "shape": [2], "offset": 0, "nbytes": 8, **change}
    _rewrite(path, {"format": "graphjit.checkpoint", "version": 1, "strings": {}, "data_bytes": 8,
                    "tensors": [entry]}, b"\0" * 8)
    with pytest.raises(ms.CheckpointError, match=match):
        ms.load_checkpoint(str(path))


@pytest.mark.parametrize("header,match", [
    ({"format": "other", "version": 1, "tensors": [], "strings": {}, "data_bytes": 0}, "has format 'other'"),
    ({"format": "graphjit.checkpoint", "version": 2, "tensors": [], "strings": {}, "data_bytes": 0}, "version 2"),
    ({"format": "graphjit.checkpoint", "version": 1, "tensors": {}, "strings": {}, "data_bytes": 0}, "no tensor list"),
    ({"format": "graphjit.checkpoint", "version": 1, "tensors": [], "strings": {"a": 1}, "data_bytes": 0},
     "strings are not text"),
    ([1, 2], "no data size"),
])
def test_a_header_of_another_form_is_refused(tmp_path, header, match):
    path = tmp_path / "form.ckpt"
    _rewrite(path, header, b"")
    with pytest.raises(ms.CheckpointError, match=match):
        ms.load_checkpoint(str(path))


def test_two_tensors_of_one_name_and_a_header_that_is_not_json(tmp_path):
    path = tmp_path / "dup.ckpt"
    entry = {"name": "w", "dtype": "<f4", "shape": [1], "offset": 0, "nbytes": 4}
    _rewrite(path, {"format": "graphjit.checkpoint", "version": 1, "strings": {}, "data_bytes": 4,
                    "tensors": [entry, entry]}, b"\0" * 4)
    with pytest.raises(ms.CheckpointError, match="two tensors named 'w'"):
        ms.load_checkpoint(str(path))
    for header in (b"{x}", b"[" * 100_000 + b"]" * 100_000, b"\xff\xfe"):
        body = MAGIC + len(header).to_bytes(8, "little") + header
        path.write_bytes(body + hashlib.sha256(body).digest())
        with pytest.raises(ms.CheckpointError, match="not valid JSON"):
            ms.load_checkpoint(str(path))


def test_the_checkpoint_module_never_unpickles():
    """No pickle import, and NumPy's loaders (which may unpickle) are not used."""
    tree = ast.parse(CKPT.read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                for alias in node.names} | {node.module for node in ast.walk(tree)
                                            if isinstance(node, ast.ImportFrom) and node.module}
    assert not imported & {"pickle", "cPickle", "dill", "joblib", "marshal", "shelve"}
    text = CKPT.read_text()
    assert "np.load(" not in text and "allow_pickle" not in text
