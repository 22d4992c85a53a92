"""Write an optimized graph, with its weights, as an ONNX model (the `onnx` package, imported here only).

`to_onnx(graph, weights)` walks the graph in program order and writes each node as its row of the
ONNX column says (graph/onnx_ops.py): array arguments become the model's inputs, weights become
initializers, compile-time values become constants in the dtype each use needs, a returned tuple
becomes several outputs. Every value is declared with the type the graph gives it, and the model is
checked with ONNX's own full check (its shape and type inference must agree with every declaration),
so a row that computed another dtype or shape than NumPy's is an error, not a different model.

Writes into arrays the graph made become new values (backends/onnx_writes.py says when that is
NumPy's meaning); branches and loops become If and Loop subgraphs, an array a region writes carried
out as a value. An op with no row, or a form of one the file cannot hold, is a `CodegenError`
naming the op, why, and the user's source line.
"""

from __future__ import annotations


import contextlib
from typing import Any, Optional

import numpy as np

from ..graph.diagnostics import CodegenError
from ..graph.evaluate import value_of
from ..graph.ir import Graph, Node
from ..graph.onnx_ops import NOT_EXPORTED, OPSET, SPELLINGS, STRUCTURAL, OnnxRefusal
from ..graph.spans import source_place
from ..graph.types import ArrayType, ScalarType, TupleType, UnionType
from .onnx_writes import alias_group, check_rebindable, region_writes

IR_VERSION = 8              # the oldest IR version opset 18 allows: readable by the most runtimes
_SCALAR_DTYPES = {"float": np.dtype(np.float64), "int": np.dtype(np.int64), "bool": np.dtype(np.bool_)}
_WEAK_SAMPLES = {"float": 0.0, "int": 0, "bool": False}
_DEAD = (np.dtype(np.int64), ())          # how a region's yielded value nothing reads is carried
# dtypes onnxruntime's CPU Where cannot select, and one it can that holds each exactly
_WHERE_CARRIERS = {"bool": np.uint8, "int16": np.int32, "uint16": np.int32, "uint64": np.int64}


class Static:
    """A compile-time value: written as a constant where an ONNX operator needs it."""

    def __init__(self, value: Any):
        self.value = value


def to_onnx(graph: Graph, weights: dict, producer_version: str = "") -> bytes:
    """The serialized ONNX model computing `graph`; `weights` maps each param node's id to its array.

    Raises:
        CodegenError: a node has no faithful ONNX form (names the op, the reason, the source line).
    """
    try:
        import onnx
    except ImportError:
        raise CodegenError(f"cannot export {graph.name} to ONNX: the onnx package is not installed "
                           "(pip install onnx, or graphjit[onnx])", graph.span) from None
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
    except Exception as e:   # ONNX's checker raises its own classes; any is a writer's bug, said plainly
        reason = " ".join(str(e).split())[:300]
        raise CodegenError(f"cannot export {graph.name} to ONNX: ONNX's checker rejects the model graphjit wrote "
                           f"(a graphjit bug, please report it): {type(e).__name__}: {reason}", graph.span) from None
    try:
        return model.SerializeToString()
    except ValueError as e:
        raise CodegenError(f"cannot export {graph.name} to ONNX: {e} (a model above 2 GiB needs ONNX's "
                           "external data files, which graphjit does not write)", graph.span) from None


def dtype_of(t) -> Optional[np.dtype]:
    """The NumPy dtype of a value of graph type `t` in the ONNX file (Python numbers: 64-bit). A union
    whose members are one ONNX value (`f64[]|float`: a float64 either way) has that dtype."""
    if isinstance(t, UnionType):
        kinds = {(dtype_of(m), shape_of(m)) for m in t.members}
        return next(iter(kinds))[0] if len(kinds) == 1 else None
    if isinstance(t, ArrayType) and t.dtype is not None:
        return np.dtype(t.dtype)
    if isinstance(t, ScalarType):
        return _SCALAR_DTYPES.get(t.kind)
    return None


