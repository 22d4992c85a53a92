"""Export a compiled graph with its weights to one file, and load it back without the source.

    graphjit.export(model, x, file="model.gjir")     # the optimized graph + parameter values
    run = graphjit.load("model.gjir")                # no model class, no source file needed
    run(x)                                           # same result as model(x)

A `.gjir` file is a zip archive:

    manifest.json   format, versions, jit_level, inputs (name and type), static arguments,
                    parameters (name, dtype, shape), output type, and the SHA-256 of the other two
    graph.txt       the optimized graph in its text form (docs/graph-text.md); every parameter is
                    read from `bound['name']`
    params.npz      the parameter values (NumPy's format, loaded with allow_pickle=False)

Loading never runs code from the file, imports nothing it names and writes nothing (docs/security.md):
the members are read with capped sizes (`export_reader.py`); the graph text is read by `graph.parse`,
which builds only ops from the op table and only literal values (via `ast`), within size and depth
limits; every name a node holds (`call`, `raise`, `isinstance`) must be in a closed table and every
`format` template a plain one (`graph/loadable.py`), and every type fit in what the archive's inputs
and parameters justify; and the loaded graph runs in the bounded interpreter
(`backends/bounded_interpreter.py`), which sizes what a node makes before it runs: no code is
generated or compiled from the file. A file that fails any of these checks raises one
`GraphjitError` naming the file and the place.

Only importing this module is cheap: zipfile, json and the graph packages load on first use.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any, Optional

FORMAT = "graphjit-gjir"
FORMAT_VERSION = 1


# file_format -> the suffix MindSpore adds to a file_name without it
FORMATS = {"GJIR": ".gjir", "ONNX": ".onnx", "MINDIR": ".mindir", "AIR": ".air"}
WRITTEN = ("GJIR", "ONNX", "MINDIR")


def export(fn_or_cell: Any, *example_inputs: Any, file_name: Optional[str] = None, file_format: Optional[str] = None,
           file: Optional[str] = None, jit_level: Optional[str] = None, **kwargs: Any) -> str:
    """Compile `fn_or_cell` for `example_inputs` and write its optimized graph and weights to a file.

    MindSpore's signature: `export(net, *inputs, file_name="model", file_format="ONNX")` writes
    `model.onnx` (the format's suffix is added when `file_name` lacks it). Formats: "GJIR" (graphjit's
    own, read back by `load`, every op), "ONNX" (docs/onnx.md: the model in inference mode, as MindSpore
    exports it), "MINDIR" (docs/mindir.md: MindSpore's own primitives, loaded by `mindspore.load`).
    "AIR" is refused with an error naming these.

    Args:
        fn_or_cell: a function, a jitted function, a method, or an `nn.Cell` (its `construct`).
        example_inputs: the arrays (and other arguments) the graph is specialized to.
        file_name: where to write; `file` (graphjit's older keyword) is used as given, as GJIR.
        file_format: "GJIR", "ONNX" or "MINDIR"; by default from `file_name`'s suffix, else "GJIR".
        jit_level: "O0", "O1" or "O2"; by default the level `jit` would use for this call.

    Returns:
        The path written.

    Raises:
        GraphjitError: the graph holds something the format cannot hold (a compile-time object, a
            fallback; for ONNX an op without an ONNX form), naming the user's source line.
    """
    from .graph.diagnostics import GraphjitError

    fmt, path = _format_and_path(file_name, file_format, file)
    if kwargs:
        raise TypeError(f"export() does not take {', '.join(sorted(kwargs))}: graphjit writes no encrypted, "
                        "quantized or dataset-carrying files")
    if fmt not in WRITTEN:
        raise GraphjitError(f"cannot export to {fmt}: graphjit does not write Ascend's AIR format; it writes "
                            f"{', '.join(WRITTEN[:-1])} and {WRITTEN[-1]} (file_format=\"MINDIR\" for MindSpore, "
                            "\"ONNX\" for other runtimes, \"GJIR\" for graphjit.load)")
    switched = fmt in ("ONNX", "MINDIR") and getattr(fn_or_cell, "training", False) is True and \
        hasattr(fn_or_cell, "set_train")
    if switched:   # as MindSpore does: ONNX is for inference, so the network is exported in inference mode
        fn_or_cell.set_train(False)
    try:
        return _export(fn_or_cell, example_inputs, path, fmt, jit_level)
    finally:
        if switched:
            fn_or_cell.set_train(True)


def _format_and_path(file_name: Optional[str], file_format: Optional[str], file: Optional[str]) -> tuple:
    """(format, path) from MindSpore's keywords or graphjit's `file=`."""
    if file is not None and file_name is not None:
        raise TypeError("export() takes file_name or file, not both")
    if file_format is not None:
        if not isinstance(file_format, str) or file_format.upper() not in FORMATS:
            raise ValueError(f"file_format must be one of {', '.join(FORMATS)}, not {file_format!r}")
        fmt = file_format.upper()
    else:
        name = (file_name if file_name is not None else file or "").lower()
        fmt = next((f for f, suffix in FORMATS.items() if name.endswith(suffix)), "GJIR")
    if file is not None:
        return fmt, os.fspath(file)
    path = os.fspath(file_name) if file_name is not None else "model"
    return fmt, path if path.endswith(FORMATS[fmt]) else path + FORMATS[fmt]


def _export(fn_or_cell: Any, example_inputs: tuple, file: str, fmt: str, jit_level: Optional[str]) -> str:
    import io
    import json

    import numpy as np

    from . import __version__
    from .graph.diagnostics import GraphjitError
    from .graph.ir import literal_const
    from .graph.literals import format_literal, is_literal
    from .graph.parser import parse
    from .graph.passes.manager import pipeline_for, run_pipeline
    from .graph.paths import Path, Roots, parse_path
    from .graph.types import ArrayType
    from .graph.autodiff.pending import prepare as prepare_gradients
    from .transpiler.lower import lower_function

    fn, args, level = _target(fn_or_cell, example_inputs, jit_level)
    try:
        lowered = lower_function(fn, args, {})
        graph = lowered.graph
        prepare_gradients(graph, level)
        # ONNX: without the NumPy-only passes (buffers kept between calls, `out=`), as for other namespaces
        run_pipeline(graph, level, pipeline=pipeline_for(level, False, numpy=fmt == "GJIR"))
    except GraphjitError as e:
        raise e.with_traceback(None) from None

    import inspect
    bound = inspect.signature(fn).bind(*args)
    bound.apply_defaults()
    args = tuple(bound.arguments.values())   # with defaults, one per graph argument
    roots = Roots(dict(zip(lowered.arg_names, args)), lowered.globals, lowered.closure, lowered.consts)

    if fmt in ("ONNX", "MINDIR"):
        weights = {param.id: parse_path(param.attrs["path"]).resolve(roots) for param in graph.params}
        try:
            if fmt == "ONNX":
                from .backends.emit_onnx import to_onnx
                data = to_onnx(graph, weights, producer_version=__version__)
            else:
                from .backends.emit_mindir import to_mindir
                data = to_mindir(graph, weights, producer_version=__version__)
        except GraphjitError as e:
            raise e.with_traceback(None) from None
        _write_bytes(file, data, f".{fmt.lower()}-")
        return file

    for node in graph.all_nodes():
        if node.op in PYTHON_OBJECT_OPS:
            what = "a fallback block (statements run by the Python interpreter)" if node.op == "fallback" \
                else f"a Python-object effect (`{node.op}`)"
            raise GraphjitError(f"cannot export {graph.name}: the graph holds {what}, which only the original "
                                "source can run", node.span,
                                hint="export needs a graph that compiles at jit_syntax_level=STRICT")
        if node.op == "const" and not literal_const(node):
            span = node.span or next((u.span for u in node.graph.users(node) if u.span), None)
            raise GraphjitError(f"cannot export {graph.name}: the graph holds a compile-time "
                                f"{type(node.value).__name__} object, which has no text form", span,
                                hint="compute it from the inputs inside the function, or make it a parameter")
        if node.op == "call":
            _check_call(node)

    params: dict[str, np.ndarray] = {}
    for param in graph.params:
        value = parse_path(param.attrs["path"]).resolve(roots)
        if not isinstance(value, (np.ndarray, np.generic)):
            raise GraphjitError(f"cannot export {graph.name}: parameter {param.attrs['path']} is a "
                                f"{type(value).__name__}, not an array", graph.span)
        key = _unique(param.name or "param", params)
        params[key] = np.asarray(value)
        param.attrs["path"] = str(Path("bound", key))

    inputs, statics = [], []
    for arg, value in zip(graph.args, args):
        if isinstance(arg.type, ArrayType):
            inputs.append({"name": arg.name, "type": str(arg.type)})
            continue
        if graph.users(arg):
            raise GraphjitError(f"cannot export {graph.name}: argument `{arg.name}` ({type(value).__name__}) "
                                "is used as an object by the graph", arg.span or graph.span)
        statics.append({"name": arg.name, "index": arg.attrs["index"],
                        "value": format_literal(value) if is_literal(value) else None})

    text = str(graph)
    if str(parse(text)) != text:  # pragma: no cover - the printer and parser are tested inverses
        raise GraphjitError(f"cannot export {graph.name}: its text form does not read back", graph.span)
    buffer = io.BytesIO()
    np.savez(buffer, **params)
    payload = {"graph.txt": text.encode("utf-8"), "params.npz": buffer.getvalue()}
    manifest = {
        "format": FORMAT, "version": FORMAT_VERSION, "graphjit": __version__, "numpy": np.__version__,
        "name": graph.name, "jit_level": level, "inputs": inputs, "static_args": statics,
        "params": [{"name": k, "dtype": str(v.dtype), "shape": list(v.shape)} for k, v in params.items()],
        "output": str(graph.outputs[0].type) if len(graph.outputs) == 1 else None,
        "sha256": {name: hashlib.sha256(data).hexdigest() for name, data in payload.items()},
    }
    payload["manifest.json"] = json.dumps(manifest, indent=2).encode("utf-8")
    _write_zip(file, payload)
    return file


def load(file: str, **kwargs) -> "LoadedGraph":
    """Read a `.gjir` archive written by `export`; returns a callable that runs the graph.

    A `.onnx` file is run by onnxruntime instead (backends/onnx_run.py); a `.mindir` file is read as
    graph ops and run by the interpreter (backends/mindir_run.py).

    Raises:
        GraphjitError: the file is not a graphjit archive, was modified (checksum mismatch), is
            bigger than its declarations allow, or holds anything but op-table ops, literals and
            names from the closed tables of `graph/loadable.py` (docs/security.md).
    """
    _load_format(file, kwargs)
    if os.fspath(file).lower().endswith(".onnx"):
        from .backends.onnx_run import load_onnx
        return load_onnx(file)
    if os.fspath(file).lower().endswith(".mindir"):
        from .backends.mindir_run import load_mindir
        return load_mindir(file)
    from .export_reader import read_archive
    manifest, text, params = read_archive(file, FORMAT, FORMAT_VERSION)
    return LoadedGraph(file, manifest, text, params)


def _load_format(file, kwargs: dict) -> None:
    """Refuse what `load` does not read: MindSpore's decryption keywords."""
    if kwargs:
        raise TypeError(f"load() does not take {', '.join(sorted(kwargs))}: graphjit reads no encrypted files")


class LoadedGraph:
    """A graph read from a `.gjir` file, run by the interpreter; call it with the inputs."""

    def __init__(self, file: str, manifest: dict, text: str, params: dict):
        from .backends.bounded_interpreter import BoundedInterpreter
        from .graph.diagnostics import GraphjitError
        from .graph.loadable import array_bytes_limit
        from .graph.paths import Roots

        self.file = file
        self.manifest = manifest
        self.params = params
        lines: dict = {}
        try:
            inputs, statics, declared = _manifest_arguments(manifest)
            limit = array_bytes_limit(declared + sum(int(v.nbytes) for v in params.values()))
            self.graph = _parse_checked(text, lines, params, limit)
        except GraphjitError as e:
            # the place as text, not a span: rendering a span reads the file it names
            place = f"graph.txt:{e.span.line}: " if e.span is not None else ""
            message = e.message if len(e.message) <= 600 else e.message[:560] + " ... " + e.message[-30:]
            raise GraphjitError(f"cannot load {file}: {place}{message}").with_traceback(None) from None
        except (RecursionError, MemoryError) as e:
            raise GraphjitError(f"cannot load {file}: graph.txt is too deep or too big ({type(e).__name__})") from None
        except Exception as e:   # a backstop: every check above should have named the problem
            raise GraphjitError(f"cannot load {file}: malformed ({type(e).__name__}: {e})"[:500]) from None
        runtime = [a for a in self.graph.args if _is_array_type(a.type)]
        if [str(t) for t in inputs] != [str(a.type) for a in runtime] or \
                len(runtime) + len(statics) != len(self.graph.args) or \
                any(not 0 <= k < len(self.graph.args) or _is_array_type(self.graph.args[k].type) for k in statics):
            raise GraphjitError(f"cannot load {file}: manifest.json does not describe the graph's arguments")
        self.input_types = inputs
        self._statics = statics
        self._run = BoundedInterpreter(self.graph, Roots(bound=params), where=file, limit_bytes=limit,
                                       lines={k: f"graph.txt:{v}" for k, v in lines.items()})
        name = manifest.get("name", "graph")
        self.__name__ = name if isinstance(name, str) and len(name) < 200 else "graph"

    def __call__(self, *inputs):
        import numpy as np

        from .graph.diagnostics import GraphjitError
        if len(inputs) != len(self.input_types):
            raise GraphjitError(f"{self.__name__} takes {len(self.input_types)} input(s), got {len(inputs)}")
        for k, (value, t) in enumerate(zip(inputs, self.input_types)):
            shape = getattr(value, "shape", None)
            dtype = getattr(value, "dtype", None)
            if not isinstance(value, (np.ndarray, np.generic)) or np.dtype(dtype).name != t.dtype or \
                    (t.shape is not None and (len(shape) != len(t.shape) or
                                              any(d is not None and d != s for d, s in zip(t.shape, shape)))):
                got = f"{np.dtype(dtype).name}{list(shape)}" if isinstance(value, (np.ndarray, np.generic)) \
                    else type(value).__name__
                raise GraphjitError(f"{self.__name__}: input {k} must be an array of type {t} (the graph is "
                                    f"specialized to it), got {got}")
        args, it = [], iter(inputs)
        for k in range(len(self.graph.args)):
            args.append(self._statics[k] if k in self._statics else next(it))
        return self._run(*args)

    def __repr__(self) -> str:
        return f"<graphjit loaded graph {self.__name__} from {self.file}>"


def _is_array_type(t) -> bool:
    from .graph.types import ArrayType
    return isinstance(t, ArrayType)


def _manifest_arguments(manifest: dict):
    """(input types, {index: static value}, bytes the inputs declare) from manifest.json, checked."""
    import math

    import numpy as np

    from .graph.diagnostics import GraphjitError
    from .graph.literals import parse_literal
    from .graph.types import ArrayType, parse_type

    def malformed(what: str) -> GraphjitError:
        return GraphjitError(f"manifest.json is malformed ({what})")

    entries, static_entries = manifest.get("inputs"), manifest.get("static_args")
    if not isinstance(entries, list) or not isinstance(static_entries, list) or len(entries) + len(static_entries) > 10_000:
        raise malformed("`inputs` and `static_args` must be lists")
    inputs, declared = [], 0
    for item in entries:
        text = item.get("type") if isinstance(item, dict) else None
        if not isinstance(text, str) or len(text) > 1000:
            raise malformed(f"input type {text!r}")
        try:
            t = parse_type(text)
        except ValueError as e:
            raise malformed(str(e)) from None
        if not isinstance(t, ArrayType) or t.dtype is None or t.shape is None:
            raise malformed(f"input type {text!r} is not an array type")
        _check_type(t, None)
        declared += math.prod(d for d in t.shape if d is not None) * np.dtype(t.dtype).itemsize
        inputs.append(t)
    statics = {}
    for item in static_entries:
        index = item.get("index") if isinstance(item, dict) else None
        value = item.get("value") if isinstance(item, dict) else None
        if not isinstance(index, int) or isinstance(index, bool) or index in statics or \
                not (value is None or isinstance(value, str)):
            raise malformed(f"static argument {item!r}"[:200])
        try:
            statics[index] = parse_literal(value) if value is not None else None
        except ValueError as e:
            raise malformed(f"static argument {index}: {e}") from None
    return inputs, statics, declared


def _parse_checked(text: str, lines: dict, params: dict, limit: int):
    """The graph of graph.txt, verified and checked (`_check_loaded`); `lines` receives node lines."""
    from .graph.parser import parse
    from .graph.verifier import verify
    graph = parse(text, filename="graph.txt", positions=lines)
    verify(graph)
    _check_loaded(graph, params, limit, lines)
    return graph


# --- helpers -------------------------------------------------------------------------------------

def _target(fn_or_cell: Any, inputs: tuple, jit_level: Optional[str]):
    """(plain function, full argument tuple, level) for whatever the user passed."""
    import inspect

    from . import context as ctx
    from .api import BoundJitFunction, JitFunction

    config = None
    if isinstance(fn_or_cell, BoundJitFunction):
        config = fn_or_cell.jitted.config(fn_or_cell.obj)
        fn, args = fn_or_cell.jitted.__graphjit_fn__, (fn_or_cell.obj, *inputs)
    elif isinstance(fn_or_cell, JitFunction):
        fn, args = fn_or_cell.__graphjit_fn__, inputs
        config = fn_or_cell.config(inputs[0] if inputs else None)
    elif getattr(fn_or_cell, "__graphjit_cell__", False) and not isinstance(fn_or_cell, type):
        construct = type(fn_or_cell).construct
        jitted = construct if isinstance(construct, JitFunction) else None
        fn = jitted.__graphjit_fn__ if jitted else construct
        args = (fn_or_cell, *inputs)
        config = (jitted.config(fn_or_cell) if jitted else
                  getattr(fn_or_cell, "_jit_config", None) or ctx.get_context("jit_config"))
    elif inspect.ismethod(fn_or_cell):
        fn, args = fn_or_cell.__func__, (fn_or_cell.__self__, *inputs)
    elif callable(fn_or_cell):
        fn, args = fn_or_cell, inputs
    else:
        raise TypeError(f"export() needs a function or a Cell, not {type(fn_or_cell).__name__}")
    level = jit_level or (config or ctx.get_context("jit_config")).jit_level
    if level not in ctx.JIT_LEVELS:
        raise ValueError(f"jit_level must be one of {', '.join(ctx.JIT_LEVELS)}, not {level!r}")
    return getattr(fn, "__graphjit_fn__", fn), tuple(args), level


def _check_call(node) -> None:
    from .graph.callables import resolve_loadable
    from .graph.diagnostics import GraphjitError
    try:
        resolve_loadable(node.attrs.get("fn", ""))
    except GraphjitError as e:
        raise GraphjitError(e.message, node.span) from None


# Ops that run the user's Python or touch Python objects: never exported, refused when loaded.
PYTHON_OBJECT_OPS = frozenset({"fallback", "pycall", "setattr", "getattr", "load_global", "store_global"})


def _check_loaded(graph, params: dict, limit: Optional[int] = None, lines: Optional[dict] = None,
                  where: str = "graph.txt") -> None:
    """What `parse` alone does not promise: parameters are stored values, every name is in its closed
    table (`graph/loadable.py`), and every type and scratch buffer fits in `limit` bytes. Errors name
    the node's line of the graph text (`lines`, from `parse(positions=...)`)."""
    from .graph.diagnostics import GraphjitError
    try:
        _check_nodes(graph, params, limit)
    except _NodeError as e:
        line = (lines or {}).get(e.node.id) if e.node is not None else None
        place = f"{where}:{line}: " if line is not None else ""
        # the node's source location is the file's word, quoted as text: an error is never rendered
        # with an excerpt of a local file a graph names
        source = f" (exported from {e.span})" if e.span is not None else ""
        raise GraphjitError(place + e.message + source) from None


class _NodeError(Exception):
    def __init__(self, error, node):
        super().__init__(error.message)
        self.message, self.span, self.node = error.message, error.span, node


def _check_nodes(graph, params: dict, limit: Optional[int]) -> None:
    from .graph import loadable
    from .graph.diagnostics import GraphjitError
    from .graph.paths import parse_path
    from .graph.types import type_of_value
    limit = loadable.array_bytes_limit(0) if limit is None else limit
    for param in graph.params:
        try:
            path = parse_path(param.attrs["path"])
        except ValueError as e:
            raise GraphjitError(str(e)) from None
        if path.root_kind != "bound" or path.steps or path.root not in params:
            raise GraphjitError(f"parameter {param.attrs['path']} is not one of the stored values")
        stored = type_of_value(params[path.root])
        if stored != param.type:
            raise GraphjitError(f"parameter {param.attrs['path']} is declared {param.type} but stored as {stored}")
    scratch = 0
    for region in _graphs(graph):
        for arg in region.args:
            _check_type(arg.type, limit, arg.span)
    for node in graph.all_nodes():
        try:
            scratch = _check_node(node, limit, scratch)
        except GraphjitError as e:
            raise _NodeError(e, node) from None


def _check_node(node, limit: int, scratch: int) -> int:
    """One node of a loaded graph (see `_check_loaded`); returns the scratch bytes so far."""
    from .graph import loadable
    from .graph.diagnostics import GraphjitError
    from .graph.literals import OperandRef
    from .graph.types import ArrayType
    if node.op in PYTHON_OBJECT_OPS:
        raise GraphjitError(f"a loaded graph may not hold `{node.op}` (it would run Python code or touch "
                            "Python objects)", node.span)
    _check_type(node.type, limit, node.span)
    if node.op == "call":
        _check_call(node)
    elif node.op == "raise":
        cls = node.operands[0] if node.operands else None
        name = cls.attrs.get("value") if cls is not None and cls.op == "const" else None
        if not isinstance(name, str) or name not in loadable.EXCEPTIONS:
            what = repr(name) if isinstance(name, str) else "a value that is not an exception's name"
            raise GraphjitError(f"`raise` of {what} is not allowed in a loaded graph (only builtin "
                                "exception classes such as 'builtins.ValueError')", node.span)
    elif node.op == "isinstance":
        classes = node.attrs.get("classes")
        if not isinstance(classes, tuple) or not classes or \
                any(not isinstance(c, str) or c not in loadable.CLASSES for c in classes):
            raise GraphjitError(f"`isinstance` of {classes!r} is not allowed in a loaded graph (only NumPy "
                                "and builtin number classes)"[:300], node.span)
    elif node.op == "format":
        try:
            loadable.check_format_template(node.attrs.get("template"), len(node.operands))
        except ValueError as e:
            raise GraphjitError(f"`format` is not allowed in a loaded graph: {e}", node.span) from None
    elif node.op == "scratch":
        if not isinstance(node.type, ArrayType) or not node.type.is_static:
            raise GraphjitError(f"`scratch` of type {node.type} has no static size", node.span)
        scratch += node.type.nbytes
        if scratch > limit:
            raise GraphjitError(f"`scratch` buffers of {scratch} bytes (at most {limit} for this archive)",
                                node.span)
    for key, value in node.attrs.items():
        if not key.isidentifier():
            raise GraphjitError(f"attribute name {key!r} of `{node.op}` is not an identifier", node.span)
        for item in value if isinstance(value, tuple) else (value,):
            refs = [p for p in ((item.start, item.stop, item.step) if isinstance(item, slice) else (item,))
                    if isinstance(p, OperandRef)]
            if any(not 0 <= r.index < len(node.operands) for r in refs):
                raise GraphjitError(f"`{node.op}` refers to an operand it does not have", node.span)
    if "out" in node.attrs and (not isinstance(node.attrs["out"], int)
                                or not 0 <= node.attrs["out"] < len(node.operands)
                                or node.opdef.ufunc is None):
        raise GraphjitError(f"`{node.op}` has a bad `out` attribute", node.span)
    if node.op == "inplace":
        from .graph.ops import OPS
        if not getattr(OPS.get(node.attrs.get("op")), "inplace_symbol", ""):
            raise GraphjitError(f"`inplace` with unknown operator {node.attrs.get('op')!r}", node.span)
    return scratch


def _graphs(graph):
    yield graph
    for node in graph.nodes:
        for region in node.regions:
            yield from _graphs(region)


def _check_type(t, limit: Optional[int], span=None) -> None:
    """An array type of a loaded graph: a NumPy number dtype, at most MAX_RANK axes, and no more than
    `limit` bytes for its known axes."""
    import math

    import numpy as np

    from .graph import loadable
    from .graph.diagnostics import GraphjitError
    from .graph.types import SHORT_DTYPE_NAMES, ArrayType, TupleType, UnionType
    if isinstance(t, (TupleType, UnionType)):
        for member in t.items if isinstance(t, TupleType) else t.members:
            _check_type(member, limit, span)
        return
    if not isinstance(t, ArrayType):
        return
    if t.dtype is not None and t.dtype not in SHORT_DTYPE_NAMES:
        raise GraphjitError(f"type {t}: dtype {t.dtype} is not a NumPy number type", span)
    if t.shape is not None and len(t.shape) > loadable.MAX_RANK:
        raise GraphjitError(f"type {t} has more than {loadable.MAX_RANK} axes", span)
    if limit is not None and t.shape is not None:
        nbytes = math.prod(d for d in t.shape if d is not None) * np.dtype(t.dtype or "float64").itemsize
        if nbytes > limit:
            raise GraphjitError(f"type {t} is {nbytes} bytes, more than this archive's inputs and parameters "
                                f"justify (at most {limit})", span)


def _unique(name: str, taken: dict) -> str:
    key, k = name, 1
    while key in taken:
        k += 1
        key = f"{name}_{k}"
    return key


def _write_bytes(file: str, data: bytes, prefix: str) -> None:
    """Write `data` to `file` whole or not at all (a temporary file renamed over it)."""
    import tempfile
    directory = os.path.dirname(os.path.abspath(file))
    fd, tmp = tempfile.mkstemp(prefix=prefix, dir=directory)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, file)
    except BaseException:
        os.unlink(tmp)
        raise


def _write_zip(file: str, payload: dict) -> None:
    import tempfile
    import zipfile
    directory = os.path.dirname(os.path.abspath(file))
    fd, tmp = tempfile.mkstemp(prefix=".gjir-", dir=directory)
    os.close(fd)
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for name in ("manifest.json", "graph.txt", "params.npz"):
                archive.writestr(name, payload[name])
        os.replace(tmp, file)
    except BaseException:
        os.unlink(tmp)
        raise
