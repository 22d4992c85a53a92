"""Run an ONNX file with onnxruntime: `graphjit.load("model.onnx")` (and `nn.GraphCell` of it).

Reading a file from elsewhere runs nothing of it: the bytes are read whole, up to `MAX_BYTES`, and
parsed by the `onnx` package's protobuf classes; a model is refused unless every operator is of the
default ONNX domain (no custom-op libraries, no model-local functions) and every tensor is stored in
the file itself (an external-data tensor would make the runtime open another path named by the
file). onnxruntime then builds its session from those bytes, not from the path, on the CPU, and
writes nothing (no optimized-model file). Any failure is one `GraphjitError` naming the file.
"""

from __future__ import annotations

import os

import numpy as np

from ..graph.diagnostics import GraphjitError

MAX_BYTES = 2 ** 31 - 1          # protobuf's own limit on one message: a larger file is not ONNX
DEFAULT_DOMAINS = ("", "ai.onnx")


def load_onnx(file) -> "OnnxGraph":
    """Read and check an ONNX file; returns a callable running it with onnxruntime."""
    path = os.fspath(file)

    def bad(message: str) -> GraphjitError:
        return GraphjitError(f"cannot load {path}: {message}")

    try:
        import onnx
        import onnxruntime
    except ImportError as e:
        raise bad(f"running an ONNX file needs the onnx and onnxruntime packages ({e.name} is not installed: "
                  "pip install onnx onnxruntime)") from None
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as e:
        raise bad(f"{e.strerror or e}") from None
    if len(data) > MAX_BYTES:
        raise bad(f"larger than {MAX_BYTES} bytes, the most one ONNX model can hold")
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except Exception as e:   # protobuf's DecodeError, or a recursion limit: not an ONNX model
        raise bad(f"not an ONNX model ({type(e).__name__})") from None
    if not model.HasField("graph"):
        raise bad("not an ONNX model (no graph)")
    for opset in model.opset_import:
        if opset.domain not in DEFAULT_DOMAINS:
            raise bad(f"uses operators of domain {opset.domain!r}; only the default ONNX domain is run "
                      "(custom operators would load code)")
    if len(model.functions):
        raise bad("defines model-local functions; only the default ONNX operators are run")
    problem = _check_graph(model.graph, onnx)
    if problem:
        raise bad(problem)
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 4   # only fatal messages: errors reach the user as one GraphjitError
    try:
        session = onnxruntime.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    except Exception as e:   # onnxruntime's own exception classes
        raise bad(f"onnxruntime refuses it ({_first_line(e)})") from None
    return OnnxGraph(path, session, model.graph.name or "graph")


def _check_graph(graph, onnx) -> str:
    """Why the graph (or a graph nested in an attribute) cannot be run safely, or ''."""
    tensors = list(graph.initializer) + [s.values for s in graph.sparse_initializer] + \
        [s.indices for s in graph.sparse_initializer]
    for node in graph.node:
        if node.domain not in DEFAULT_DOMAINS:
            return (f"node {node.name or node.op_type!r} is of domain {node.domain!r}; only the default ONNX domain "
                    "is run")
        for attribute in node.attribute:
            tensors.extend([attribute.t] if attribute.HasField("t") else [])
            tensors.extend(attribute.tensors)
            for sub in ([attribute.g] if attribute.HasField("g") else []) + list(attribute.graphs):
                problem = _check_graph(sub, onnx)
                if problem:
                    return problem
    for tensor in tensors:
        if tensor.data_location == onnx.TensorProto.EXTERNAL or len(tensor.external_data):
            return f"tensor {tensor.name!r} is stored in another file (external data), which is not read"
    return ""


def _first_line(e: Exception) -> str:
    """onnxruntime's message on one line (it spans several), at most 400 characters."""
    text = " ".join(str(e).split())
    return (text or type(e).__name__)[:400]


class OnnxGraph:
    """An ONNX model run by onnxruntime; call it with the inputs it was exported for."""

    def __init__(self, file: str, session, name: str):
        self.file = file
        self.session = session
        self.__name__ = name
        self.inputs = session.get_inputs()
        self.output_names = [o.name for o in session.get_outputs()]

    def __call__(self, *inputs):
        if len(inputs) != len(self.inputs):
            raise GraphjitError(f"{self.__name__} takes {len(self.inputs)} input(s), got {len(inputs)}")
        feed = {}
        for k, (value, spec) in enumerate(zip(inputs, self.inputs)):
            array = np.asarray(value)
            want = _DTYPES.get(spec.type)
            shape = [d if isinstance(d, int) else None for d in spec.shape]
            if want is None or array.dtype != want or len(array.shape) != len(shape) or \
                    any(d is not None and d != s for d, s in zip(shape, array.shape)):
                raise GraphjitError(f"{self.__name__}: input {k} must be an array of {want or spec.type} "
                                    f"{tuple(spec.shape)} (the model is specialized to it), got "
                                    f"{array.dtype}{list(array.shape)}")
            feed[spec.name] = array if array.flags.c_contiguous else array.copy()
        try:
            results = self.session.run(self.output_names, feed)
        except Exception as e:   # onnxruntime's own exception classes (an index out of range, ...)
            raise GraphjitError(f"{self.__name__} ({self.file}): onnxruntime failed: {_first_line(e)}") from None
        return results[0] if len(results) == 1 else tuple(results)

    def __repr__(self) -> str:
        return f"<graphjit ONNX model {self.__name__} from {self.file}>"


_DTYPES = {f"tensor({name})": np.dtype(dtype) for name, dtype in [
    ("float", np.float32), ("double", np.float64), ("float16", np.float16), ("int8", np.int8), ("int16", np.int16),
    ("int32", np.int32), ("int64", np.int64), ("uint8", np.uint8), ("uint16", np.uint16), ("uint32", np.uint32),
    ("uint64", np.uint64), ("bool", np.bool_)]}
