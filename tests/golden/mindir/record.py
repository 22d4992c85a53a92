"""Record what MindSpore does with MindIR files, for tests/test_export_mindir.py (CI never needs MindSpore).

Run with MindSpore 2.x's Python, naming the Python graphjit runs with (NumPy 2; the exports are made
there, in a subprocess, and MindSpore only reads them):

    PYTHONPATH=<parent of the checkout> /path/to/mindspore-venv/bin/python tests/golden/mindir/record.py \
        /path/to/graphjit-venv/bin/python [graphjit | mindspore]     # (a) or (b) only; both by default

(a) graphjit_exports.json: for each network of tests/mindir_cases.py, graphjit exports it to MINDIR,
    MindSpore loads the file (`mindspore.load`), runs it (`nn.GraphCell`) on the case's input, and the
    file's SHA-256, its primitives in order and MindSpore's output are stored.
(b) ms_<name>.mindir, ms_<name>.npz: small networks exported by MindSpore itself (tiny layers), with the
    input and MindSpore's output; graphjit's loader must reproduce them.
"""

import json
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))     # tests/: mindir_cases

import mindspore  # noqa: E402
from mindspore import Tensor, nn, ops  # noqa: E402

import mindir_cases  # noqa: E402
from graphjit.backends.mindir_proto import messages  # noqa: E402


def primitives(data: bytes) -> list:
    model = messages()["ModelProto"]()
    model.ParseFromString(data)
    kinds = {p.name: p.op_type for p in model.primitives}
    return [kinds.get(n.op_type[5:], n.op_type) for n in model.graph.node if n.op_type != "Constant"]


def record_graphjit_exports(graphjit_python: str) -> None:
    mindspore.set_context(mode=mindspore.GRAPH_MODE)
    results = {"mindspore": mindspore.__version__, "cases": {}}
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([graphjit_python, str(HERE.parent.parent / "mindir_cases.py"), tmp], check=True)
        for name in mindir_cases.GRAPHJIT_CASES:
            path = os.path.join(tmp, f"{name}.mindir")
            data = pathlib.Path(path).read_bytes()
            with np.load(os.path.join(tmp, f"{name}.npz")) as saved:
                x = saved["input"]
                eager = [saved[f"output{k}"] for k in range(len(saved.files) - 1)]
            out = nn.GraphCell(mindspore.load(path))(Tensor(x))
            outs = [o.asnumpy() for o in (out if isinstance(out, tuple) else (out,))]
            assert len(outs) == len(eager), name
            for o, e in zip(outs, eager):
                assert o.shape == e.shape and o.dtype == e.dtype, (name, o.dtype, e.dtype)
                np.testing.assert_allclose(o, e, rtol=1e-4, atol=1e-5, err_msg=name)   # float32 sums in another order
            results["cases"][name] = {"sha256": mindir_cases.digest(data), "primitives": primitives(data),
                                      "outputs": [{"dtype": str(o.dtype), "shape": list(o.shape),
                                                   "values": [float(v) for v in o.reshape(-1)]} for o in outs],
                                      "tuple": isinstance(out, tuple)}
            diff = max(float(np.abs(o.astype(np.float64) - e).max()) for o, e in zip(outs, eager))
            print(f"{name}: MindSpore equals eager (max |diff| {diff:.3g})")
    (HERE / "graphjit_exports.json").write_text(json.dumps(results, indent=1) + "\n")


class _Bn(nn.Cell):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)
        self.bn.gamma.set_data(Tensor(np.array([1.0, 0.5, 2.0], np.float32)))
        self.bn.beta.set_data(Tensor(np.array([0.1, -0.2, 0.3], np.float32)))
        self.bn.moving_mean.set_data(Tensor(np.array([0.2, -0.1, 0.0], np.float32)))
        self.bn.moving_variance.set_data(Tensor(np.array([1.5, 0.7, 0.9], np.float32)))

    def construct(self, x):
        return self.bn(x)


class _Activations(nn.Cell):
    def construct(self, x):
        return ops.Softmax()(ops.Sigmoid()(x) + ops.tanh(x)) + ops.ReLU()(x) - ops.Maximum()(x, x * 0.5)


