"""Reading hostile MindIR files: byte mutations of real files (MindSpore 2.10's and graphjit's) and crafted
protos (random primitives, wiring, constants, dims and raw_data lengths) either load or fail with one
GraphjitError, never with another exception, and cause no side effect (tests/side_effects.py's watch):
no write, no import, no process, no exec. A file that loads is run on zeros: an output or a GraphjitError.

Profiles (tests/conftest.py): 30 examples each in CI, GRAPHJIT_HYPOTHESIS_PROFILE=long for 2 000."""

import math
import os
import tempfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphjit as ms
import mindir_cases
from side_effects import watch

pytest.importorskip("google.protobuf")
PROFILE = "graphjit-" + os.environ.get("GRAPHJIT_HYPOTHESIS_PROFILE", "ci")
SEEDS = sorted(mindir_cases.FIXTURES.glob("ms_*.mindir"))
RUN_LIMIT = 1_000_000      # elements: a loaded graph is run only when every value is smaller


def _graphjit_seed() -> bytes:
    net, x = mindir_cases.graphjit_case("lenet")
    with tempfile.TemporaryDirectory() as tmp:
        path = ms.export(net, x, file_name=os.path.join(tmp, "lenet"), file_format="MINDIR")
        return open(path, "rb").read()


def _messages():
    from graphjit.backends.mindir_proto import messages
    return messages()


