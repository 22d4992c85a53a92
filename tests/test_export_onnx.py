"""export(..., file_format="ONNX"): every op has an ONNX row or a reason, docs/onnx.md is generated, and
the written models run in onnxruntime equal to eager execution: the seed Network, LeNet, every layer of
`graphjit.nn`, and each row on the values where ONNX and NumPy differ (NaN, zero divisors, tiny
arguments). Loading an ONNX file checks it and runs nothing of it; AIR is refused with one error."""

import importlib.util
import os
import pathlib
import sys
import warnings

import numpy as np
import pytest

import graphjit as ms
from graphjit import Tensor, nn
from graphjit.graph import onnx_ops
from graphjit.graph.ops import OPS
from locations import BENCHMARKS
from side_effects import watch

HAVE_ONNX = all(importlib.util.find_spec(m) is not None for m in ("onnx", "onnxruntime"))
needs_onnx = pytest.mark.skipif(not HAVE_ONNX, reason="onnx and onnxruntime are not installed (the `test` extra)")
ROOT = pathlib.Path(__file__).resolve().parent.parent
RNG = np.random.default_rng(0)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def close(got, expected):
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for g, e in zip(got, expected):
            close(g, e)
        return
    expected = np.asarray(expected)
    got = np.asarray(got)
    assert got.shape == expected.shape and got.dtype == expected.dtype, (got.dtype, got.shape, expected.dtype,
                                                                         expected.shape)
    np.testing.assert_allclose(got, expected, rtol=2e-5, atol=1e-6, equal_nan=True)


def round_trip(tmp_path, net, *inputs, name="model", **kwargs):
    """Export to ONNX, load with graphjit.load (onnxruntime), run on the same inputs."""
    path = ms.export(net, *inputs, file_name=str(tmp_path / name), file_format="ONNX", **kwargs)
    assert path == str(tmp_path / name) + ".onnx" and os.path.exists(path)
    return ms.load(path)(*inputs)


# --- the column ---------------------------------------------------------------------------------------

def test_every_op_has_an_onnx_row_or_a_reason():
    for name in OPS:
        kinds = [name in onnx_ops.SPELLINGS, name in onnx_ops.NOT_EXPORTED, name in onnx_ops.STRUCTURAL]
        assert kinds.count(True) == 1, f"{name}: needs exactly one of an ONNX row, a reason, or the writer's own"
        if name in onnx_ops.NOT_EXPORTED:
            assert len(onnx_ops.NOT_EXPORTED[name]) > 10, name
    assert set(onnx_ops.SPELLINGS) | set(onnx_ops.NOT_EXPORTED) | set(onnx_ops.STRUCTURAL) <= set(OPS)


def test_onnx_md_is_generated_from_the_column():
    spec = importlib.util.spec_from_file_location("graphjit_docs_gen_onnx", ROOT / "docs" / "gen_onnx.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = (ROOT / "docs" / "onnx.md").read_text()
    assert text == module.render(), "docs/onnx.md is out of date: run `python docs/gen_onnx.py`"
    for name in OPS:
        assert f"| `{name}` |" in text, name


# --- file names and formats ----------------------------------------------------------------------------

def test_air_is_refused_with_one_error_naming_the_written_formats(tmp_path):
    with pytest.raises(ms.GraphjitError, match="cannot export to AIR: .* it writes GJIR, ONNX and MINDIR"):
        ms.export(nn.ReLU(), f32(2, 3), file_name=str(tmp_path / "model"), file_format="AIR")
    assert not list(tmp_path.iterdir())
    with pytest.raises(ValueError, match="file_format must be one of"):
        ms.export(nn.ReLU(), f32(2, 3), file_name=str(tmp_path / "model"), file_format="TFLITE")
    with pytest.raises(TypeError, match="enc_key"):
        ms.export(nn.ReLU(), f32(2, 3), file_name=str(tmp_path / "model"), file_format="GJIR", enc_key=b"k" * 16)


def test_without_the_onnx_packages_the_errors_say_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ms.GraphjitError, match="the onnx package is not installed"):
        ms.export(nn.ReLU(), f32(2, 3), file_name=str(tmp_path / "m"), file_format="ONNX")
    assert not (tmp_path / "m.onnx").exists()
    (tmp_path / "m.onnx").write_bytes(b"")
    with pytest.raises(ms.GraphjitError, match="needs the onnx and onnxruntime packages"):
        ms.load(str(tmp_path / "m.onnx"))


def test_suffixes_are_added_as_mindspore_adds_them(tmp_path):
    x = f32(2, 3)
    assert ms.export(nn.ReLU(), x, file_name=str(tmp_path / "a"), file_format="GJIR") == str(tmp_path / "a.gjir")
    assert ms.export(nn.ReLU(), x, file_name=str(tmp_path / "b.gjir")) == str(tmp_path / "b.gjir")
    assert ms.export(nn.ReLU(), x, file=str(tmp_path / "c.bin")) == str(tmp_path / "c.bin")   # graphjit's keyword
    np.testing.assert_array_equal(ms.load(str(tmp_path / "a.gjir"))(x), np.maximum(x, 0))


# --- models in onnxruntime -------------------------------------------------------------------------------

@needs_onnx
def test_seed_network(tmp_path):
    sys.path.insert(0, str(ROOT / "samples"))
    try:
        from network import Network
    finally:
        sys.path.remove(str(ROOT / "samples"))
    ms.set_seed(0)
    model = Network()
    x = f32(64, 1, 28, 28)
    close(round_trip(tmp_path, model, x), model(x))


