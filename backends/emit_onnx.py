"""Write an optimized graph, with its weights, as an ONNX model (the `onnx` package, imported here only).

`to_onnx(graph, weights)` walks the graph in program order and writes each node as its row of the
ONNX column says (graph/onnx_ops.py): array arguments become the model's inputs, weights become
initializers, compile-time values become constants in the dtype each use needs, a returned tuple
becomes several outputs. Every value is declared with the type the graph gives it, and the model is
checked with ONNX's own full check (its shape and type inference must agree with every declaration),
so a row that computed another dtype or shape than NumPy's is an error, not a different model.

An op with no row, or a form of one the file cannot hold, is a `CodegenError` naming the op, why,
and the user's source line.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..graph.diagnostics import CodegenError
from ..graph.evaluate import value_of
from ..graph.ir import Graph, Node
from ..graph.onnx_ops import NOT_EXPORTED, OPSET, SPELLINGS, STRUCTURAL, OnnxRefusal
from ..graph.types import ArrayType, ScalarType, TupleType, UnionType

IR_VERSION = 8              # the oldest IR version opset 18 allows: readable by the most runtimes
_SCALAR_DTYPES = {"float": np.dtype(np.float64), "int": np.dtype(np.int64), "bool": np.dtype(np.bool_)}
_WEAK_SAMPLES = {"float": 0.0, "int": 0, "bool": False}


class Static:
    """A compile-time value: written as a constant where an ONNX operator needs it."""

    def __init__(self, value: Any):
        self.value = value


def to_onnx(graph: Graph, weights: dict, producer_version: str = "") -> bytes:
    """The serialized ONNX model computing `graph`; `weights` maps each param node's id to its array.

    Raises:
        CodegenError: a node has no faithful ONNX form (names the op, the reason, the source line).
    """
    import onnx

    writer = _Writer(graph, weights)
    writer.run()
    model = onnx.helper.make_model(
        onnx.helper.make_graph(writer.nodes, _safe(graph.name), writer.inputs, writer.outputs,
                               writer.initializers, value_info=writer.value_info),
        opset_imports=[onnx.helper.make_opsetid("", OPSET)], producer_name="graphjit",
        producer_version=producer_version)
    model.ir_version = IR_VERSION
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as e:   # ONNX's checker raises its own classes; any is our bug, said plainly
        raise CodegenError(f"cannot export {graph.name} to ONNX: the written model does not check "
                           f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})", graph.span) from None
    try:
        return model.SerializeToString()
    except ValueError as e:
        raise CodegenError(f"cannot export {graph.name} to ONNX: {e} (a model above 2 GiB needs ONNX's "
                           "external data files, which graphjit does not write)", graph.span) from None


def dtype_of(t) -> Optional[np.dtype]:
    """The NumPy dtype of a value of graph type `t` in the ONNX file (Python numbers: 64-bit)."""
    if isinstance(t, ArrayType) and t.dtype is not None:
        return np.dtype(t.dtype)
    if isinstance(t, ScalarType):
        return _SCALAR_DTYPES.get(t.kind)
    return None


def shape_of(t) -> Optional[tuple]:
    if isinstance(t, ArrayType):
        return t.shape if t.shape is not None and None not in t.shape else None
    if isinstance(t, ScalarType) and t.kind in _SCALAR_DTYPES:
        return ()
    return None


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "graph"


class _Writer:
    """The builder the rows of graph/onnx_ops.py write through (`b`)."""

    def __init__(self, graph: Graph, weights: dict):
        self.graph = graph
        self.weights = weights
        self.nodes: list = []
        self.initializers: list = []
        self.inputs: list = []
        self.outputs: list = []
        self.value_info: list = []
        self.values: dict[int, Any] = {}       # graph node id -> ONNX name, Static, or tuple of them
        self.dtypes: dict[str, np.dtype] = {}  # ONNX name -> dtype, where known
        self.taken: set[str] = set()
        self.node: Optional[Node] = None

    # --- walking the graph ---------------------------------------------------------------------
    def run(self) -> None:
        from onnx import helper
        g = self.graph
        for arg in g.args:
            items = arg.type.items if isinstance(arg.type, TupleType) else None
            if isinstance(arg.type, ArrayType) or items and all(isinstance(t, ArrayType) for t in items):
                # an array is one input; a tuple of arrays (`*inputs`, a tuple argument) one input per item
                names = []
                for k, t in enumerate(items or (arg.type,)):
                    dtype, shape = dtype_of(t), shape_of(t)
                    if dtype is None or shape is None or dtype.kind not in "biuf":
                        raise CodegenError(f"cannot export {g.name} to ONNX: argument `{arg.name}` is {arg.type}; "
                                           "an ONNX input needs a known numeric dtype and shape", arg.span or g.span)
                    name = self.fresh((arg.name or f"input{arg.attrs['index']}") + (f"_{k}" if items else ""))
                    self.inputs.append(helper.make_tensor_value_info(name, _elem(dtype), list(shape)))
                    self.dtypes[name] = dtype
                    names.append(name)
                self.values[arg.id] = tuple(names) if items else names[0]
            elif g.users(arg) or g.is_output(arg):
                raise CodegenError(f"cannot export {g.name} to ONNX: argument `{arg.name}` "
                                   f"({arg.type}) is used as a Python object by the graph", arg.span or g.span)
        for param in g.params:
            value = np.asarray(self.weights[param.id])
            if value.dtype.kind not in "biuf":
                raise CodegenError(f"cannot export {g.name} to ONNX: weight {param.attrs['path']} has dtype "
                                   f"{value.dtype}", g.span)
            self.values[param.id] = self.const(value, hint=param.name or "weight")
        for node in g.nodes:
            self.write(node)
        results = []
        for out in g.outputs:
            results.extend(self.flatten(self.values.get(out.id), out.type))
        for k, (value, t) in enumerate(results):
            name = self.fresh("output" if len(results) == 1 else f"output{k}")
            dtype = dtype_of(t) if t is not None else None
            source = self.materialize(value, dtype)
            self.nodes.append(helper.make_node("Identity", [source], [name]))
            dtype = dtype or self.dtypes.get(source)
            shape = shape_of(t) if t is not None else None
            if isinstance(value, Static):
                shape = np.shape(value.value)
            self.outputs.append(helper.make_tensor_value_info(name, _elem(dtype), list(shape) if shape is not None
                                                              else None))

    def flatten(self, value, t) -> list:
        """(value, graph type) pairs of an output: a tuple is several."""
        items = t.items if isinstance(t, TupleType) else None
        if isinstance(value, Static) and isinstance(value.value, tuple):
            value = tuple(Static(v) for v in value.value)
        if isinstance(value, tuple):
            return [pair for k, v in enumerate(value)
                    for pair in self.flatten(v, items[k] if items and k < len(items) else None)]
        return [(value, t)]

    def write(self, node: Node) -> None:
        self.node = node
        op = node.op
        if op == "const":
            self.values[node.id] = Static(node.attrs["value"])
            return
        if op == "tuple":
            self.values[node.id] = tuple(self.values[o.id] for o in node.operands)
            return
        if op == "tuple_get":
            source = self.values[node.operands[0].id]
            k = node.attrs["index"]
            self.values[node.id] = source[k] if isinstance(source, tuple) else Static(source.value[k])
            return
        row = SPELLINGS.get(op)
        if row is None:
            self.refuse(NOT_EXPORTED.get(op) or STRUCTURAL.get(op) or "has no ONNX row")
        if node.regions:
            self.refuse("holds regions")
        self.check_keywords(node, row)
        operands = [self.values[o.id] for o in node.operands]
        if operands and all(isinstance(v, Static) for v in operands) and node.opdef.pure and \
                not node.opdef.effect and op != "note":
            try:   # computed now, once: its operands are the same at every call
                value = value_of(node, [v.value for v in operands])
            except Exception as e:
                self.refuse(f"cannot be computed when the file is written ({type(e).__name__}: {e})")
            self.values[node.id] = Static(value)
            return
        try:
            result = row.build(self, node)
        except OnnxRefusal as e:
            self.refuse(str(e))
        if result is None:
            return
        if isinstance(result, Static):
            self.values[node.id] = result
            return
        self.values[node.id] = result
        dtype, shape = dtype_of(node.type), shape_of(node.type)
        if dtype is not None:
            self.dtypes[result] = dtype
            if shape is not None and result not in {i.name for i in self.inputs}:
                from onnx import helper
                self.value_info.append(helper.make_tensor_value_info(result, _elem(dtype), list(shape)))

    def check_keywords(self, node: Node, row) -> None:
        if "*" in row.keywords:
            return
        from ..graph.attrs import DESCRIPTIVE_ATTRS
        kw = node.attrs.get("kw", ())
        if "out" in kw:
            self.refuse("writes its result into an `out=` array; ONNX values are never written")
        extra = [k for k in node.attrs if k not in DESCRIPTIVE_ATTRS and k not in row.keywords]
        extra += [k for k in kw if k not in row.keywords]
        if extra:
            self.refuse(f"with `{extra[0]}=` is not written (its ONNX row takes "
                        f"{', '.join(sorted(row.keywords)) or 'no keywords'})")

    def refuse(self, reason: str):
        node = self.node
        span = node.span if node is not None else None
        if span is None and node is not None:
            span = next((u.span for u in node.graph.users(node) if u.span), None)
        raise CodegenError(f"cannot export {self.graph.name} to ONNX: `{node.op}` {reason}", span or self.graph.span,
                           hint="export to graphjit's own format (file_format=\"GJIR\") keeps every op")

    # --- the builder interface the rows use ------------------------------------------------------
    @property
    def out(self) -> np.dtype:
        dtype = dtype_of(self.node.type)
        if isinstance(self.node.type, UnionType):
            raise OnnxRefusal(f"gives a {self.node.type}: which one depends on the values, and an ONNX value has one "
                              "type")
        if dtype is None:
            raise OnnxRefusal(f"gives a {self.node.type}, not an array or a number")
        return dtype

    @property
    def out_shape(self) -> tuple:
        shape = shape_of(self.node.type)
        if shape is None:
            raise OnnxRefusal(f"gives a {self.node.type}, whose shape is not known")
        return shape

    def shape(self, k: int) -> tuple:
        value = self.values[self.node.operands[k].id]
        if isinstance(value, Static):
            return np.shape(value.value)
        shape = shape_of(self.node.operands[k].type)
        if shape is None:
            raise OnnxRefusal(f"needs the shape of operand {k}, which is not known")
        return shape

    def in_dtype(self, k: int) -> Optional[np.dtype]:
        """Operand k's dtype; None for a Python number (weak in NumPy's promotion)."""
        operand = self.node.operands[k]
        value = self.values[operand.id]
        if isinstance(value, Static):
            return np.asarray(value.value).dtype if isinstance(value.value, (np.ndarray, np.generic)) else None
        return np.dtype(operand.type.dtype) if isinstance(operand.type, ArrayType) and operand.type.dtype else None

    def float_of(self, k: int) -> np.dtype:
        dtype = self.in_dtype(k)
        return dtype if dtype is not None and dtype.kind == "f" else np.dtype(np.float64)

    def common_dtype(self) -> np.dtype:
        """The dtype NumPy compares the operands in (NEP 50: Python numbers are weak)."""
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
                raise OnnxRefusal(f"operand {k} is a {operand.type}")
        return np.result_type(*parts)

    def is_static(self, k: int) -> bool:
        return isinstance(self.values[self.node.operands[k].id], Static)

    def static(self, k: int) -> Any:
        value = self.values[self.node.operands[k].id]
        if not isinstance(value, Static):
            raise OnnxRefusal(f"needs operand {k} as a compile-time value, and it is computed at run time")
        return value.value

    def static_result(self, value: Any) -> Static:
        return Static(value)

    def evaluate(self, first: Any) -> Any:
        """The node's value with `first` as operand 0 and the other operands' compile-time values."""
        rest = [self.static(k) for k in range(1, len(self.node.operands))]
        return value_of(self.node, [first, *rest])

    def x(self, k: int, dtype=None) -> str:
        return self.x_of(self.node.operands[k], dtype)

    def x_of(self, operand: Node, dtype=None) -> str:
        value = self.values[operand.id]
        if isinstance(value, tuple):
            raise OnnxRefusal("takes a tuple where an array is needed")
        return self.materialize(value, None if dtype is None else np.dtype(dtype))

    def materialize(self, value, dtype: Optional[np.dtype]) -> str:
        if isinstance(value, Static):
            array = np.asarray(value.value) if dtype is None else _static_array(value.value, dtype)
            if array.dtype.kind not in "biuf":
                raise OnnxRefusal(f"uses a compile-time {type(value.value).__name__} as an array")
            return self.const(array)
        return value if dtype is None else self.cast(value, dtype)

    def cast(self, name: str, dtype) -> str:
        dtype = np.dtype(dtype)
        if self.dtypes.get(name) == dtype:
            return name
        result = self.op("Cast", name, to=_elem(dtype))
        self.dtypes[result] = dtype
        return result

    def const(self, array, hint: str = "const") -> str:
        from onnx import numpy_helper
        array = np.asarray(array)
        if array.dtype.kind not in "biuf":
            raise OnnxRefusal(f"uses a compile-time {array.dtype} array")
        name = self.fresh(hint)
        self.initializers.append(numpy_helper.from_array(np.array(array, order="C"), name))
        self.dtypes[name] = array.dtype
        return name

    def op(self, op_type: str, *inputs: str, **attrs) -> str:
        from onnx import helper
        name = self.fresh(_safe(self.node.name or self.node.op) if self.node is not None else op_type.lower())
        made = helper.make_node(op_type, list(inputs), [name], **attrs)
        if self.node is not None and self.node.span is not None:
            made.doc_string = str(self.node.span)
        self.nodes.append(made)
        return name

    def fresh(self, hint: str) -> str:
        base = _safe(hint)
        name, k = base, 1
        while name in self.taken:
            k += 1
            name = f"{base}_{k}"
        self.taken.add(name)
        return name


def _static_array(value, dtype: np.dtype) -> np.ndarray:
    """A compile-time value as the dtype a use needs (NumPy's cast: `x * 2` on float32 uses 2.0f)."""
    array = np.asarray(value)
    if array.dtype.kind not in "biuf" and not isinstance(value, (bool, int, float)):
        raise OnnxRefusal(f"uses a compile-time {type(value).__name__} as an array")
    with np.errstate(all="ignore"):
        return array.astype(dtype)


def _elem(dtype) -> int:
    from onnx import helper
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
