"""Write an optimized graph, with its weights, as a MindIR model MindSpore 2.x loads (`mindspore.load`).

`to_mindir(graph, weights)` walks the graph in program order and writes each node as its row of the
MindIR column says (graph/mindir_ops.py), in the layout MindSpore 2.10's loader reads: array arguments
are the graph's inputs, weights are parameters holding their data (`raw_data`, little-endian), each
primitive node is `REF::<Prim>:<k>` with one `PrimitiveProto` of kind PRIMITIVE_FUNCTION (attributes
passed as inputs: `Constant` nodes of type BOOL, INT64, TUPLE of INT64 or TENSORS), and the graph's
one output is an array. Names are derived from the graph's own names, so the same graph and weights
give the same bytes.

An op with no row, or a form of one the file cannot hold, is a `CodegenError` naming the op, why,
and the user's source line.
"""

from __future__ import annotations


from typing import Any, Optional

import numpy as np

from ..graph.diagnostics import CodegenError
from ..graph.evaluate import value_of
from ..graph.ir import Graph, Node
from ..graph.mindir_ops import NOT_EXPORTED, SPELLINGS, STRUCTURAL, MindirRefusal
from ..graph.spans import source_place
from ..graph.types import ArrayType, ScalarType, TupleType, UnionType
from .mindir_proto import AttributeType, messages

IR_VERSION = "1.1"
MIND_IR_VERSION = 3          # IR_VERSION_WITH_SCALAR_GRAPH_HOLDER, as MindSpore 2.10 writes
PRIMITIVE, PRIMITIVE_FUNCTION = 1, 2

# NumPy dtype -> MindIR TensorProto.DataType
DATA_TYPES = {np.dtype(np.float32): 1, np.dtype(np.uint8): 2, np.dtype(np.int8): 3, np.dtype(np.uint16): 4,
              np.dtype(np.int16): 5, np.dtype(np.int32): 6, np.dtype(np.int64): 7, np.dtype(np.bool_): 9,
              np.dtype(np.float16): 10, np.dtype(np.float64): 11, np.dtype(np.uint32): 12, np.dtype(np.uint64): 13}
_SCALAR_DTYPES = {"float": np.dtype(np.float64), "int": np.dtype(np.int64), "bool": np.dtype(np.bool_)}
_WEAK_SAMPLES = {"float": 0.0, "int": 0, "bool": False}


class Static:
    """A compile-time value: written as a constant where a primitive needs it."""

    def __init__(self, value: Any):
        self.value = value


def to_mindir(graph: Graph, weights: dict, producer_version: str = "") -> bytes:
    """The serialized MindIR model computing `graph`; `weights` maps each param node's id to its array."""
    M = messages()
    writer = _Writer(graph, weights, M)
    writer.run()
    model = M["ModelProto"](ir_version=IR_VERSION, producer_name="graphjit", model_version=producer_version,
                            little_endian=True, mind_ir_version=MIND_IR_VERSION)
    model.graph.CopyFrom(writer.proto)
    model.primitives.extend(writer.primitives)
    return model.SerializeToString(deterministic=True)


def _dtype_of(t) -> Optional[np.dtype]:
    if isinstance(t, ArrayType) and t.dtype is not None:
        return np.dtype(t.dtype)
    if isinstance(t, ScalarType):
        return _SCALAR_DTYPES.get(t.kind)
    return None


def _shape_of(t) -> Optional[tuple]:
    if isinstance(t, ArrayType):
        return t.shape if t.shape is not None and None not in t.shape else None
    if isinstance(t, ScalarType) and t.kind in _SCALAR_DTYPES:
        return ()
    return None


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "graph"