def _sample(name):
    spec = importlib.util.spec_from_file_location(f"onnx_sample_{name}", ROOT / "samples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@needs_onnx
@pytest.mark.parametrize("name,level", [("graph_mode", "O2"), ("jit_construct", "O2"), ("jit_function", "O2"),
                                        ("jit_transform", "O1")])
def test_the_static_graph_chapter_samples(name, level, tmp_path):
    """The samples of "Accelerating with Static Graphs": a jitted construct, a jitted function building its
    network at compile time, `ms.jit(fn)`; each exported equals its eager run."""
    module = _sample(name)
    x = f32(8, 1, 28, 28)
    ms.set_seed(0)
    if hasattr(module, "run"):
        target = module.run if name == "jit_function" else module.run_with_jit
        plain = getattr(module.run, "__wrapped__", module.run)
        expected = plain(x)
        ms.set_seed(0)
    else:
        target = module.Network()
        construct = getattr(module.Network.construct, "__graphjit_fn__", module.Network.construct)
        expected = construct(target, x)
    close(np.asarray(round_trip(tmp_path, target, x, jit_level=level)), np.asarray(expected))


@needs_onnx
def test_lenet(tmp_path):
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import bench_lenet
    finally:
        sys.path.remove(str(BENCHMARKS))
    ms.set_seed(0)
    model = bench_lenet.LeNet5()
    x = f32(4, 1, 32, 32)
    close(round_trip(tmp_path, model, x, jit_level="O2"), model(x))


@needs_onnx
def test_convolutions_and_pools_stay_the_size_of_their_weights(tmp_path):
    """Windows and strided slices are small Gathers and Slices, not index tables the size of the result."""
    net = nn.SequentialCell(nn.Conv2d(3, 8, 3, has_bias=True), nn.ReLU(), nn.MaxPool2d(2, 2), nn.AvgPool2d(2, 2))
    x = f32(8, 3, 64, 64)
    close(round_trip(tmp_path, net, x), net(x))
    weights = sum(p.nbytes for p in net.trainable_params())
    assert os.path.getsize(tmp_path / "model.onnx") < weights + 64 * 1024


@needs_onnx
def test_the_saving_and_loading_chapter(tmp_path, monkeypatch):
    """MindSpore's chapter with file_format="ONNX": export, load, GraphCell."""
    monkeypatch.chdir(tmp_path)
    ms.set_context(mode=ms.GRAPH_MODE, jit_syntax_level=ms.STRICT)
    try:
        model = nn.SequentialCell(nn.Flatten(), nn.Dense(28 * 28, 512), nn.ReLU(), nn.Dense(512, 512), nn.ReLU(),
                                  nn.Dense(512, 10))
        inputs = Tensor(np.ones([1, 1, 28, 28]).astype(np.float32))
        ms.export(model, inputs, file_name="model", file_format="ONNX")
        graph = ms.load("model.onnx")
        outputs = nn.GraphCell(graph)(inputs)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE, jit_syntax_level=ms.LAX)
    assert isinstance(outputs, Tensor) and outputs.shape == (1, 10)
    close(np.asarray(outputs), np.asarray(model(inputs)))
    with pytest.raises(TypeError, match="params_init"):
        nn.GraphCell(graph, params_init={"w": np.ones(1)})
    with pytest.raises(TypeError, match="graph returned by graphjit.load"):
        nn.GraphCell(model)


LABELS = np.array([0, 1, 5, 2], np.int32)