def shape_of(t) -> Optional[tuple]:
    if isinstance(t, UnionType):
        shapes = {shape_of(m) for m in t.members}
        return next(iter(shapes)) if len(shapes) == 1 and dtype_of(t) is not None else None
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
        self.carried_writes: set[int] = set()   # region arguments whose writes the If/Loop carries out
        self.out_override: Optional[np.dtype] = None

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
            results.extend(self.flatten_node(out))
        for k, (value, t) in enumerate(results):
            name = self.fresh("output" if len(results) == 1 else f"output{k}")
            dtype = dtype_of(t) if t is not None else None
            try:
                source = self.materialize(value, dtype)
            except OnnxRefusal:
                what = type(value.value).__name__ if isinstance(value, Static) else str(t)
                raise CodegenError(f"cannot export {g.name} to ONNX: it returns a {what} (output {k}); an ONNX "
                                   "output is an array or a number", g.span) from None
            self.nodes.append(helper.make_node("Identity", [source], [name]))
            dtype = dtype or self.dtypes.get(source)
            shape = shape_of(t) if t is not None else None
            if isinstance(value, Static):
                shape = np.shape(value.value)
            self.outputs.append(helper.make_tensor_value_info(name, _elem(dtype), list(shape) if shape is not None
                                                              else None))

    def flatten_node(self, node: Node) -> list:
        """(value, graph type) pairs of a returned node: a tuple built here is its items, each with its own
        type (the tuple's type may be a wider join of them)."""
        if node.op == "tuple":
            return [pair for item in node.operands for pair in self.flatten_node(item)]
        return self.flatten(self.values.get(node.id), node.type)

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
        # A write computed now happens once: right in the function's own body, not in a branch (which may
        # not run) or a loop (which may run it again after reads)
        once = not node.written_positions or node.graph.parent is None
        if operands and all(isinstance(v, Static) for v in operands) and node.opdef.pure and \
                not node.opdef.effect and not node.regions and op != "note" and once:
            try:   # computed now, once: its operands are the same at every call
                value = value_of(node, [v.value for v in operands])
            except Exception as e:
                self.refuse(f"cannot be computed when the file is written ({type(e).__name__}: {e})")
            if op in ("empty", "empty_like"):   # any contents are right; zeros make the file reproducible
                value = np.zeros_like(value)
            self.values[node.id] = Static(value)
            return
        row = SPELLINGS.get(op)
        if row is None:
            self.refuse(NOT_EXPORTED.get(op) or STRUCTURAL.get(op) or "has no ONNX row")
        if node.written_positions and op not in ("setitem", "inplace"):
            self.refuse(f"writes an array in place (its operand {node.written_positions[0]}); ONNX values are never "
                        "written after they are made")
        self.check_keywords(node, row)
        try:
            result = row.build(self, node)
        except OnnxRefusal as e:
            self.refuse(str(e))
        if result is None:
            return
        if isinstance(result, (Static, tuple)):
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
        if self.out_override is not None:
            return self.out_override
        dtype = dtype_of(self.node.type)
        if isinstance(self.node.type, UnionType) and dtype is None:
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

    @contextlib.contextmanager
    def computing(self, dtype):
        """Rows compute in `dtype` instead of the node's (an in-place operator computes in NumPy's dtype,
        then casts to the array's)."""
        self.out_override = np.dtype(dtype)
        try:
            yield
        finally:
            self.out_override = None

    def probe(self, k: int):
        """A stand-in for operand k with its dtype (a Python number for a Python number): NumPy's result
        dtype of an op on probes is the dtype it computes in."""
        value = self.values[self.node.operands[k].id]
        dtype = self.in_dtype(k)
        if dtype is not None:
            return np.zeros(1, dtype)
        if isinstance(value, Static):
            return value.value
        kind = getattr(self.node.operands[k].type, "kind", None)
        if kind in _WEAK_SAMPLES:
            return _WEAK_SAMPLES[kind]
        raise OnnxRefusal(f"operand {k} is a {self.node.operands[k].type}")

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
        known = self.dtypes.get(name)
        if known is not None and known == dtype:    # (not `get(name) == dtype`: np.dtype(None) is float64)
            return name
        result = self.op("Cast", name, to=_elem(dtype))
        self.dtypes[result] = dtype
        return result

    def const(self, array, hint: str = "const") -> str:
        from onnx import numpy_helper
        array = np.asarray(array)
        if array.dtype.kind not in "biuf":
            raise OnnxRefusal(f"uses a compile-time {array.dtype} array")
        flat = np.ascontiguousarray(array).reshape(-1)
        if array.size >= 64 and hint == "const" and \
                (flat.view(np.uint8).reshape(array.size, -1) == flat[:1].view(np.uint8)).all():   # bit for bit
            # one value repeated (`np.zeros(shape)`): the value and the shape, not every element
            expanded = self.op("Expand", self.const(flat[:1].reshape(())),
                               self.const(np.array(array.shape, np.int64)))
            self.dtypes[expanded] = array.dtype
            return expanded
        name = self.fresh(hint)
        self.initializers.append(numpy_helper.from_array(np.array(array, order="C"), name))
        self.dtypes[name] = array.dtype
        return name

    def op(self, op_type: str, *inputs: str, **attrs) -> str:
        from onnx import helper
        if op_type == "Where":
            dtype = self.dtypes.get(inputs[1]) or self.dtypes.get(inputs[2])
            carrier = _WHERE_CARRIERS.get(np.dtype(dtype).name) if dtype is not None else None
            if carrier is not None:   # onnxruntime's Where has no kernel for it: select in a dtype it has
                chosen = self.op("Where", inputs[0], self.cast(inputs[1], carrier), self.cast(inputs[2], carrier))
                self.dtypes[chosen] = np.dtype(carrier)
                return self.cast(chosen, dtype)
        name = self.fresh(_safe(self.node.name or self.node.op) if self.node is not None else op_type.lower())
        made = helper.make_node(op_type, list(inputs), [name], **attrs)
        if self.node is not None and self.node.span is not None:
            made.doc_string = source_place(self.node.span)
        self.nodes.append(made)
        return name

    # --- regions: `if` as ONNX If, `for_range` and `while` as ONNX Loop ---------------------------------
    def region_types(self, node: Node) -> list:
        """The (dtype, shape or None) of each value the region node yields; None for a value nothing reads
        after it (at O0, the loop variable carried out of a loop), which is carried as a dummy 0."""
        items = node.type.items if isinstance(node.type, TupleType) else None
        if items is None:
            raise OnnxRefusal(f"yields a {node.type}, not a tuple of arrays and numbers")
        graph = node.graph
        types = []
        for k, t in enumerate(items):
            dtype = dtype_of(t)
            if dtype is None:
                readers = [u for u in graph.users(node) if u.op != "tuple_get" or u.attrs["index"] == k]
                offset = {"for_range": 1, "while": 0}.get(node.op)    # carried k is region argument offset + k
                inside = [] if offset is None else [r.users(r.args[offset + k]) for r in node.regions
                                                    if offset + k < len(r.args)]
                if not any(u.op != "tuple_get" or graph.users(u) or graph.is_output(u) for u in readers) and \
                        not graph.is_output(node) and not any(inside):
                    types.append(None)
                    continue
            if isinstance(t, UnionType) and dtype is None:
                raise OnnxRefusal(f"gives value {k} as a {t}: which one depends on the values, and an ONNX value "
                                  "has one type")
            if dtype is None:
                raise OnnxRefusal(f"gives value {k} as a {t}, not an array or a number")
            types.append((dtype, shape_of(t)))
        return types

    def inline(self, region: Graph, bindings: list) -> list:
        """Write the region's nodes into the current node list; the values it yields."""
        for arg, value in zip(region.args, bindings):
            self.values[arg.id] = value
            if isinstance(value, str) and dtype_of(arg.type) is not None:
                self.dtypes.setdefault(value, dtype_of(arg.type))
        node = self.node
        for inner in region.nodes:
            self.write(inner)
        self.node = node
        return [self.values[out.id] for out in region.outputs]

    def subgraph(self, region: Graph, bindings: list, types: list, inputs=(), before=None, after=None,
                 written=()):
        """An ONNX subgraph computing the region (outer values are read by name, as ONNX allows); its
        outputs: `after(outs)`, the region's own, then the final value of each array of `written`
        (operands of the region node) the region writes."""
        from onnx import helper
        saved = self.nodes, self.value_info
        self.nodes, self.value_info = [], []
        try:
            head = before() if before else []
            outs = self.inline(region, head + bindings)
            tail = after(outs) if after else []
            finals = [self.values[arg.id] for operand in written for arg, o in self.region_args(region)
                      if o is operand]
            declared = []
            for k, (value, kind) in enumerate(zip(tail + outs + finals, types)):
                dtype, shape = kind or _DEAD
                source = self.materialize(Static(0) if kind is None else value, dtype)
                name = self.fresh(f"{region.label or 'region'}_out{k}")
                self.nodes.append(helper.make_node("Identity", [source], [name]))
                declared.append(helper.make_tensor_value_info(name, _elem(dtype), list(shape) if shape is not None
                                                              else None))
            return helper.make_graph(self.nodes, self.fresh(region.label or "region"), list(inputs), declared,
                                     value_info=self.value_info)
        finally:
            self.nodes, self.value_info = saved

    def check_rebindable(self, target: Node, write: Node) -> None:
        check_rebindable(target, write, self.carried_writes)

    def rebind(self, target: Node, name: str, dtype) -> None:
        """Later reads of `target` (and of the `a op= b` results that are the same array) read `name`."""
        for node in alias_group(target):
            self.values[node.id] = name
        self.dtypes[name] = np.dtype(dtype)

    def region_args(self, region: Graph) -> list:
        """(region argument, the operand of the region node it receives)."""
        from ..graph.alias import arg_mapping
        return list(zip(region.args, arg_mapping(region.parent, region)))

    def carry_writes(self, node: Node) -> tuple:
        """The arrays the regions of `node` write: (operands, their (dtype, shape)), each checked as the
        enclosing graph's write; their region arguments may then be written."""
        written = region_writes(node)
        for operand in written:
            self.check_rebindable(operand, node)
            for region in node.regions:
                for arg, o in self.region_args(region):
                    if o is operand:
                        self.carried_writes.add(arg.id)
        return written, [(dtype_of(o.type), shape_of(o.type)) for o in written]

    def rebind_all(self, written: list, names: list) -> None:
        for operand, name in zip(written, names):
            self.rebind(operand, name, dtype_of(operand.type))

    def condition(self, value) -> str:
        """Python's truth of a one-element value, as a bool."""
        name = self.materialize(value, None)
        return self.cast(name, np.bool_)

    def if_(self, node: Node) -> tuple:
        from onnx import helper
        self.check_scalar(0, "the condition of `if`")
        cond = self.condition(self.values[node.operands[0].id])
        types = self.region_types(node)
        written, written_types = self.carry_writes(node)
        outer = [self.values[o.id] for o in node.operands[1:]]
        regions = {r.label: r for r in node.regions}
        branches = {label: self.subgraph(regions[label], outer, types + written_types, written=written)
                    for label in ("then", "else")}
        outs = [self.fresh(f"{_safe(node.name or 'if')}_{k}") for k in range(len(types) + len(written))]
        self.nodes.append(helper.make_node("If", [cond], outs, then_branch=branches["then"],
                                           else_branch=branches["else"]))
        for name, kind in zip(outs, types + written_types):
            self.dtypes[name] = (kind or _DEAD)[0]
        self.rebind_all(written, outs[len(types):])
        return tuple(outs[:len(types)])

    def check_scalar(self, k: int, what: str) -> None:
        t = self.node.operands[k].type
        shape = shape_of(t)
        if shape is None or int(np.prod(shape)) != 1:
            raise OnnxRefusal(f"needs {what} to hold one value (it is {t})")

    def loop_inputs(self, types: list) -> tuple:
        from onnx import helper, TensorProto
        iteration, cond_in = self.fresh("iteration"), self.fresh("cond_in")
        carried = [self.fresh("carried") for _ in types]
        inputs = [helper.make_tensor_value_info(iteration, TensorProto.INT64, []),
                  helper.make_tensor_value_info(cond_in, TensorProto.BOOL, [])]
        for name, kind in zip(carried, types):
            dtype, shape = kind or _DEAD
            inputs.append(helper.make_tensor_value_info(name, _elem(dtype), list(shape) if shape is not None else None))
            self.dtypes[name] = dtype
        self.dtypes[iteration], self.dtypes[cond_in] = np.dtype(np.int64), np.dtype(np.bool_)
        return iteration, cond_in, carried, inputs

    def loop(self, node: Node, trip, cond, initial: list, body, types: list, written: list) -> tuple:
        """The Loop node; `types` and `initial` include the written arrays, carried after the loop's own."""
        from onnx import helper
        initial = initial + [self.values[o.id] for o in written]
        outs = [self.fresh(f"{_safe(node.name or node.op)}_{k}") for k in range(len(types))]
        initial = [self.materialize(Static(0) if kind is None else v, (kind or _DEAD)[0])
                   for v, kind in zip(initial, types)]
        self.nodes.append(helper.make_node("Loop", [trip, cond, *initial], outs, body=body))
        for name, kind in zip(outs, types):
            self.dtypes[name] = (kind or _DEAD)[0]
        own = len(types) - len(written)
        self.rebind_all(written, outs[own:])
        return tuple(outs[:own])

    def for_range(self, node: Node) -> tuple:
        """`for i in range(start, stop, step)`: a Loop of len(range(...)) iterations, i = start + k * step."""
        n = node.attrs.get("carried", 0)
        if not self.is_static(2) or not isinstance(self.static(2), (int, np.integer)) or self.static(2) == 0:
            raise OnnxRefusal("needs the step of `range` as a compile-time integer other than 0")
        step = int(self.static(2))
        types = self.region_types(node)
        if self.is_static(0) and self.is_static(1):
            trip = self.const(np.array(len(range(int(self.static(0)), int(self.static(1)), step)), np.int64))
        else:
            start, stop = self.x(0, np.int64), self.x(1, np.int64)
            span = self.op("Sub", stop, start) if step > 0 else self.op("Sub", start, stop)
            ahead = self.op("Add", span, self.const(np.array(abs(step) - 1, np.int64)))
            trip = self.op("Max", self.op("Div", ahead, self.const(np.array(abs(step), np.int64))),
                           self.const(np.array(0, np.int64)))   # a negative span truncates to <= 0: no iteration
        values = [self.values[o.id] for o in node.operands]
        written, written_types = self.carry_writes(node)
        types = types + written_types
        carried_init = values[3:3 + n]
        iteration, cond_in, carried, inputs = self.loop_inputs(types)
        captured = [carried[len(types) - len(written) + written.index(o)] if o in written else v
                    for o, v in zip(node.operands[3 + n:], values[3 + n:])]
        start_value = values[0]

        def index():
            k = self.op("Mul", iteration, self.const(np.array(step, np.int64)))
            i = self.op("Add", k, self.materialize(start_value, np.dtype(np.int64)))
            self.dtypes[i] = np.dtype(np.int64)
            return [i]

        def keep_going(outs):
            return [cond_in]

        body = self.subgraph(node.regions[0], carried[:n] + captured, [(np.dtype(np.bool_), ())] + types, inputs,
                             before=index, after=keep_going, written=written)
        return self.loop(node, trip, "", carried_init, body, types, written)

    def while_(self, node: Node) -> tuple:
        """`while cond:`: the condition on the initial values, then a Loop whose body ends with it again."""
        n = node.attrs.get("carried", 0)
        regions = {r.label: r for r in node.regions}
        types = self.region_types(node)
        values = [self.values[o.id] for o in node.operands]
        first = self.inline(regions["cond"], values)
        self.node = node
        cond = self.condition(first[0])
        written, written_types = self.carry_writes(node)
        types = types + written_types
        iteration, cond_in, carried, inputs = self.loop_inputs(types)
        captured = [carried[len(types) - len(written) + written.index(o)] if o in written else v
                    for o, v in zip(node.operands[n:], values[n:])]
        def again(outs):
            after_body = [self.values[arg.id] if o in written else v
                          for (arg, o), v in zip(self.region_args(regions["body"])[n:], captured)]
            test = self.inline(regions["cond"], list(outs) + after_body)
            return [self.condition(test[0])]

        body = self.subgraph(regions["body"], carried[:n] + captured, [(np.dtype(np.bool_), ())] + types, inputs,
                             after=again, written=written)
        return self.loop(node, "", cond, values[:n], body, types, written)

    def op_n(self, op_type: str, n: int, *inputs: str, **attrs) -> list:
        """An operator with `n` outputs (TopK: values and indices)."""
        from onnx import helper
        base = _safe(self.node.name or self.node.op) if self.node is not None else op_type.lower()
        names = [self.fresh(f"{base}_{k}") for k in range(n)]
        made = helper.make_node(op_type, list(inputs), names, **attrs)
        if self.node is not None and self.node.span is not None:
            made.doc_string = source_place(self.node.span)
        self.nodes.append(made)
        return names

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