class _MoreActivations(nn.Cell):
    def __init__(self):
        super().__init__()
        self.gelu, self.leaky, self.relu6 = nn.GELU(), nn.LeakyReLU(0.2), nn.ReLU6()
        self.silu, self.log_softmax = nn.SiLU(), nn.LogSoftmax()

    def construct(self, x):
        return self.gelu(x) + self.leaky(x) + self.relu6(x * 4.0) + self.silu(x) + self.log_softmax(x)


class _Log1p(nn.Cell):
    def construct(self, x):
        return ops.Log1p()(x)


class _Shapes(nn.Cell):
    def construct(self, x):
        y = ops.transpose(ops.reshape(x, (3, 8)), (1, 0))
        return ops.ReduceSum(keep_dims=True)(y, 1) + ops.ReduceMean(keep_dims=False)(y, 1).reshape(8, 1)


class _Tuple(nn.Cell):
    def construct(self, x):
        y = ops.Softmax()(x)
        z = ops.cast(ops.ReduceSum(keep_dims=True)(x, 1), mindspore.float64)
        return y, z, ops.Gather()(x, Tensor(np.array([2, 0, -1], np.int32)), 1)


def ms_networks() -> dict:
    """name -> (MindSpore network, input shape), tiny so each file stays a few KB."""
    mindspore.set_seed(0)
    bn = _Bn()
    bn.set_train(False)
    return {
        "dense": (nn.SequentialCell(nn.Flatten(), nn.Dense(4 * 4, 8), nn.ReLU(), nn.Dense(8, 3)), (2, 1, 4, 4)),
        "conv_pool": (nn.SequentialCell(nn.Conv2d(2, 4, 3, has_bias=True), nn.ReLU(), nn.MaxPool2d(2, 2),
                                        nn.AvgPool2d(2, 2)), (1, 2, 8, 8)),
        "conv_valid_stride": (nn.Conv2d(2, 3, 3, stride=2, pad_mode="valid"), (1, 2, 7, 7)),
        "conv_pad": (nn.Conv2d(1, 2, 3, pad_mode="pad", padding=1, has_bias=True), (1, 1, 5, 5)),
        "batchnorm": (bn, (2, 3, 2, 2)),
        "activations": (_Activations(), (2, 5)),
        "more_activations": (_MoreActivations(), (2, 5)),
        "shapes": (_Shapes(), (2, 3, 4)),
        "tuple": (_Tuple(), (2, 5)),
        "log1p": (_Log1p(), (2, 3)),
    }


def record_mindspore_exports() -> None:
    mindspore.set_context(mode=mindspore.GRAPH_MODE, jit_syntax_level=mindspore.STRICT)
    rng = np.random.default_rng(7)
    for name, (net, shape) in ms_networks().items():
        x = rng.standard_normal(shape).astype(np.float32)
        if name == "log1p":
            x[0] = [1e-10, -1e-8, 3e-7]      # where MindSpore's Log1p is log(1 + x)
        out = net(Tensor(x))
        outs = [o.asnumpy() for o in (out if isinstance(out, tuple) else (out,))]
        mindspore.export(net, Tensor(x), file_name=str(HERE / f"ms_{name}"), file_format="MINDIR")
        again = nn.GraphCell(mindspore.load(str(HERE / f"ms_{name}.mindir")))(Tensor(x))
        for o, a in zip(outs, again if isinstance(again, tuple) else (again,)):
            np.testing.assert_allclose(a.asnumpy(), o, rtol=1e-6, atol=1e-7, err_msg=name)
        np.savez(HERE / f"ms_{name}.npz", input=x, **{f"output{k}": o for k, o in enumerate(outs)})
        os.chmod(HERE / f"ms_{name}.mindir", 0o644)
        print(f"ms_{name}.mindir: {os.path.getsize(HERE / f'ms_{name}.mindir')} bytes")


if __name__ == "__main__":
    only = sys.argv[2] if len(sys.argv) > 2 else ""
    if only != "mindspore":
        record_graphjit_exports(sys.argv[1])
    if only != "graphjit":
        record_mindspore_exports()