def _layer_cases():
    """Every Cell of `graphjit.nn`, built with example inputs (several forms for some)."""
    x4, x2 = f32(2, 3, 9, 9), f32(4, 6)
    target = (f32(4, 6) > 0).astype(np.float32)
    weights = np.arange(1, 7).astype(np.float32)
    ids = np.array([[0, 2], [3, 9]], np.int32)
    return {
        "Dense": [(lambda: nn.Dense(6, 5), (x2,)), (lambda: nn.Dense(6, 5, has_bias=False, activation="relu"), (x2,))],
        "Flatten": [(lambda: nn.Flatten(), (x4,)), (lambda: nn.Flatten(2), (x4,))],
        "SequentialCell": [(lambda: nn.SequentialCell(nn.Dense(6, 5), nn.ReLU()), (x2,))],
        "Dropout": [(lambda: nn.Dropout(p=0.3).set_train(True), (x2,))],      # exported in inference mode
        "Embedding": [(lambda: nn.Embedding(10, 4), (ids,)), (lambda: nn.Embedding(10, 4, padding_idx=0), (ids,)),
                      (lambda: nn.Embedding(10, 4, use_one_hot=True), (ids,))],
        "ReLU": [(lambda: nn.ReLU(), (x2,))], "ReLU6": [(lambda: nn.ReLU6(), (x2 * 4,))],
        "Sigmoid": [(lambda: nn.Sigmoid(), (x2 * 30,))], "Tanh": [(lambda: nn.Tanh(), (x2,))],
        "Softmax": [(lambda: nn.Softmax(), (x2,)), (lambda: nn.Softmax(0), (x2,))],
        "LogSoftmax": [(lambda: nn.LogSoftmax(), (x2,))],
        "GELU": [(lambda: nn.GELU(), (x2,)), (lambda: nn.GELU(approximate=False), (x2,))],
        "LeakyReLU": [(lambda: nn.LeakyReLU(), (x2,))], "SiLU": [(lambda: nn.SiLU(), (x2 * 30,))],
        "Softplus": [(lambda: nn.Softplus(), (x2 * 30,)), (lambda: nn.Softplus(beta=2, threshold=5), (x2 * 4,))],
        "Conv2d": [(lambda: nn.Conv2d(3, 4, 3, has_bias=True), (x4,)),
                   (lambda: nn.Conv2d(3, 4, 3, stride=2, pad_mode="pad", padding=(1, 0, 2, 1)), (x4,)),
                   (lambda: nn.Conv2d(3, 6, 3, dilation=2, group=3, pad_mode="valid"), (x4,))],
        "MaxPool2d": [(lambda: nn.MaxPool2d(2, 2), (x4,)), (lambda: nn.MaxPool2d(3, 2, pad_mode="same"), (x4,)),
                      (lambda: nn.MaxPool2d(2, 2, ceil_mode=True, return_indices=True), (x4,))],
        "AvgPool2d": [(lambda: nn.AvgPool2d(2, 2), (x4,)),
                      (lambda: nn.AvgPool2d(3, 2, pad_mode="pad", padding=1, count_include_pad=False), (x4,)),
                      (lambda: nn.AvgPool2d(2, 2, ceil_mode=True, divisor_override=3), (x4,))],
        "BatchNorm1d": [(lambda: nn.BatchNorm1d(6), (x2,))],
        "BatchNorm2d": [(lambda: nn.BatchNorm2d(3).set_train(True), (x4,))],  # moving statistics in inference
        "LayerNorm": [(lambda: nn.LayerNorm((6,)), (x2,)),
                      (lambda: nn.LayerNorm((3, 9, 9), begin_norm_axis=1, begin_params_axis=1), (x4,))],
        "L1Loss": [(lambda: nn.L1Loss(), (x2, f32(4, 6))), (lambda: nn.L1Loss("sum"), (x2, f32(4, 6)))],
        "MSELoss": [(lambda: nn.MSELoss(), (x2, f32(4, 6))), (lambda: nn.MSELoss("none"), (x2, f32(4, 6)))],
        "CrossEntropyLoss": [(lambda: nn.CrossEntropyLoss(), (x2, LABELS)),
                             (lambda: nn.CrossEntropyLoss(weight=weights, label_smoothing=0.1), (x2, LABELS)),
                             (lambda: nn.CrossEntropyLoss(ignore_index=1, reduction="sum"), (x2, LABELS)),
                             (lambda: nn.CrossEntropyLoss(), (x2, np.abs(f32(4, 6))))],
        "NLLLoss": [(lambda: nn.NLLLoss(), (x2, LABELS)),
                    (lambda: nn.NLLLoss(weight=weights, reduction="none"), (x2, LABELS))],
        "BCEWithLogitsLoss": [(lambda: nn.BCEWithLogitsLoss(), (x2 * 30, target)),
                              (lambda: nn.BCEWithLogitsLoss(weight=weights, pos_weight=weights), (x2, target))],
        "SoftmaxCrossEntropyWithLogits": [
            (lambda: nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"), (x2, LABELS)),
            (lambda: nn.SoftmaxCrossEntropyWithLogits(), (x2, np.eye(6, dtype=np.float32)[LABELS]))],
        "WithLossCell": [(lambda: nn.WithLossCell(nn.Dense(6, 6), nn.SoftmaxCrossEntropyWithLogits(sparse=True)),
                          (x2, LABELS))],
    }


# Cells of graphjit.nn that are not models an ONNX file can hold, and the error each export gives.
NOT_MODELS = {
    "Cell": "the base class: no construct of its own",
    "CellList": "a list of cells: no construct of its own",
    "GraphCell": "runs a model that is already exported",
    **{name: "updates its weights in place" for name in ("Optimizer", "SGD", "Momentum", "Adam", "AdamWeightDecay",
                                                         "AdamW", "TrainOneStepCell")},
}


def test_every_cell_of_nn_is_tested_or_has_a_reason():
    cells = {name for name in nn.__all__ if isinstance(getattr(nn, name), type) and issubclass(getattr(nn, name),
                                                                                               nn.Cell)}
    cases = set(_layer_cases())
    assert cells == cases | set(NOT_MODELS), (sorted(cells - cases - set(NOT_MODELS)),
                                              sorted((cases | set(NOT_MODELS)) - cells))
    assert not cases & set(NOT_MODELS)


@needs_onnx
@pytest.mark.parametrize("layer", sorted(_layer_cases()))
def test_every_layer_of_nn_equals_eager_in_onnxruntime(layer, tmp_path):
    for k, (make, inputs) in enumerate(_layer_cases()[layer]):
        ms.set_seed(k)
        cell = make()
        training = cell.training
        got = round_trip(tmp_path, cell, *inputs, name=f"{layer}{k}")
        assert cell.training == training               # switched to inference for the export only
        cell.set_train(False)
        close(got, cell(*inputs))


@needs_onnx
@pytest.mark.parametrize("name", ["SGD", "Momentum", "Adam", "AdamWeightDecay", "AdamW", "TrainOneStepCell"])
def test_training_cells_are_refused_at_the_line_that_writes_a_weight(name, tmp_path):
    net = nn.Dense(6, 6)
    params = net.trainable_params()
    if name == "SGD":
        opt = nn.SGD(params, 0.1)
    elif name == "Momentum":
        opt = nn.Momentum(params, 0.1, 0.9)
    else:
        opt = getattr(nn, name if name != "TrainOneStepCell" else "Adam")(params)
    grads = tuple(np.ones_like(p) for p in params)
    target, inputs = (opt, (grads,))
    if name == "TrainOneStepCell":
        target = nn.TrainOneStepCell(nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True,
                                                                                            reduction="mean")), opt)
        inputs = (f32(4, 6), LABELS)
    with pytest.raises(ms.GraphjitError) as info:
        ms.export(target, *inputs, file_name=str(tmp_path / "opt"), file_format="ONNX")
    text = str(info.value)
    assert "writes an array in place" in text and "optim" in text and "-->" in text, text
    assert not (tmp_path / "opt.onnx").exists()


# --- each row where ONNX and NumPy differ --------------------------------------------------------------

SPECIAL = np.array([-3.5, -2.0, -1.0, -0.5, -1e-9, 0.0, 1e-9, 0.5, 1.0, 2.5, 3.0, np.nan, np.inf, -np.inf],
                   np.float32)
