"""Read a MindIR file (graphjit's or MindSpore's) as graph ops and run it: `graphjit.load("model.mindir")`.

Reading a file from elsewhere runs nothing of it: the bytes are read whole, up to `MAX_BYTES`, and
parsed by protobuf into graphjit's own description of the MindIR messages (backends/mindir_proto.py);
a file with a field that description lacks, sub-graphs (control flow, functions), compressed,
quantized or external tensors is refused. Every primitive becomes op-table ops through the column's
`PRIMITIVES` (graph/mindir_ops.py); a primitive not there is refused, all of them named at once.
Sizes are checked before anything is allocated: at most `MAX_NODES` nodes, `MAX_RANK` dimensions,
`MAX_ELEMENTS` elements in any tensor or node result and `MAX_TOTAL` in all node results, and a
tensor's `raw_data` must hold exactly its dims' bytes. The graph built is verified and run by the
interpreter, which calls op-table functions: no code is generated, no module is imported by a name
from the file, nothing is written. Any failure is one `GraphjitError` naming the file and the node.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..graph.diagnostics import GraphjitError

MAX_BYTES = 2 ** 31 - 1          # protobuf's own limit on one message
MAX_NODES = 100_000
MAX_RANK = 32
MAX_ELEMENTS = 2 ** 28           # in any one tensor or node result (1 GiB of float32)
MAX_TOTAL = 2 ** 30              # in all node results together: what running the graph may hold at once

# MindIR TensorProto.DataType -> NumPy dtype
DTYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32, 7: np.int64, 9: np.bool_,
          10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64}


class _Bad(Exception):
    """What is wrong with the file, and where."""


def load_mindir(file) -> "MindirGraph":
    """Read and check a MindIR file; returns a callable running its graph."""
    path = os.fspath(file)
    try:
        from .mindir_proto import messages
        M = messages()
    except GraphjitError as e:
        raise GraphjitError(f"cannot load {path}: {e.message}") from None
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as e:
        raise GraphjitError(f"cannot load {path}: {e.strerror or e}") from None
    try:
        return _read(path, data, M)
    except _Bad as e:
        raise GraphjitError(f"cannot load {path}: {e}") from None
    except GraphjitError as e:
        raise GraphjitError(f"cannot load {path}: {e.message}").with_traceback(None) from None
    except RecursionError:
        raise GraphjitError(f"cannot load {path}: nested too deeply") from None
    except Exception as e:  # an internal check we did not foresee still names the file, on one line
        raise GraphjitError(f"cannot load {path}: not a MindIR model graphjit reads ({type(e).__name__}: "
                            f"{str(e)[:200]})") from None


def _read(path: str, data: bytes, M: dict) -> "MindirGraph":
    from .mindir_proto import unknown_fields
    if len(data) > MAX_BYTES:
        raise _Bad(f"larger than {MAX_BYTES} bytes")
    model = M["ModelProto"]()
    try:
        model.ParseFromString(data)
    except Exception as e:    # protobuf's DecodeError, or its nesting limit
        raise _Bad(f"not a MindIR model ({type(e).__name__})") from None
    if not model.HasField("graph"):
        raise _Bad("not a MindIR model (no graph)")
    if unknown_fields(model):
        raise _Bad("holds fields graphjit does not read (quantization, parallel layouts, or not a MindIR model)")
    if len(model.functions):
        raise _Bad(f"holds {len(model.functions)} sub-graph(s) (control flow or functions), which are not read")
    if model.HasField("little_endian") and not model.little_endian:
        raise _Bad("stores its tensors big-endian")
    graph_proto = model.graph
    if len(graph_proto.node) > MAX_NODES:
        raise _Bad(f"has {len(graph_proto.node)} nodes; at most {MAX_NODES} are read")
    return _Builder(path, model).build()


def _dims(tensor, where: str) -> tuple:
    dims = tuple(tensor.dims)
    if len(dims) > MAX_RANK or any(d < 0 for d in dims):
        raise _Bad(f"{where} has dims {list(dims)[:8]}")
    size = 1
    for d in dims:
        size *= d
        if size > MAX_ELEMENTS:
            raise _Bad(f"{where} has more than {MAX_ELEMENTS} elements")
    return dims


def _dtype(tensor, where: str) -> np.dtype:
    dtype = DTYPES.get(tensor.data_type)
    if dtype is None:
        raise _Bad(f"{where} has data type {tensor.data_type}, which is not read")
    return np.dtype(dtype)


def _tensor(tensor, where: str) -> np.ndarray:
    """The array a TensorProto holds in `raw_data`, its length checked against its dims first."""
    if tensor.HasField("external_data") or tensor.compression_type:
        raise _Bad(f"{where} is stored outside the file or compressed, which is not read")
    dims, dtype = _dims(tensor, where), _dtype(tensor, where)
    expected = int(np.prod(dims, dtype=np.int64)) * dtype.itemsize
    if len(tensor.raw_data) != expected:
        raise _Bad(f"{where} holds {len(tensor.raw_data)} bytes of data for dims {list(dims)} of {dtype} "
                   f"({expected} bytes)")
    return np.frombuffer(tensor.raw_data, dtype.newbyteorder("<")).astype(dtype).reshape(dims)


class _Builder:
    """Builds the graph: the reader `r` the PRIMITIVES rows use."""

    def __init__(self, path: str, model):
        from ..graph.ir import Graph
        self.path = path
        self.model = model
        self.graph = Graph(_label(_s(model.graph.name)) or "mindir")
        self.values: dict[str, Any] = {}
        self.params: dict[str, np.ndarray] = {}
        self.where = ""
        self.total = 0

    def build(self) -> "MindirGraph":
        from ..graph.mindir_ops import MONAD, PRIMITIVES, MindirRefusal
        from ..graph.paths import Path
        from ..graph.types import ArrayType
        from ..graph.verifier import verify
        g, proto = self.graph, self.model.graph
        prims = {}
        for p in self.model.primitives:
            prims[_s(p.name)] = p
        for k, info in enumerate(proto.input):
            where = f"input {k}"
            if len(info.tensor) != 1:
                raise _Bad(f"{where} is not one tensor")
            dims, dtype = _dims(info.tensor[0], where), _dtype(info.tensor[0], where)
            self.define(_s(info.name), g.add_arg(f"input{k}", ArrayType(dtype.name, dims)), where)
        for k, tensor in enumerate(proto.parameter):
            where = f"parameter {_s(tensor.name)!r}"[:120]
            value = _tensor(tensor, where)
            key = f"p{k}"
            self.params[key] = value
            self.define(_s(tensor.name), g.add_param(str(Path("bound", key)), ArrayType(value.dtype.name, value.shape),
                                                 name=key), where)
        unknown = sorted({_prim_type(n, prims) for n in proto.node if _s(n.op_type) != "Constant"} - set(PRIMITIVES))
        if unknown:
            shown = ", ".join(_printable(u)[:60] for u in unknown[:20])
            raise _Bad(f"uses MindSpore primitive(s) graphjit does not read: {shown}")
        for node in proto.node:
            self.where = f"node {_s(node.name)!r}"[:160]
            if len(node.output) != 1:
                raise _Bad(f"{self.where} has {len(node.output)} outputs")
            op_type = _s(node.op_type)
            if op_type == "Constant":
                if len(node.attribute) != 1:
                    raise _Bad(f"{self.where}: a Constant has one attribute")
                self.define(_s(node.output[0]), self.constant(node.attribute[0]), self.where)
                continue
            args = [self.lookup(_s(name)) for name in node.input]
            prim = prims.get(op_type[5:]) if op_type.startswith("REF::") else None
            attrs = {_s(a.name): self.attribute(a) for a in prim.attribute} if prim is not None else {}
            try:
                result = PRIMITIVES[_prim_type(node, prims)](self, args, attrs)
            except MindirRefusal as e:
                raise _Bad(f"{self.where}: {e}") from None
            except GraphjitError as e:
                raise _Bad(f"{self.where} ({_prim_type(node, prims)}): {e.message}") from None
            self.define(_s(node.output[0]), result, self.where)
        if len(proto.output) != 1:
            raise _Bad(f"has {len(proto.output)} outputs; graphjit reads graphs with one")
        out = self.lookup(_s(proto.output[0].name))
        info = proto.output[0]
        if isinstance(out, tuple):      # MakeTuple of arrays: declared as a TUPLE of TENSORS
            if not out or not all(hasattr(item, "op") for item in out) or len(out) > MAX_RANK * 64:
                raise _Bad("its output is not an array or a tuple of arrays")
            declared = [v.tensors[0] for v in info.attr_info.values if len(v.tensors) == 1]
            if len(declared) == len(out):
                for k, (item, t) in enumerate(zip(out, declared)):
                    self.check_declared(item, t, f"output {k}")
            out = g.add("tuple", list(out))
        elif out is MONAD or not hasattr(out, "op"):
            raise _Bad("its output is not an array or a tuple of arrays")
        elif len(info.tensor) == 1:
            self.check_declared(out, info.tensor[0], "the output")
        g.set_outputs([out])
        verify(g)
        return MindirGraph(self.path, g, self.params)

    def check_declared(self, node, tensor, where: str) -> None:
        from ..graph.types import ArrayType
        dims, dtype = _dims(tensor, where), _dtype(tensor, where)
        if not isinstance(node.type, ArrayType) or node.type.dtype != dtype.name or tuple(node.type.shape) != dims:
            raise _Bad(f"declares {where} as {dtype.name}{list(dims)}, but its graph computes {node.type}")

    def define(self, name: str, value: Any, where: str) -> None:
        if name in self.values:
            raise _Bad(f"{where}: the name {name[:80]!r} is defined twice")
        self.values[name] = value

    def lookup(self, name: str) -> Any:
        if name not in self.values:
            raise _Bad(f"{self.where} reads {name[:80]!r}, which is not defined before it")
        return self.values[name]

    # --- values in attributes ----------------------------------------------------------------------
    def constant(self, attr) -> Any:
        from ..graph.mindir_ops import MONAD
        kind = _attribute_type(attr)
        if kind in ("UMONAD", "IOMONAD"):
            return MONAD
        if kind == "TENSORS":
            if len(attr.tensors) != 1:
                raise _Bad(f"{self.where}: a tensor constant holds one tensor")
            return self.graph.const(_tensor(attr.tensors[0], self.where))
        return self.attribute(attr)

    def attribute(self, attr, depth: int = 0) -> Any:
        kind = _attribute_type(attr)
        if depth > 8:
            raise _Bad(f"{self.where}: attribute nested too deeply")
        if kind == "BOOL":
            return bool(attr.i)
        if kind in ("INT64", "INT32", "INT16", "INT8", "UINT8", "UINT16", "UINT32", "UINT64"):
            return int(attr.i)
        if kind == "FLOAT":
            return float(np.float32(attr.f))
        if kind == "DOUBLE":
            return float(attr.d)
        if kind == "STRING":
            return _printable(_s(attr.s)[:200])
        if kind in ("TUPLE", "LIST"):
            if len(attr.values) > MAX_RANK * 64:
                raise _Bad(f"{self.where}: a tuple of {len(attr.values)} values")
            return tuple(self.attribute(v, depth + 1) if not len(v.ints) else
                         (int(v.ints[0]) if len(v.ints) == 1 else tuple(int(i) for i in v.ints[:MAX_RANK * 64]))
                         for v in attr.values)
        if kind == "NONE":
            return None
        raise _Bad(f"{self.where}: an attribute of type {kind}, which is not read")

    # --- the reader interface of the PRIMITIVES rows ------------------------------------------------
    def add(self, op: str, operands: list, attrs: dict = None):
        from ..graph.types import ArrayType
        node = self.graph.add(op, operands, attrs or {})
        t = node.type
        if not isinstance(t, ArrayType) or t.shape is None or None in t.shape or t.dtype is None:
            raise _Bad(f"{self.where}: `{op}` of these inputs gives {t}")
        size = 1
        for d in t.shape:
            size *= d
        self.total += size
        if size > MAX_ELEMENTS or self.total > MAX_TOTAL:
            raise _Bad(f"{self.where}: `{op}` would make {size} elements ({self.total} in all; at most "
                       f"{MAX_ELEMENTS} in one value and {MAX_TOTAL} in all are run)")
        return node

    def const(self, value: Any):
        return self.graph.const(value)

    def value(self, x: Any):
        from ..graph.mindir_ops import MONAD
        if hasattr(x, "op"):
            return x
        if isinstance(x, tuple) or x is MONAD or x is None or isinstance(x, str):
            raise _Bad(f"{self.where}: an input that should be an array is {type(x).__name__}")
        return self.graph.const(x)

    def static(self, x: Any, what: str) -> Any:
        if hasattr(x, "op"):
            if x.op == "const" and np.ndim(x.attrs["value"]) == 0:
                return np.asarray(x.attrs["value"]).item()
            raise _Bad(f"{self.where}: {what} must be a constant")
        return x

    def ints(self, x: Any, what: str) -> tuple:
        if not isinstance(x, tuple) or not all(isinstance(i, int) and not isinstance(i, bool) for i in x):
            raise _Bad(f"{self.where}: {what} must be a tuple of integers, not {str(x)[:60]}")
        return x

    def arity(self, args: list, n: int) -> None:
        if len(args) != n:
            raise _Bad(f"{self.where} takes {n} inputs, got {len(args)}")

    def shape(self, x) -> tuple:
        return tuple(x.type.shape)

    def dtype(self, x) -> np.dtype:
        return np.dtype(x.type.dtype)


def _s(text) -> str:
    """A string field: protobuf gives `bytes` for one that is not valid UTF-8."""
    return text if isinstance(text, str) else bytes(text).decode("utf-8", "replace")


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() else "?" for c in text)


def _attribute_type(attr) -> str:
    from .mindir_proto import AttributeType
    return AttributeType[attr.type] if 0 <= attr.type < len(AttributeType) else str(attr.type)


def _prim_type(node, prims: dict) -> str:
    """The MindSpore primitive a node calls: `REF::MatMul:6` names a PrimitiveProto; a bare name is itself."""
    op_type = _s(node.op_type)
    if op_type.startswith("REF::"):
        prim = prims.get(op_type[5:])
        if prim is None:
            raise _Bad(f"node {_s(node.name)[:80]!r} calls {op_type[:80]!r}, which the file does not define")
        return _s(prim.op_type)
    return op_type


def _label(name: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name)[:80]


class MindirGraph:
    """A MindIR graph read as graph ops, run by the interpreter; call it with the inputs it was exported for."""

    def __init__(self, file: str, graph, params: dict):
        from ..graph.paths import Roots
        from .interpreter import Interpreter
        self.file = file
        self.graph = graph
        self.params = params
        self.__name__ = graph.name
        self.input_types = [a.type for a in graph.args]
        self._run = Interpreter(graph, Roots(bound=params))

    def __call__(self, *inputs):
        if len(inputs) != len(self.input_types):
            raise GraphjitError(f"{self.__name__} takes {len(self.input_types)} input(s), got {len(inputs)}")
        arrays = []
        for k, (value, t) in enumerate(zip(inputs, self.input_types)):
            array = np.asarray(value) if isinstance(value, (np.ndarray, np.generic)) else None
            if array is None or array.dtype.name != t.dtype or array.shape != tuple(t.shape):
                got = f"{array.dtype.name}{list(array.shape)}" if array is not None else type(value).__name__
                raise GraphjitError(f"{self.__name__}: input {k} must be an array of type {t} (the graph is "
                                    f"specialized to it), got {got}")
            arrays.append(array)
        try:
            with np.errstate(all="ignore"):
                return self._run(*arrays)
        except Exception as e:   # a run-time index out of range (IndexError), as MindSpore's Gather raises
            raise GraphjitError(f"{self.__name__} ({self.file}): {type(e).__name__}: "
                                f"{' '.join(str(e).split())[:200]}") from None

    def __repr__(self) -> str:
        return f"<graphjit MindIR graph {self.__name__} from {self.file}>"
