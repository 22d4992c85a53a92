"""The networks graphjit exports to MindIR that MindSpore 2.10 loaded and ran (tests/golden/mindir/record.py),
and the small networks MindSpore 2.10 exported itself, whose files graphjit reads.

Weights and inputs are drawn here from fixed seeds (not from the layers' initializers), so a case is the
same network whatever graphjit's initializers do.
"""

import hashlib
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
FIXTURES = HERE / "golden" / "mindir"
REPO = HERE.parent


def _chapter():
    from graphjit import nn
    return nn.SequentialCell(nn.Flatten(), nn.Dense(28 * 28, 512), nn.ReLU(), nn.Dense(512, 512), nn.ReLU(),
                             nn.Dense(512, 10)), (1, 1, 28, 28)


def _seed_network():
    sys.path.insert(0, str(REPO / "samples"))
    try:
        from network import Network
    finally:
        sys.path.remove(str(REPO / "samples"))
    return Network(), (1, 1, 28, 28)


def _lenet():
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import bench_lenet
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    return bench_lenet.LeNet5(), (1, 1, 32, 32)


def _layer(make, shape):
    def build():
        from graphjit import nn
        return make(nn), shape
    return build


def _eval(cell):
    cell.set_train(False)
    return cell


def _batch_norm(nn):
    bn = nn.BatchNorm2d(3)
    bn.set_train(False)
    return bn


def _nan_rows(nn):
    """maximum, minimum and max, where MindSpore's primitives skip NaN and NumPy propagates it."""
    class NanRows(nn.Cell):
        def construct(self, x):
            return np.maximum(x, x[::-1]) + np.minimum(x, 0.0) + np.max(x, axis=1, keepdims=True)
    return NanRows()


def _elementwise(nn):
    """The rows no layer uses: sin, cos, sqrt, abs, ne, lt, logical_or, mean, a float64 cast; a tuple out."""
    class Elementwise(nn.Cell):
        def construct(self, x):
            y = np.sin(x) * np.cos(x) + np.sqrt(np.abs(x)) - np.mean(x, axis=0)
            mask = np.logical_or(x != 0.5, x < 0.0)
            return np.where(mask, y, x), y.astype(np.float64) * 2.0
    return Elementwise()


# name -> () -> (network, input shape)
GRAPHJIT_CASES = {
    "chapter": _chapter,
    "seed_network": _seed_network,
    "lenet": _lenet,
    "conv2d_valid": _layer(lambda nn: nn.Conv2d(2, 3, 3, pad_mode="valid", has_bias=True), (1, 2, 7, 7)),
    "conv2d_same": _layer(lambda nn: nn.Conv2d(2, 3, 3), (1, 2, 6, 6)),
    "conv2d_stride": _layer(lambda nn: nn.Conv2d(2, 4, 3, stride=2, pad_mode="pad", padding=1), (1, 2, 7, 7)),
    "maxpool2d": _layer(lambda nn: nn.MaxPool2d(2, 2), (1, 3, 6, 6)),
    "avgpool2d": _layer(lambda nn: nn.AvgPool2d(2, 2), (1, 3, 6, 6)),
    "batchnorm2d_eval": _layer(_batch_norm, (2, 3, 4, 4)),
    "dense": _layer(lambda nn: nn.Dense(6, 4), (3, 6)),
    "relu": _layer(lambda nn: nn.ReLU(), (2, 5)),
    "relu6": _layer(lambda nn: nn.ReLU6(), (2, 5)),
    "sigmoid": _layer(lambda nn: nn.Sigmoid(), (2, 5)),
    "tanh": _layer(lambda nn: nn.Tanh(), (2, 5)),
    "softmax": _layer(lambda nn: nn.Softmax(), (2, 5)),
    "log_softmax": _layer(lambda nn: nn.LogSoftmax(), (2, 5)),
    "gelu": _layer(lambda nn: nn.GELU(), (2, 5)),
    "leaky_relu": _layer(lambda nn: nn.LeakyReLU(0.2), (2, 5)),
    "silu": _layer(lambda nn: nn.SiLU(), (2, 5)),
    "softplus": _layer(lambda nn: nn.Softplus(), (2, 5)),
    "embedding": _layer(lambda nn: nn.Embedding(10, 4), (5,)),
    "layer_norm": _layer(lambda nn: nn.LayerNorm((6,)), (4, 6)),
    "batchnorm1d_eval": _layer(lambda nn: _eval(nn.BatchNorm1d(6)), (4, 6)),
    "dropout_eval": _layer(lambda nn: _eval(nn.Dropout(p=0.5)), (2, 3)),
    "nan_rows": _layer(_nan_rows, (3, 4)),
    "elementwise_tuple": _layer(_elementwise, (3, 4)),
}


def graphjit_case(name: str):
    """(network with seeded weights, input) of a case."""
    net, shape = GRAPHJIT_CASES[name]()
    rng = np.random.default_rng(sum(name.encode()))
    for _, p in sorted(net.parameters_and_names(), key=lambda item: item[0]):
        value = np.asarray(p)
        if "variance" in _:
            p.set_data((rng.random(value.shape) + 0.5).astype(value.dtype))
        else:
            p.set_data((rng.standard_normal(value.shape) * 0.1).astype(value.dtype))
    x = rng.standard_normal(shape).astype(np.float32)
    if name == "embedding":
        x = rng.integers(-10, 10, shape).astype(np.int32)     # negative indices count from the end
    x.flat[0] = 3.0      # away from zero: no activation sits on its kink
    if name == "softplus":
        x[1] = [-30.0, -40.0, 1e-8, -1e-9, 2.0]       # log1p of tiny values: NumPy's accuracy
    if name.startswith("nan"):
        x.flat[[1, 6]] = np.nan
    return net, x


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def export_all(directory: str) -> None:
    """Export every graphjit case to `directory` (<name>.mindir, and <name>.npz with the input and eager output)."""
    import os

    import graphjit
    for name in GRAPHJIT_CASES:
        net, x = graphjit_case(name)
        graphjit.export(net, x, file_name=os.path.join(directory, name), file_format="MINDIR")
        out = net(x)
        outs = out if isinstance(out, tuple) else (out,)
        np.savez(os.path.join(directory, f"{name}.npz"), input=x, **{f"output{k}": np.asarray(o)
                                                                      for k, o in enumerate(outs)})


if __name__ == "__main__":      # python tests/mindir_cases.py DIR: what record.py runs with graphjit's Python
    export_all(sys.argv[1])