INTS = np.array([-7, -3, -1, 0, 1, 2, 5, 9], np.int32)


def row_floordiv_mod_float(x, y):
    return x // y, x % y, np.fmod(x, y)


def row_floordiv_mod_int(x, y):
    return x // y, x % y, np.fmod(x, y)


def row_divide_int(x, y):
    return x / (y + 100)


def row_log1p_expm1(x):
    return np.log1p(x), np.expm1(x)


def row_log1p_f32(x):
    return np.log1p(np.abs(x) * 1e-5)


def row_max_min_nan(x):
    return x.max(axis=1), np.min(x), np.argmax(x, axis=1), np.argmin(x)


def row_max_keepdims(x):
    return np.max(x, axis=0, keepdims=True), np.argmax(x, axis=1, keepdims=True)


def row_maximum_nan(x, y):
    return np.maximum(x, y), np.minimum(y, x), np.fmax(x, y), np.fmin(x, y)


def row_clip(x):
    return np.clip(x, -0.5, 0.5), np.clip(x, None, 0.2)


def row_rounding(x):
    return np.trunc(x), np.rint(x), np.floor(x), np.ceil(x), np.sign(x)


def row_heaviside(x):
    return np.heaviside(x, 0.5)


def row_transcendental(x):
    return (np.exp2(x), np.log2(x), np.log10(x), np.cbrt(x - 1), np.deg2rad(x), np.rad2deg(x), np.sqrt(x),
            np.arctan(x), np.sinh(x), np.reciprocal(x))


def row_power(x, y):
    return x ** 2, np.power(x, y), np.float_power(x, 2), np.square(y)


def row_moments(x):
    return np.var(x, axis=0), np.std(x, ddof=1), x.mean(axis=(0, 1)), np.sum(x, dtype=np.float64)


def row_reductions_int(x):
    return (np.floor(x), np.trunc(x), np.rint(x), np.ceil(x), x.sum(), np.prod(x[:3]), np.any(x > 3),
            np.all(x > -8, axis=0), np.count_nonzero(x), np.cumsum(x))


def row_nan_checks(x):
    return np.isnan(x), np.isinf(x), np.isfinite(x), np.nansum(x), np.any(x * 0.5), np.all(x), np.any(x[5:6])


def row_logic(x, y):
    return ((x > 0) & (y < 0), (x > 0) | ~(y > 0), np.logical_xor(x > 0, y > 0), np.logical_not(x > y),
            np.where(x > y, x, 0.0))


def row_bitwise_int(x, y):
    return x & y, x | y, x ^ y, ~x


def row_compare_mixed(x, y):
    return x < y, x == 2, y >= 1.5, x != y


def row_casts(x):
    return x.astype(np.int32), (x * 3).astype(np.int64), x.astype(bool), float(x[0, 0]), int(x[1, 1] * 10)


def row_py_min_max(x, y):
    return min(x[0, 0], y[0, 0]), max(x[1, 1], y[1, 1], x[0, 1])


def row_linear(x, y):
    return x @ y.T, np.dot(x[0], y[1]), np.outer(x[0], y[0]), np.einsum("ij,kj->ik", x, y), np.dot(x, y.T)


def row_layout(x):
    return (x.T, np.transpose(x, (1, 0)), np.swapaxes(x[None], 0, 2), np.moveaxis(x[None], 0, -1), x.reshape(4, 3),
            x.ravel(), x.flatten(), np.expand_dims(x, 1), np.squeeze(x[None]))


def row_selections(x):
    return (np.flip(x, 0), np.roll(x, 2, axis=1), np.tile(x, (2, 1)), np.repeat(x, 2, axis=0), np.triu(x),
            np.tril(x, -1), np.diag(x), np.diag(x[0]), x[::2, 1:3], x[-1, ::-1], x[:, None, 2],
            np.take(x, [2, 0], axis=1), np.lib.stride_tricks.sliding_window_view(x, (2, 2)),
            np.broadcast_to(x[0], (2, 4)))


def row_basic_index(x):
    return (x[::-1], x[1:, ::-2], x[-1], x[..., 1], x[None, 1:2, ..., None], x[5:], x[:, -10:2], x[2:0:-1, :1],
            x[..., ::-3], x[:, 3:-7:-1], x[-2:, None])


def row_nan_reductions(x):
    return np.nanmax(x, axis=1), np.nanmin(x, axis=0, keepdims=True), np.nanmean(x, axis=1), np.nanmax(x)


row_nan_reductions_f64 = row_nan_reductions


def row_more_math(x, y):
    return (np.hypot(x, y), np.hypot(x * 1e30, y * 1e30), np.tensordot(x, y, axes=((1,), (1,))),
            np.tensordot(x[:2, :2], y[:2, :2]), np.diff(x), np.diff(x, 2, axis=0))


def row_sorting(x):
    return (np.sort(x), np.sort(x, axis=0), np.sort(x, axis=None), np.argsort(x, kind="stable"),
            np.argsort(x, axis=0, kind="stable"), np.median(x), np.median(x, axis=1), np.median(x[:, :3], axis=1),
            np.median(x, axis=0, keepdims=True))


def row_sorting_int(x):
    return np.sort(x), np.argsort(x, kind="stable"), np.median(x), np.sort(x > 0), np.argsort(x > 0, kind="stable")


def row_gather_by_run_time_index(x, i):
    return x[i], x[:, i], x[i[0]]


def row_join(x, y):
    return (np.concatenate((x, y)), np.concatenate([x, y], axis=1), np.stack((x, y), axis=2), np.hstack((x, y)),
            np.vstack((x, y)), np.concatenate((x, y), axis=None))