def _check(data: bytes) -> None:
    """Load `data` as a .mindir file (and run it on zeros): only GraphjitError, no side effect."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "fuzz.mindir")
        with open(path, "wb") as f:
            f.write(data)
        with watch() as seen:
            try:
                graph = ms.load(path)
            except ms.GraphjitError as e:
                assert "\n" not in e.message and "cannot load" in e.message, e.message
                graph = None
            shapes = [] if graph is None else [n.type.shape for n in graph.graph.all_nodes()
                                               if getattr(n.type, "shape", None) is not None]
            shapes += [] if graph is None else [t.shape for t in graph.input_types]
            # Python ints (NumPy's product of a crafted shape wraps around int64), zero dimensions as 1 (NumPy
            # refuses a shape whose other dimensions overflow even when one is 0)
            if graph is not None and all(math.prod(max(int(d), 1) for d in shape) < RUN_LIMIT for shape in shapes):
                inputs = [np.zeros(t.shape, t.dtype) for t in graph.input_types]
                try:
                    graph(*inputs)
                except ms.GraphjitError:
                    pass
        seen.assert_none()


@pytest.fixture(scope="module", autouse=True)
def _warm():
    """protobuf's modules and graphjit's reader imported (and run once) before watching."""
    with np.load(SEEDS[0].with_suffix(".npz")) as saved:
        ms.load(str(SEEDS[0]))(saved["input"])


SEED_BYTES = [p.read_bytes() for p in SEEDS]


@settings(settings.get_profile(PROFILE))
@given(seed=st.integers(0, len(SEEDS)), edits=st.lists(st.tuples(st.integers(0, 2 ** 20), st.integers(0, 255),
                                                                 st.sampled_from(["set", "insert", "delete"])),
                                                       min_size=1, max_size=8),
       cut=st.one_of(st.none(), st.integers(0, 2 ** 20)))
def test_byte_mutations_of_real_files(seed, edits, cut):
    data = bytearray(SEED_BYTES[seed] if seed < len(SEEDS) else _GRAPHJIT[0])
    for position, value, kind in edits:
        k = position % max(len(data), 1)
        if kind == "set" and data:
            data[k] = value
        elif kind == "insert":
            data.insert(k, value)
        elif data:
            del data[k]
    if cut is not None:
        data = data[:cut % (len(data) + 1)]
    _check(bytes(data))


_GRAPHJIT = [_graphjit_seed()]
PRIMITIVES = ["Add", "Mul", "ReLU", "MatMul", "BiasAdd", "Reshape", "Transpose", "Gather", "Select", "Flatten",
              "BroadcastTo", "ReduceSum", "ReduceMax", "Softmax", "Conv2D", "MaxPool", "AvgPool", "BatchNorm",
              "PadV3", "Load", "Depend", "MakeTuple", "TupleGetItem", "UpdateState", "Cast", "Evil", "os.system"]
DIMS = st.lists(st.one_of(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4), st.integers(1, 4),
                          st.sampled_from([0, -1, 2 ** 31, 2 ** 62])), max_size=4)


@st.composite
def crafted(draw):
    M = _messages()
    model = M["ModelProto"](ir_version="1.1", producer_name="fuzz")
    g = model.graph
    g.name = draw(st.sampled_from(["g", "../../etc/passwd", "os.system", ""]))
    names = []
    for k in range(draw(st.integers(0, 2))):
        info = g.input.add(name=f"in{k}")
        info.tensor.add(dims=draw(DIMS), data_type=draw(st.sampled_from([1, 1, 1, 6, 7, 9, 11, 99])))
        names.append(info.name)
    for k in range(draw(st.integers(0, 2))):
        dims = draw(DIMS)
        size = int(np.prod([d for d in dims if 0 <= d < 100] or [1]))
        raw = b"\0" * (4 * size + draw(st.sampled_from([0, 0, 1, -1])))
        g.parameter.add(name=f"p{k}", dims=dims, data_type=1, raw_data=raw)
        names.append(f"p{k}")
    for k in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["const_int", "const_tuple", "const_tensor", "prim"]))
        name = f"n{k}"
        if kind == "prim":
            prim = draw(st.sampled_from(PRIMITIVES))
            inputs = draw(st.lists(st.sampled_from(names + ["undefined"]), max_size=5)) if names else []
            g.node.add(input=inputs, output=[name], name=name, op_type=f"REF::{prim}:{k}")
            if draw(st.booleans()):
                p = model.primitives.add(name=f"{prim}:{k}", op_type=prim, prim_type=draw(st.sampled_from([1, 2])))
                if draw(st.booleans()):
                    a = p.attribute.add(name=draw(st.sampled_from(["kernel_size", "strides", "pad_list", "format"])))
                    a.type = 20
                    for v in draw(st.lists(st.integers(-3, 4), max_size=4)):
                        a.values.add(ints=[v], type=7)
        else:
            node = g.node.add(output=[name], name=name, op_type="Constant")
            attr = node.attribute.add(name="value")
            if kind == "const_int":
                attr.type, attr.i = draw(st.sampled_from([7, 9, 1, 23, 18, 25])), draw(st.integers(-2, 2 ** 40))
            elif kind == "const_tuple":
                attr.type = 20
                for v in draw(st.lists(st.integers(-2, 2 ** 33), max_size=6)):
                    attr.values.add(ints=[v], type=7)
            else:
                attr.type = 19
                dims = draw(DIMS)
                size = int(np.prod([d for d in dims if 0 <= d < 100] or [1]))
                attr.tensors.add(dims=dims, data_type=draw(st.sampled_from([1, 7, 6])),
                                 raw_data=b"\1" * (4 * size + draw(st.sampled_from([0, 4]))))
        names.append(name)
    if names:
        out = g.output.add(name=draw(st.sampled_from(names)))
        if draw(st.booleans()):
            out.tensor.add(dims=draw(DIMS), data_type=1)
    return model.SerializeToString()


@settings(settings.get_profile(PROFILE))
@given(data=crafted())
def test_crafted_protos(data):
    _check(data)


def test_huge_declared_sizes_are_refused_before_allocating():
    M = _messages()
    model = M["ModelProto"]()
    model.graph.parameter.add(name="p", dims=[2 ** 20, 2 ** 20], data_type=1, raw_data=b"\0" * 16)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "big.mindir")
        open(path, "wb").write(model.SerializeToString())
        with pytest.raises(ms.GraphjitError, match="more than .* elements"):
            ms.load(path)
        model.graph.parameter[0].dims[:] = [2, 3]
        open(path, "wb").write(model.SerializeToString())
        with pytest.raises(ms.GraphjitError, match="holds 16 bytes of data for dims \\[2, 3\\]"):
            ms.load(path)