class _Writer:
    """The builder the rows of graph/mindir_ops.py write through (`b`)."""

    def __init__(self, graph: Graph, weights: dict, M: dict):
        self.graph = graph
        self.weights = weights
        self.M = M
        self.name = _safe(graph.name)
        self.proto = M["GraphProto"](name=self.name)
        self.primitives: list = []
        self.values: dict[int, Any] = {}
        self.shapes: dict[str, tuple] = {}
        self.dtypes: dict[str, np.dtype] = {}
        self.taken: set[str] = set()
        self.count = 0
        self.node: Optional[Node] = None

    def fresh(self, hint: str) -> str:
        name, k = f"{self.name}:{hint}", 1
        while name in self.taken:
            k += 1
            name = f"{self.name}:{hint}_{k}"
        self.taken.add(name)
        return name

    # --- walking the graph ---------------------------------------------------------------------
    def run(self) -> None:
        g = self.graph
        for arg in g.args:
            if isinstance(arg.type, ArrayType):
                dtype, shape = _dtype_of(arg.type), _shape_of(arg.type)
                if dtype not in DATA_TYPES or shape is None:
                    raise CodegenError(f"cannot export {g.name} to MINDIR: argument `{arg.name}` is {arg.type}; a "
                                       "MindIR input needs a known numeric dtype and shape", arg.span or g.span)
                name = self.fresh(_safe(arg.name or f"input{arg.attrs['index']}"))
                info = self.proto.input.add(name=name)
                info.tensor.add(dims=list(shape), data_type=DATA_TYPES[dtype])
                self.values[arg.id] = name
                self.shapes[name], self.dtypes[name] = tuple(shape), dtype
            elif g.users(arg) or g.is_output(arg):
                raise CodegenError(f"cannot export {g.name} to MINDIR: argument `{arg.name}` ({arg.type}) is used "
                                   "as a Python object by the graph", arg.span or g.span)
        for param in g.params:
            value = np.asarray(self.weights[param.id])
            if value.dtype not in DATA_TYPES:
                raise CodegenError(f"cannot export {g.name} to MINDIR: weight {param.attrs['path']} has dtype "
                                   f"{value.dtype}", g.span)
            key = _safe(param.name or "weight")
            name = self.fresh(key)
            data = np.ascontiguousarray(value).astype(value.dtype.newbyteorder("<")).tobytes()
            self.proto.parameter.add(name=name, dims=list(value.shape), data_type=DATA_TYPES[value.dtype],
                                     raw_data=data, ref_key=name.split(":", 1)[1])
            self.values[param.id] = name
            self.shapes[name], self.dtypes[name] = value.shape, value.dtype
        for node in g.nodes:
            self.write(node)
        if len(g.outputs) != 1:
            raise CodegenError(f"cannot export {g.name} to MINDIR: it returns {len(g.outputs)} values; graphjit "
                               "writes MindIR graphs returning an array or a tuple of arrays", g.span)
        out = g.outputs[0]
        self.node = None
        value = self.values.get(out.id)
        items = out.type.items if isinstance(out.type, TupleType) else None
        if isinstance(value, Static) and isinstance(value.value, tuple):
            value = tuple(Static(v) for v in value.value)
        if items is not None and isinstance(value, tuple) and len(items) == len(value) and \
                all(_dtype_of(t) in DATA_TYPES and _shape_of(t) is not None and isinstance(t, ArrayType)
                    for t in items):
            # a tuple of arrays: MakeTuple, declared as MindSpore declares it (a TUPLE of TENSORS)
            names = [self.result(v, t) for v, t in zip(value, items)]
            source = self.prim("MakeTuple", *names, kind=PRIMITIVE)
            info = self.proto.output.add(name=source, denotation="Tuple")
            info.attr_info.type = AttributeType.index("TUPLE")
            for t in items:
                declared = info.attr_info.values.add(type=AttributeType.index("TENSORS"))
                declared.tensors.add(dims=list(_shape_of(t)), data_type=DATA_TYPES[_dtype_of(t)])
            info.attr_info.seq_info.is_dyn_len = False
            return
        if isinstance(value, tuple) or not isinstance(out.type, ArrayType) or _dtype_of(out.type) not in DATA_TYPES \
                or _shape_of(out.type) is None:
            raise CodegenError(f"cannot export {g.name} to MINDIR: it returns {out.type}; graphjit writes MindIR "
                               "graphs returning an array or a tuple of arrays", g.span)
        source = self.result(value, out.type)
        info = self.proto.output.add(name=source)
        info.tensor.add(dims=list(_shape_of(out.type)), data_type=DATA_TYPES[_dtype_of(out.type)])

    def result(self, value, t) -> str:
        """A value returned by the graph, as the output of a node (an input or a weight is reshaped to itself)."""
        source = self.materialize(value, _dtype_of(t))
        if source in {i.name for i in self.proto.input} or source in {p.name for p in self.proto.parameter}:
            source = self.prim("Reshape", source, self.tuple_(_shape_of(t)))
        return source

    def write(self, node: Node) -> None:
        self.node = node
        op = node.op
        if op == "const":
            self.values[node.id] = Static(node.attrs["value"])
            return
        if op == "tuple":
            items = tuple(self.values[o.id] for o in node.operands)
            self.values[node.id] = Static(tuple(v.value for v in items)) if all(isinstance(v, Static) for v in items) \
                else items
            return
        if op == "tuple_get":
            source = self.values[node.operands[0].id]
            k = node.attrs["index"]
            self.values[node.id] = source[k] if isinstance(source, tuple) else Static(source.value[k])
            return
        operands = [self.values[o.id] for o in node.operands]
        if operands and all(isinstance(v, Static) for v in operands) and node.opdef.pure and \
                not node.opdef.effect and not node.regions and op != "note":
            try:
                value = value_of(node, [v.value for v in operands])
            except Exception as e:
                self.refuse(f"cannot be computed when the file is written ({type(e).__name__}: {e})")
            if op in ("empty", "empty_like"):
                value = np.zeros_like(value)
            self.values[node.id] = Static(value)
            return
        row = SPELLINGS.get(op)
        if row is None:
            self.refuse(NOT_EXPORTED.get(op) or STRUCTURAL.get(op) or "has no MindIR row")
        if node.written_positions:
            self.refuse(f"writes an array in place (its operand {node.written_positions[0]}); MindIR values are never "
                        "written after they are made")
        self.check_keywords(node, row)
        if isinstance(node.type, UnionType):
            self.refuse(f"gives a {node.type}: which one depends on the values, and a MindIR value has one type")
        try:
            result = row.build(self, node)
        except MindirRefusal as e:
            self.refuse(str(e))
        self.values[node.id] = result
        if isinstance(result, str):
            shape, dtype = _shape_of(node.type), _dtype_of(node.type)
            if shape is not None:
                self.shapes.setdefault(result, tuple(shape))
            if dtype is not None:
                self.dtypes.setdefault(result, dtype)

    def check_keywords(self, node: Node, row) -> None:
        if "*" in row.keywords:
            return
        from ..graph.attrs import DESCRIPTIVE_ATTRS
        kw = node.attrs.get("kw", ())
        if "out" in kw:
            self.refuse("writes its result into an `out=` array; MindIR values are never written")
        extra = [k for k in node.attrs if k not in DESCRIPTIVE_ATTRS and k not in row.keywords and k != "index"]
        extra += [k for k in kw if k not in row.keywords]
        if extra:
            self.refuse(f"with `{extra[0]}=` is not written (its MindIR row takes "
                        f"{', '.join(sorted(row.keywords)) or 'no keywords'})")

    def refuse(self, reason: str):
        node = self.node
        span = node.span if node is not None else None
        if span is None and node is not None:
            span = next((u.span for u in node.graph.users(node) if u.span), None)
        what = f"`{node.op}` " if node is not None else ""
        raise CodegenError(f"cannot export {self.graph.name} to MINDIR: {what}{reason}", span or self.graph.span,
                           hint="export to graphjit's own format (file_format=\"GJIR\") keeps every op")

    # --- the builder interface the rows use ------------------------------------------------------
    @property
    def out(self) -> np.dtype:
        dtype = _dtype_of(self.node.type)
        if dtype is None:
            raise MindirRefusal(f"gives a {self.node.type}, not an array or a number")
        return dtype

    @property
    def out_shape(self) -> tuple:
        shape = _shape_of(self.node.type)
        if shape is None:
            raise MindirRefusal(f"gives a {self.node.type}, whose shape is not known")
        return tuple(shape)

    def shape(self, k: int) -> tuple:
        value = self.values[self.node.operands[k].id]
        if isinstance(value, Static):
            return np.shape(value.value)
        shape = _shape_of(self.node.operands[k].type)
        if shape is None:
            raise MindirRefusal(f"needs the shape of operand {k}, which is not known")
        return tuple(shape)

    def in_dtype(self, k: int) -> Optional[np.dtype]:
        operand = self.node.operands[k]
        value = self.values[operand.id]
        if isinstance(value, Static):
            return np.asarray(value.value).dtype if isinstance(value.value, (np.ndarray, np.generic)) else None
        return np.dtype(operand.type.dtype) if isinstance(operand.type, ArrayType) and operand.type.dtype else None

    def common_dtype(self) -> np.dtype:
        parts = []
        for k, operand in enumerate(self.node.operands):
            value = self.values[operand.id]
            dtype = self.in_dtype(k)
            if dtype is not None:
                parts.append(dtype)
            elif isinstance(value, Static):
                parts.append(value.value)
            elif isinstance(operand.type, ScalarType) and operand.type.kind in _WEAK_SAMPLES:
                parts.append(_WEAK_SAMPLES[operand.type.kind])
            else:
                raise MindirRefusal(f"operand {k} is a {operand.type}")
        return np.result_type(*parts)

    def is_static(self, k: int) -> bool:
        return isinstance(self.values[self.node.operands[k].id], Static)

    def static(self, k: int) -> Any:
        value = self.values[self.node.operands[k].id]
        if not isinstance(value, Static):
            raise MindirRefusal(f"needs operand {k} as a compile-time value, and it is computed at run time")
        return value.value

    def evaluate(self, first: Any) -> Any:
        rest = [self.static(k) for k in range(1, len(self.node.operands))]
        return value_of(self.node, [first, *rest])

    def x(self, k: int, dtype=None) -> str:
        value = self.values[self.node.operands[k].id]
        if isinstance(value, tuple):
            raise MindirRefusal("takes a tuple where an array is needed")
        return self.materialize(value, None if dtype is None else np.dtype(dtype))

    def broadcast(self, name: str, k: int, shape: Optional[tuple] = None) -> str:
        """Operand `name` broadcast to the result's shape where `Select` needs equal shapes."""
        shape = self.out_shape if shape is None else shape
        if self.shapes.get(name) == tuple(shape):
            return name
        return self.prim("BroadcastTo", name, self.tuple_(shape))

    def materialize(self, value, dtype: Optional[np.dtype]) -> str:
        if isinstance(value, Static):
            array = np.asarray(value.value) if dtype is None else np.asarray(value.value).astype(dtype)
            if array.dtype not in DATA_TYPES:
                raise MindirRefusal(f"uses a compile-time {type(value.value).__name__} as an array")
            return self.const(array)
        if dtype is not None and self.dtypes.get(value) not in (None, dtype):
            if dtype not in _MS_TYPE_IDS or self.dtypes[value] not in _MS_TYPE_IDS:
                raise MindirRefusal(f"needs a {self.dtypes[value]} operand as {dtype}; only casts between "
                                    "floating-point types are written")
            return self.prim("Cast", value, self.int_(_MS_TYPE_IDS[dtype]))
        return value

    # --- nodes ---------------------------------------------------------------------------------
    def _constant(self, hint: str, fill) -> str:
        name = self.fresh(hint)
        node = self.proto.node.add(output=[name], name=name, op_type="Constant")
        attr = node.attribute.add(name="value")
        fill(attr)
        return name

    def const(self, array) -> str:
        array = np.ascontiguousarray(array)

        def fill(attr):
            attr.type = AttributeType.index("TENSORS")
            attr.tensors.add(dims=list(array.shape), data_type=DATA_TYPES[array.dtype],
                             raw_data=array.astype(array.dtype.newbyteorder("<")).tobytes())
        name = self._constant("const", fill)
        self.shapes[name], self.dtypes[name] = array.shape, array.dtype
        return name

    def tuple_(self, ints) -> str:
        def fill(attr):
            attr.type = AttributeType.index("TUPLE")
            for i in ints:
                attr.values.add(ints=[int(i)], type=AttributeType.index("INT64"))   # as MindSpore writes it
        return self._constant("tuple", fill)

    def int_(self, i: int) -> str:
        return self._constant("int", lambda attr: (setattr(attr, "i", int(i)),
                                                   setattr(attr, "type", AttributeType.index("INT64"))))

    def bool_(self, v: bool) -> str:
        return self._constant("bool", lambda attr: (setattr(attr, "i", int(bool(v))),
                                                    setattr(attr, "type", AttributeType.index("BOOL"))))

    def prim(self, op_type: str, *inputs: str, attrs: Optional[dict] = None, kind: int = PRIMITIVE_FUNCTION) -> str:
        """A primitive node; `attrs` makes it an old-style PRIMITIVE holding its settings (PadV3, Conv2D)."""
        self.count += 1
        prim_name = f"{op_type}:{self.count}"
        named = self.node is not None and self.node.name
        name = self.fresh(_safe(self.node.name) if named else f"{op_type}_{self.count}")
        made = self.proto.node.add(input=list(inputs), output=[name], name=name, op_type=f"REF::{prim_name}")
        if self.node is not None and self.node.span is not None:
            made.doc_string = source_place(self.node.span)
        primitive = self.M["PrimitiveProto"](name=prim_name, op_type=op_type,
                                             prim_type=PRIMITIVE if attrs else kind)
        for key, value in (attrs or {}).items():
            if isinstance(value, bool):
                primitive.attribute.add(name=key, i=int(value), type=AttributeType.index("BOOL"))
            else:
                primitive.attribute.add(name=key, s=str(value).encode(), type=AttributeType.index("STRING"))
        self.primitives.append(primitive)
        return name


# MindSpore's TypeId of each dtype, as the `dst_type` input of Cast (float64's 44 as MindSpore 2.10 writes
# it; the others are not written)
_MS_TYPE_IDS = {np.dtype(np.float16): 42, np.dtype(np.float32): 43, np.dtype(np.float64): 44}
