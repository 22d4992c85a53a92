"""The compiler driver: front end → passes → back end for one call signature (`compile_for`).

    lower_function (transpiler/)  →  run_pipeline (graph/passes/)  →  emit_function, compile_emitted
                                                                      or Interpreter (backends/)

`jit` (api.py) calls it through the cache (backends/cache_policy.py) on a miss; `graphjit export`
(export_load.py) and `graphjit transpile` (cli/) run the same stages with their own ends. The
stages load here, on the first compile: importing graphjit needs neither LibCST nor networkx.
"""

from __future__ import annotations

import inspect
import time
import warnings
from typing import Any, Callable, Optional

import numpy as np

from . import context as _ctx
from .backends.cache_policy import CompiledEntry
from .backends.dispatch import call_arguments, dynamic_shape
from .backends.namespaces import call_namespace, foreign_arrays, is_foreign_array, known_shape, numpy_dtype
from .context import JitConfig
from .tensor import tensor_mask


def compile_call(fn: Callable, sig: inspect.Signature, args: tuple, kinds: list, static: tuple,
                 config: JitConfig, transform: Optional[Callable] = None) -> CompiledEntry:
    """Compile `fn` for bound arguments `args` (one per parameter of `sig`): arrays with dynamic
    dimensions are lowered as their types, `static` names the compile-time arguments."""
    positional, keywords = call_arguments(sig, [abstract_argument(value, kind) for value, kind in zip(args, kinds)])
    options = {"static": static}
    if keywords:
        options["kwargs"] = keywords
    if transform is not None:
        options["transform"] = transform
    options["tensor_masks"] = tuple(tensor_mask(a) for a in args)
    xp = call_namespace(args)
    if xp is not None:
        options["namespace"] = xp
        options["device_arg"] = next((name for name, a in zip(sig.parameters, args) if is_foreign_array(a)),
                                     None)
        options["numpy_args"] = tuple(name for name, a in zip(sig.parameters, args) if isinstance(a, np.ndarray))
    return compile_for(fn, tuple(positional), config, **options)


def abstract_argument(a: Any, kind: Any):
    """The argument as the front end sees it: an array with dynamic dimensions becomes its type, and
    so does an array of another library (Dask, array-API; its unknown dimensions are dynamic)."""
    if isinstance(a, (tuple, list)) and foreign_arrays(a):
        return type(a)(abstract_argument(v, None) for v in a)
    if is_foreign_array(a):
        from .graph.types import ArrayType
        from .transpiler.lower import AbstractArray
        shape = known_shape(a.shape)
        return AbstractArray(ArrayType(numpy_dtype(a.dtype).name,
                                       dynamic_shape(shape, kind[1]) if isinstance(kind, tuple) else shape))
    if isinstance(kind, tuple) and isinstance(a, np.ndarray):
        from .graph.types import ArrayType
        from .transpiler.lower import AbstractArray
        return AbstractArray(ArrayType(a.dtype.name, dynamic_shape(a.shape, kind[1])))
    return a


def compile_for(fn: Callable, args: tuple, config: JitConfig, static: tuple = (),
                kwargs: Optional[dict] = None, transform: Optional[Callable] = None,
                tensor_masks: Optional[tuple] = None, namespace: Any = None,
                device_arg: Optional[str] = None, numpy_args: tuple = ()) -> CompiledEntry:
    """Front end, passes and backend for one call signature; errors point at the user's code.
    `transform(lowered, args, roots)` changes the lowered graph before the passes (`graphjit.grad`
    appends the backward pass). `tensor_masks` (one per parameter, graph/tensor_boundary.py; none
    given: no argument is one) says which arguments are `graphjit.Tensor`s: the code computes on plain arrays and returns Tensors
    where eager execution does. `namespace`: the array namespace (a module) of non-NumPy inputs,
    which the code then calls instead of NumPy, without the NumPy-only passes (docs/array-api.md);
    arrays it creates go on the device of argument `device_arg`; the arguments `numpy_args` are NumPy
    arrays (what NumPy arrays alone compute stays NumPy, backends/xp_origin.py).

    Runs on a deep-stack worker (transpiler/deep_stack.py): deep input compiles where eager Python
    runs it, and a RecursionError or MemoryError anywhere in it is one ResourceLimitError."""
    from .graph.spans import SourceSpan
    from .transpiler.deep_stack import run_deep
    code = getattr(fn, "__code__", None)
    where = SourceSpan(code.co_filename, code.co_firstlineno, 1) if code is not None else None
    from .graph.diagnostics import GraphjitError, GraphSyntaxError
    try:
        return run_deep(_compile_for, fn, args, config, static, kwargs, transform, tensor_masks, namespace,
                        device_arg, numpy_args, where=where, what=f"compiling {getattr(fn, '__qualname__', fn)}")
    except (GraphSyntaxError, GraphjitError) as e:   # about the user's code: no traceback through graphjit
        raise e.with_traceback(None) from None