def row_pad(x):
    return (np.pad(x, ((1, 2), (0, 1))), np.pad(x, 1, mode="reflect"), np.pad(x, ((2, 0), (1, 1)), mode="edge"),
            np.pad(x, 1, constant_values=3.0))


def row_creation(x):
    return (np.zeros_like(x), np.ones_like(x, dtype=np.int32), np.full_like(x, 2.5), np.arange(4) + x.shape[0],
            np.eye(3) * x[0, 0], np.linspace(0, 1, 5))


def row_shapes(x):
    return x.reshape(x.shape[1], -1) * x.ndim + x.size + len(x)


def _functions():
    """(name, the function `row_<name>`, its inputs)."""
    a, b = f32(3, 4), f32(3, 4)
    m = f32(3, 4)
    m[1, 2] = np.nan
    pos = np.abs(a) + 0.1
    tiny = np.array([1e-10, -1e-8, 1e-4, 0.3, -0.3, 5.0, 0.0], np.float64)
    cases = [
        ("floordiv_mod_float", (SPECIAL[:11], SPECIAL[::-1][3:].copy())),
        ("floordiv_mod_int", (INTS, INTS[::-1].copy())), ("divide_int", (INTS, INTS)),
        ("log1p_expm1", (tiny,)), ("log1p_f32", (a,)), ("max_min_nan", (m,)), ("max_keepdims", (a,)),
        ("maximum_nan", (m, a)), ("clip", (m,)), ("rounding", (SPECIAL,)), ("heaviside", (SPECIAL,)),
        ("transcendental", (pos,)), ("power", (pos, b)), ("moments", (a,)), ("reductions_int", (INTS,)),
        ("nan_checks", (SPECIAL,)), ("logic", (a, b)), ("bitwise_int", (INTS, INTS[::-1].copy())),
        ("compare_mixed", (INTS, INTS.astype(np.float64))), ("casts", (a,)), ("py_min_max", (a, b)),
        ("linear", (a, b)), ("layout", (a,)), ("selections", (a,)),
        ("gather_by_run_time_index", (a, np.array([2, 0, -1], np.int64))), ("join", (a, b)), ("pad", (a,)),
        ("creation", (a,)), ("shapes", (a,)), ("basic_index", (a,)),
        ("nan_reductions", (np.where(np.isnan(m), np.nan, np.array([[np.nan] * 4, [1, 2, np.nan, 3], [4, 5, 6, 7]],
                                                                   np.float32)),)),
        ("more_math", (a, b)),
        ("nan_reductions_f64", (np.array([[np.nan] * 4, [1, 2, np.nan, 3], [4, 5, 6, 7]]),)),
        ("sorting", (np.array([[3, np.nan, 1, 1, -np.inf], [2, 2, np.inf, -0.0, 0.0], [5, 4, 3, 2, 1],
                               [1, 1, 1, np.nan, np.nan]], np.float32),)),
        ("sorting_int", (np.array([3, 1, 2, 2, -5, 0, 1, 9], np.int32),)),
    ]
    return [(name, globals()[f"row_{name}"], inputs) for name, inputs in cases]


FUNCTIONS = _functions()