def _compile_for(fn, args, config, static, kwargs, transform, tensor_masks, namespace, device_arg,
                 numpy_args) -> CompiledEntry:
    from .backends.compile import compile_emitted
    from .backends.emit_numba import emit_function as emit_with_kernels
    from .backends.emit_numpy import emit_function
    from .backends.numba_kernels import kernels_on
    from .backends.interpreter import Interpreter
    from .backends import emit_xp
    from .backends.xp_interpreter import NamespaceInterpreter
    from .backends.xp_origin import numpy_nodes, numpy_sources
    from .graph.diagnostics import GraphjitError, GraphSyntaxError
    from .graph.autodiff.pending import has_pending, prepare as prepare_gradients
    from .graph.passes.manager import dump_directory_from_env, format_report, pipeline_for, run_pipeline
    from .graph.paths import Roots
    from .graph.tensor_boundary import mark_tensor_boundary
    from .transpiler.lower import lower_function

    start = time.perf_counter()
    level = config.jit_syntax_level or _ctx.LAX
    try:
        lowered = lower_function(fn, args, kwargs or {}, static=static, level=level)
        graph = lowered.graph
        dump = dump_directory_from_env(graph.name)
        if dump is not None and has_pending(graph):
            dump.write("before_gradients.txt", str(graph))
        prepare_gradients(graph, config.jit_level, differentiated=transform is not None,
                          dump=None if dump is None else lambda g: dump.write("after_gradients.txt", str(g)))
        if transform is not None:
            if dump is not None:
                dump.write("before_transform.txt", str(graph))
            transform(lowered, args, Roots(dict(zip(lowered.arg_names, args)), lowered.globals, lowered.closure,
                                           lowered.consts))
            if dump is not None:
                dump.write("after_transform.txt", str(graph))
        mark_tensor_boundary(graph, tensor_masks or ())
        kernels = kernels_on(config) and namespace is None
        report = run_pipeline(graph, config.jit_level, dump=dump,
                              pipeline=pipeline_for(config.jit_level, kernels, numpy=namespace is None))
        numpy_values = frozenset()
        if namespace is not None:
            sources = numpy_sources(graph, Roots(dict(zip(lowered.arg_names, args)), lowered.globals,
                                                 lowered.closure, lowered.consts), numpy_args)
            numpy_values = numpy_nodes(graph, sources)
            emitted = emit_xp.emit_function(graph, namespace, consts=lowered.consts, device_arg=device_arg,
                                            numpy_values=numpy_values)
        else:
            emitted = (emit_with_kernels if kernels else emit_function)(graph, consts=lowered.consts)
        if dump is not None:
            dump.write("emitted.py", emitted.source)
            dump.write("passes.txt", format_report(report, config.jit_level))
    except GraphSyntaxError as e:
        raise e.with_traceback(None) from None
    except GraphjitError as e:
        raise e.with_traceback(None) from None
    keep = tuple(a for a in args if not isinstance(a, (np.ndarray, np.generic)) and not is_foreign_array(a))
    if lowered.eager or only_fallbacks(graph):
        if not lowered.eager:
            code = fn.__code__
            warnings.warn_explicit(f"graphjit: nothing in {fn.__qualname__} compiles into a graph; it runs eagerly",
                                   UserWarning, code.co_filename, code.co_firstlineno)
        return CompiledEntry(fn, graph, emitted.source, keep, time.perf_counter() - start,
                             lowered.diagnostics, True, emitted.name, emitted.line_table, emitted.consts, lowered,
                             report)
    if config.exec_mode == "no_sink" and namespace is not None:
        run = NamespaceInterpreter(graph, Roots(globals_dict=lowered.globals, closure=lowered.closure,
                                                consts=emitted.consts), lowered.globals, namespace, device_arg,
                                  numpy_values)
    elif config.exec_mode == "no_sink":
        run = Interpreter(graph, Roots(globals_dict=lowered.globals, closure=lowered.closure, consts=emitted.consts),
                          lowered.globals)
    else:
        try:
            run = compile_emitted(emitted, lowered.globals, lowered.closure)
        except (SyntaxError, RecursionError, MemoryError) as e:
            if not _nested_too_deep(e):
                raise
            _eager_or_too_deep(fn, level, e)
            return CompiledEntry(fn, graph, emitted.source, keep, time.perf_counter() - start, lowered.diagnostics,
                                 True, emitted.name, emitted.line_table, emitted.consts, lowered, report)
    return CompiledEntry(run, graph, emitted.source, keep, time.perf_counter() - start, lowered.diagnostics,
                         False, emitted.name, emitted.line_table, emitted.consts, lowered, report)


def _nested_too_deep(error: BaseException) -> bool:
    """Whether Python refused the generated code for its nesting (a long `elif` chain is an `if` in an
    `else:` in the graph, one indentation level each), not for a mistake in it."""
    if isinstance(error, (RecursionError, MemoryError)):
        return True
    return "too many levels of indentation" in str(error) or "too many statically nested blocks" in str(error)


def _eager_or_too_deep(fn: Callable, level: str, error: BaseException) -> None:
    """At LAX, a warning that `fn` runs eagerly; at STRICT and COMPATIBLE, a ResourceLimitError."""
    from .graph.spans import SourceSpan
    from .transpiler.deep_stack import ResourceLimitError
    code = fn.__code__
    why = (f"the code generated for {fn.__qualname__} nests its blocks deeper than Python compiles "
           f"({getattr(error, 'msg', None) or type(error).__name__})")
    if level == _ctx.LAX:
        warnings.warn_explicit(f"graphjit: {why}; it runs eagerly", UserWarning, code.co_filename,
                               code.co_firstlineno)
        return
    raise ResourceLimitError(why, SourceSpan(code.co_filename, code.co_firstlineno, 1),
                             hint="split the `elif` chain or nested blocks into functions, or use "
                                  "jit_syntax_level=LAX to run it eagerly")


def only_fallbacks(graph) -> bool:
    """True when the graph does nothing but run fallback blocks (and unpack their results)."""
    kinds = {n.op for n in graph.nodes}
    return "fallback" in kinds and kinds <= {"fallback", "tuple_get", "const", "tuple", "if", "as_ndarray", "as_tensor"} and not any(
        n.op == "if" and any(m.op not in ("const", "tuple_get") for r in n.regions for m in r.nodes)
        for n in graph.nodes)