@needs_onnx
@pytest.mark.parametrize("name,fn,inputs", FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_each_row_equals_numpy(name, fn, inputs, tmp_path):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # NumPy's "All-NaN slice encountered"
        expected = fn(*inputs)
        got = round_trip(tmp_path, ms.jit(fn), *inputs)
    if isinstance(expected, tuple):
        expected = tuple(np.asarray(e) for e in expected)
    close(got, expected)


# every elementwise NumPy function with a row, on NaN, infinities, zeros of both signs and negatives
def _ufunc_module(tmp_path_factory):
    from graphjit.graph.ops import UFUNCS
    lines = ["import numpy as np", ""]
    for u in UFUNCS:
        args = ", ".join("xy"[:getattr(np, u).nin])
        lines += [f"def f_{u}({args}):", f"    return np.{u}({args})", ""]
    path = tmp_path_factory.mktemp("ufuncs") / "onnx_ufuncs.py"
    path.write_text("\n".join(lines))
    spec = importlib.util.spec_from_file_location("onnx_ufuncs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


UFUNC_VALUES = {
    "float32": np.array([-np.inf, -3.5, -1.0, -0.5, -0.0, 0.0, 1e-7, 0.5, 1.0, 2.0, 7.25, np.inf, np.nan], np.float32),
    "float64": np.array([-np.inf, -2.5, -1.0, -1e-300, -0.0, 0.0, 0.25, 0.5, 1.0, 3.0, 1e300, np.inf, np.nan]),
    "int32": np.array([-7, -3, -2, -1, 0, 0, 1, 1, 2, 3, 5, 9, 100], np.int32),
}


# onnxruntime's CPU provider has no float64 kernel for these ONNX operators: a valid file it refuses to load
ORT_NO_FLOAT64 = {"tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh", "arctanh"}


@needs_onnx
@pytest.mark.parametrize("dtype", sorted(UFUNC_VALUES))
def test_every_elementwise_row_equals_numpy(dtype, tmp_path, tmp_path_factory):
    from graphjit.graph.ops import UFUNCS
    module = _ufunc_module(tmp_path_factory)
    x = UFUNC_VALUES[dtype]
    y = x[::-1].copy()
    checked = 0
    for u in UFUNCS:
        fn = getattr(module, f"f_{u}")
        inputs = (x, y)[:getattr(np, u).nin]
        with np.errstate(all="ignore"):
            try:
                expected = fn(*inputs)
            except (TypeError, ValueError):
                continue                        # NumPy refuses these values (integers to negative powers)
        try:
            got = round_trip(tmp_path, ms.jit(fn), *inputs, name=u)
        except ms.GraphjitError as e:
            message = e.message
            if u in onnx_ops.NOT_EXPORTED or u == "reciprocal" and dtype == "int32":
                assert "cannot export" in message and len(message.splitlines()) == 1, message
            elif u in ORT_NO_FLOAT64 and np.asarray(expected).dtype == np.float64:
                assert "NOT_IMPLEMENTED" in message, message
            else:
                raise
            continue
        try:
            close(got, expected)
        except AssertionError as e:
            raise AssertionError(f"np.{u} on {dtype}: {e}") from None
        checked += 1
    assert checked >= 40


# --- the construct corpus: exported, each equals eager, or is refused with one clear error ----------------

def _corpus():
    import programs
    return sorted(programs.CASES.items())


# Programs whose graphs hold what ONNX cannot (the reason is the refusal's), and nothing else may refuse
CORPUS_REFUSED = {
    "indexing": "`getitem` is written when what the index reads at run time is integers",   # x[x > 0.5]
    "ternary": "`if` gives value 0 as a bool[]|float",          # `a if c else b` of two types
    "numpy_calls": "`call` a function outside the op table",
    "tuple_return": "it returns a NoneType",
}


@needs_onnx
@pytest.mark.parametrize("level", ["O0", "O1", "O2"])
@pytest.mark.parametrize("name,case", _corpus(), ids=[name for name, _ in _corpus()])
def test_the_construct_corpus_equals_eager_or_is_refused(name, case, level, tmp_path):
    fn, make = case
    args = make(np.random.default_rng(0))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
        try:
            path = ms.export(ms.jit(fn, jit_level=level), *args, file_name=str(tmp_path / name), file_format="ONNX")
        except ms.GraphjitError as e:
            assert name in CORPUS_REFUSED and CORPUS_REFUSED[name] in e.message, e
            assert len(e.message.splitlines()) == 1
            return
        assert name not in CORPUS_REFUSED
        got = ms.load(path)(*[a for a in args if isinstance(a, np.ndarray)])
    flat = list(_leaves(expected))
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(flat)
    for g, e in zip(got, flat):
        assert np.shape(g) == np.shape(e)
        np.testing.assert_allclose(np.asarray(g, dtype=np.float64), np.asarray(e, dtype=np.float64), rtol=1e-5,
                                   atol=1e-6, equal_nan=True)


def _leaves(value):
    """A returned value's arrays and numbers in order, tuples flattened (as the ONNX outputs are)."""
    if isinstance(value, (tuple, list)):
        for item in value:
            yield from _leaves(item)
    else:
        yield np.asarray(value)


# NEP 50: accumulators that start as Python numbers or NumPy scalars of other dtypes, over arrays of every
# real dtype: each export equals eager (value and dtype) or is refused with one line
NEP50_PROGRAMS = ["acc_loop", "acc_scaled", "acc_then_loop", "while_acc", "branch_merge", "running_max"]


@needs_onnx
@pytest.mark.parametrize("level", ["O0", "O2"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int32", "uint8", "bool"])
def test_nep50_accumulators_equal_eager_or_are_refused(dtype, level, tmp_path):
    import nep50_programs
    rng = np.random.default_rng(1)
    exported = 0
    for name in NEP50_PROGRAMS:
        for init in (0, 0.5, False, np.float32(0), np.int8(0), np.uint8(0)):
            values = rng.integers(0 if dtype in ("uint8", "bool") else -3, 4, 4)
            x = values.astype(dtype) if dtype != "bool" else (values % 2).astype(bool)
            args = {"acc_then_loop": (x, f32(3), init), "branch_merge": (x, init, 1)}.get(name, (x, init))
            fn = getattr(nep50_programs, name)
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    expected = fn(*args)
                except Exception:       # NumPy refuses the combination: nothing to compare
                    continue
                try:
                    path = ms.export(ms.jit(fn, jit_level=level), *args, file_name=str(tmp_path / name),
                                     file_format="ONNX")
                except ms.GraphjitError as e:
                    assert len(e.message.splitlines()) == 1 and "graphjit bug" not in e.message, e
                    continue
                got = ms.load(path)(*[np.asarray(a) for a in args if isinstance(a, (np.ndarray, np.generic))])
            flat = list(_leaves(expected))
            got = got if isinstance(got, tuple) else (got,)
            assert len(got) == len(flat), name
            for g, e in zip(got, flat):
                assert g.dtype == e.dtype and g.shape == e.shape, (name, init, g.dtype, e.dtype)
                np.testing.assert_allclose(g.astype(np.float64), e.astype(np.float64), rtol=1e-3, equal_nan=True)
            exported += 1
    assert exported >= 3


# --- run-time branches and loops: ONNX If and Loop ---------------------------------------------------------

def branch(x):
    if x.sum() > 0:
        y = x * 2
    else:
        y = x - 1
    return y + 1


def carried_loop(x):
    s = x[0]
    for i in range(1, x.shape[0]):
        s = s * 0.5 + x[i]
    return s


def run_time_bounds(x, n):
    s = x[0] * 0
    for i in range(n[0], n[1], 2):
        s = s + x[i] * i
    for i in range(n[1], n[0], -3):
        s = s - x[i]
    return s


def while_loop(x):
    k = 0
    while x.sum() < 100:
        x = x * 2
        k += 1
    return x, k


def branch_in_loop(x):
    out = x * 0
    for i in range(x.shape[0]):
        if x[i] > 0:
            out = out + x[i]
        else:
            out = out - 1.0
    return out


def python_float_accumulator(x):
    s = 0.0                  # a Python float, then a NumPy float64: one float64 value in ONNX
    for i in range(x.shape[0]):
        s = s + x[i]
    return s


REGIONS = [(python_float_accumulator, (np.array([1.5, -2.0, 4.25]),)), (branch, (f32(3, 2),)),
           (branch, (-np.abs(f32(3, 2)),)), (carried_loop, (f32(5),)),
           (run_time_bounds, (f32(9), np.array([1, 8]))), (run_time_bounds, (f32(9), np.array([8, 1]))),
           (while_loop, (np.abs(f32(3)) + 0.1,)), (branch_in_loop, (f32(4),))]


@needs_onnx
@pytest.mark.parametrize("level", ["O0", "O1"])
@pytest.mark.parametrize("fn,inputs", REGIONS, ids=[f"{fn.__name__}{k}" for k, (fn, _) in enumerate(REGIONS)])
def test_branches_and_loops_become_if_and_loop(fn, inputs, level, tmp_path):
    if fn is run_time_bounds and level == "O0":   # O0 carries the loop variable out of the first loop into the
        with pytest.raises(ms.GraphjitError, match="`for_range` gives value 1 as a object"):   # second: refused
            ms.export(ms.jit(fn, jit_level=level), *inputs, file_name=str(tmp_path / "m"), file_format="ONNX")
        return
    expected = fn(*inputs)
    got = round_trip(tmp_path, ms.jit(fn, jit_level=level), *inputs)
    close(got, tuple(np.asarray(e) for e in expected) if isinstance(expected, tuple) else expected)


# --- writes into arrays the graph made: ScatterND into a new value ------------------------------------------

def writes(x):
    y = np.zeros_like(x)
    y[0] = x[0]
    y[1:, ::2] = 5
    y[[0, 0, 2], 1] = x[0, :3]      # repeated positions: the last wins
    z = y * 2
    y[-1] = z[0]
    return y, z


def writes_at_run_time_positions(x, i):
    y = x.copy()
    y[i[0]] = -1.0
    y[:, i[1]] = 7
    y[i[0], i[1] - 1] = x[0, 0]
    return y, x[i[0], i[1]], x[i[1], 1:]


def loop_writes(x):
    y = np.zeros_like(x)
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = y[i - 1] * 0.5 + x[i]
    return y


def branch_writes(x):
    y = np.zeros_like(x)
    if x.sum() > 0:
        y[0] = 1.0
    else:
        y[1] = 2.0
    return y


def while_writes(x):
    y = np.zeros(5)
    k = 0
    while y.sum() < 10:
        y[k % 5] = y[k % 5] + x[0]
        k += 1
    return y, k


def nested_writes(x):
    out = np.zeros((x.shape[0], x.shape[0]))
    for i in range(x.shape[0]):
        for j in range(x.shape[0]):
            if x[i] > x[j]:
                out[i, j] = x[i] - x[j]
    return out


def constant_writes_in_regions(x):
    y = np.zeros(3)
    if x[0] > 0:
        y[1] = 5.0               # a compile-time write in a branch that may not run
    z = np.ones(2)
    s = 0.0
    for i in range(3):
        s = s + z[0]             # NumPy: 1 the first time, 7 after the write below
        z[0] = 7.0
    return y, s


def in_place_operators(x):
    s = np.zeros(x.shape[1])
    for i in range(x.shape[0]):
        s += x[i]                # float64 += float32, as NumPy computes it
    t = x.copy()
    t *= 2
    t -= x
    t[0] = -1.0
    u = np.arange(4)
    u //= 3
    return s, t, u


WRITES = [(in_place_operators, (f32(3, 2),)), (constant_writes_in_regions, (np.array([1.0]),)),
          (constant_writes_in_regions, (np.array([-1.0]),)),
          (writes, (f32(3, 4),)), (writes_at_run_time_positions, (f32(3, 4), np.array([-1, 2]))),
          (loop_writes, (f32(3, 4),)), (branch_writes, (f32(2, 2) + 5,)), (branch_writes, (f32(2, 2) - 5,)),
          (while_writes, (np.array([3.0]),)), (nested_writes, (f32(4),))]


@needs_onnx
@pytest.mark.parametrize("level", ["O0", "O1", "O2"])
@pytest.mark.parametrize("fn,inputs", WRITES, ids=[f"{fn.__name__}{k}" for k, (fn, _) in enumerate(WRITES)])
def test_writes_into_arrays_the_graph_made(fn, inputs, level, tmp_path):
    expected = fn(*inputs)
    got = round_trip(tmp_path, ms.jit(fn, jit_level=level), *inputs)
    close(got, tuple(np.asarray(e) for e in expected) if isinstance(expected, tuple) else expected)


@needs_onnx
def test_a_run_time_index_out_of_range_fails_as_numpy_raises(tmp_path):
    x = f32(3, 4)
    run = ms.load(ms.export(ms.jit(writes_at_run_time_positions), x, np.array([0, 1]),
                            file_name=str(tmp_path / "w"), file_format="ONNX"))
    close(run(x, np.array([-3, 2])), writes_at_run_time_positions(x, np.array([-3, 2])))
    for bad in ([3, 1], [-4, 1], [0, 4]):
        with pytest.raises(IndexError):
            writes_at_run_time_positions(x, np.array(bad))
        with pytest.raises(ms.GraphjitError, match="onnxruntime failed: .*(out of data bounds|invalid indice)"):
            run(x, np.array(bad))


# --- what the writer refuses ------------------------------------------------------------------------------

def branches(x):
    if x.sum() > 0:
        y = x.sum()
    else:
        y = 0.0
    return y       # an np.float32 or a Python float, by the branch taken


def view_read_after_write(x):
    y = np.zeros_like(x)
    v = y[0]
    y[0] = x[0]
    return v * 2      # NumPy: the view sees the write


def writes_out(x):
    y = np.zeros_like(x)
    np.add(x, 1.0, y)
    return y


def stale_view_in_loop(x):
    y = np.zeros(3)
    v = y[0:2]
    s = 0.0
    for i in range(3):
        s = s + v.sum()      # NumPy: v is a view of y, and sees the write of the previous iteration
        y[i] = x[i]
        v = y[0:2]
    return s


def view_carried_across_iterations(x):
    y = np.zeros(3)
    s = 0.0
    v = x[0:2] * 0
    for i in range(3):
        y[i] = x[i]
        s = s + v.sum()      # NumPy: the view made last iteration sees this iteration's write
        v = y[0:2]
    return s


def int_array_plus_float(x):
    k = np.zeros(3, np.int64)
    k += x[0]                # NumPy raises (same_kind casting)
    return k


def writes_an_argument(x):
    x += 1
    return x


def sorts(x):
    return np.argsort(x)         # NumPy's default kind: no promised order among equal values


def negative_power(x):
    k = x.astype(np.int64)
    return k ** k


def either_type(x):
    return max(x[0, 0], 0.0)      # an np.float32 or a Python float, by value


@needs_onnx
@pytest.mark.parametrize("fn,op", [(branches, "if"), (view_read_after_write, "setitem"),
                                   (stale_view_in_loop, "for_range"), (view_carried_across_iterations, "setitem"),
                                   (writes_out, "np_add"), (sorts, "argsort"), (either_type, "py_max"),
                                   (int_array_plus_float, "inplace"), (writes_an_argument, "inplace"),
                                   (negative_power, "pow")])
def test_refusals_name_the_op_and_the_line(fn, op, tmp_path):
    x = np.array([1.0, 2.0, 3.0]) if fn in (stale_view_in_loop, view_carried_across_iterations) else f32(3, 4)
    with pytest.raises(ms.GraphjitError) as info:
        ms.export(ms.jit(fn, jit_level="O0"), x, file_name=str(tmp_path / "m"), file_format="ONNX")
    text = str(info.value)
    assert f"`{op}`" in text and "test_export_onnx.py:" in text, text
    assert len(info.value.message.splitlines()) == 1
    assert not (tmp_path / "m.onnx").exists()


# --- loading ONNX files from elsewhere -------------------------------------------------------------------

def _model(onnx, nodes, inputs, outputs, initializers=(), opsets=(("", 18),), functions=()):
    h = onnx.helper
    graph = h.make_graph(nodes, "g", inputs, outputs, list(initializers))
    model = h.make_model(graph, opset_imports=[h.make_opsetid(d, v) for d, v in opsets], functions=list(functions))
    model.ir_version = 8
    return model.SerializeToString()


@needs_onnx
def test_crafted_files_give_one_clear_error_and_run_nothing(tmp_path, monkeypatch):
    import onnx
    import onnxruntime  # noqa: F401  (imported before watching: loading may not import anything new)
    from graphjit.backends import onnx_run
    h, T = onnx.helper, onnx.TensorProto
    x = h.make_tensor_value_info("x", T.FLOAT, [2])
    y = h.make_tensor_value_info("y", T.FLOAT, [2])
    external = h.make_tensor("w", T.FLOAT, [2], [1.0, 2.0])
    external.data_location = T.EXTERNAL
    external.ClearField("float_data")
    entry = external.external_data.add()
    entry.key, entry.value = "location", "../../etc/passwd"
    fn = h.make_function("custom", "F", ["a"], ["b"], [h.make_node("Relu", ["a"], ["b"])], [h.make_opsetid("", 18)])
    crafted = {
        "junk": (b"\xff\xfe not protobuf at all" * 3, "not an ONNX model"),
        "empty": (b"", "not an ONNX model"),
        "custom_domain": (_model(onnx, [h.make_node("Evil", ["x"], ["y"], domain="com.evil")], [x], [y],
                                 opsets=(("", 18), ("com.evil", 1))), "domain 'com.evil'"),
        "functions": (_model(onnx, [h.make_node("F", ["x"], ["y"], domain="custom")], [x], [y],
                             opsets=(("", 18), ("custom", 1)), functions=[fn]), "domain 'custom'"),
        "external_data": (_model(onnx, [h.make_node("Add", ["x", "w"], ["y"])], [x], [y], [external]),
                          "stored in another file"),
        "bad_graph": (_model(onnx, [h.make_node("Add", ["x", "missing"], ["y"])], [x], [y]), "onnxruntime refuses"),
    }
    for name, (data, message) in crafted.items():
        path = tmp_path / f"{name}.onnx"
        path.write_bytes(data)
        with watch() as seen:
            with pytest.raises(ms.GraphjitError, match=message) as info:
                ms.load(str(path))
        seen.assert_none()
        assert str(path) in info.value.message and len(info.value.message.splitlines()) == 1, name
    monkeypatch.setattr(onnx_run, "MAX_BYTES", 10)
    (tmp_path / "big.onnx").write_bytes(b"\0" * 11)
    with pytest.raises(ms.GraphjitError, match="larger than 10 bytes"):
        ms.load(str(tmp_path / "big.onnx"))


@needs_onnx
def test_loading_an_export_runs_nothing_else_and_checks_inputs(tmp_path):
    import onnx  # noqa: F401
    import onnxruntime  # noqa: F401
    x = f32(4, 6)
    path = ms.export(nn.Dense(6, 3), x, file_name=str(tmp_path / "dense"), file_format="ONNX")
    with watch() as seen:
        run = ms.load(path)
        run(x)
    seen.assert_none()
    with pytest.raises(ms.GraphjitError, match=r"input 0 must be an array of float32 \(4, 6\)"):
        run(x[:2])
    with pytest.raises(ms.GraphjitError, match="takes 1 input"):
        run(x, x)
    with pytest.raises(ms.GraphjitError, match="input 0 must be an array of float32"):
        run(x.astype(np.float64))
