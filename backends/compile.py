"""Turn emitted source into a Python function, registered in `linecache` so tracebacks show it.

Also maps a run-time error raised inside generated code back to the user's line: the exception
keeps its type and message, and its traceback gains a frame at the user's file and line (the
generated frame stays below it as context):

    File "model.py", line 31, in construct
      x = x @ self.weight.T
    File "<graphjit:construct:1a2b3c4d>", line 5, in construct
    ValueError: matmul: Input operand 1 has a mismatch in its core dimension 0, ...
    graphjit: raised by generated code <graphjit:construct:1a2b3c4d> line 5: x = x @ ...weight.T

This module is on the disk-cache hit path: it imports neither the emitter nor networkx.
"""

from __future__ import annotations

import hashlib
import linecache
import math
import operator
import types
from typing import TYPE_CHECKING, Any, Callable, Optional

import numpy as np

if TYPE_CHECKING:
    from .emit_numpy import Emitted


def synthetic_filename(name: str, source: str) -> str:
    digest = hashlib.sha1(source.encode()).hexdigest()[:8]
    return f"<graphjit:{name}:{digest}>"


def register_source(filename: str, source: str) -> None:
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)


def compile_source(name: str, source: str, globals_dict: dict, closure: dict, consts: list) -> Callable:
    """Compile generated source with its roots: `_g` (the user's globals), `_cells`, `_k`."""
    from ..graph.blend import select
    from ..graph.unbroadcast import sum_to
    from .. import tensor
    from ..graph import histogram
    from .fallback_runtime import make_fallback
    from .numba_kernels import KernelRefused, numba_kernel
    filename = synthetic_filename(name, source)
    register_source(filename, source)
    namespace: dict[str, Any] = {
        "np": np, "math": math, "operator": operator, "_make_fallback": make_fallback, "_select": select, "_sum_to": sum_to,
        "_tensor": tensor, "_hist": histogram, "_g": globals_dict, "_cells": closure, "_k": consts,
        "_numba_kernel": numba_kernel, "_KernelRefused": KernelRefused,
    }
    code = compile(source, filename, "exec")
    exec(code, namespace)
    return namespace[name]


def compile_emitted(emitted: "Emitted", globals_dict: dict, closure: dict) -> Callable:
    """Compile the generated function with its roots: `_g` (the user's globals), `_cells`, `_k`."""
    return compile_source(emitted.name, emitted.source, globals_dict, closure, emitted.consts)


# --- run-time errors, mapped to the user's code ----------------------------------------------------
def map_error(exc: BaseException, filename: str, line_table: dict, inlined: list = ()) -> BaseException:
    """Give `exc` (raised while running generated code `filename`) a frame at the user's line.

    `line_table` maps generated line numbers to `SourceSpan`s (or `(file, line, ...)` tuples);
    `inlined` lists (qualname, file, first, last, ...) of the functions the code came from, to name
    the frame. Returns `exc` itself (type, message, arguments unchanged), with a new traceback.
    """
    if not isinstance(exc, Exception) or getattr(exc, "__graphjit_mapped__", False):
        return exc
    tb = exc.__traceback__
    gen_tb = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            gen_tb = tb  # the innermost generated frame
        tb = tb.tb_next
    if gen_tb is None:
        return exc
    span = line_table.get(gen_tb.tb_lineno)
    if span is None:
        return exc
    file, line = (span.file, span.line) if hasattr(span, "file") else (span[0], span[1])
    generated = linecache.getline(filename, gen_tb.tb_lineno).strip()
    _note(exc, f"graphjit: raised by generated code {filename} line {gen_tb.tb_lineno}: {generated}")
    try:
        exc.__graphjit_mapped__ = True
    except Exception:  # an exception class with __slots__
        pass
    frame_tb = _user_frame(exc, file, line, _function_at(file, line, inlined) or gen_tb.tb_frame.f_code.co_name)
    if frame_tb is not None:
        exc.__traceback__ = types.TracebackType(gen_tb, frame_tb.tb_frame, frame_tb.tb_lasti, frame_tb.tb_lineno)
    else:
        exc.__traceback__ = gen_tb
    from .. import log
    log.info("errors", "%s: %s at %s:%d (generated line %d)", type(exc).__name__, exc, file, line, gen_tb.tb_lineno)
    return exc


def _note(exc: BaseException, text: str) -> None:
    if hasattr(exc, "add_note"):
        exc.add_note(text)


def _function_at(file: str, line: int, inlined) -> Optional[str]:
    best = None
    for item in inlined or ():
        qualname, f, first, last = item[0], item[1], item[2], item[3]
        if f == file and first <= line <= last and (best is None or last - first < best[1] - best[0]):
            best = (first, last, qualname)
    return best[2].split(".")[-1] if best else None


_FRAME_CODE: dict = {}


def _user_frame(exc: BaseException, file: str, line: int, name: str):
    """A traceback entry whose frame is at `file:line`, in a function called `name`.

    Made by running a one-line `raise` compiled with the user's file name and line number; the
    statement spans exactly the user's (stripped) line, so no misleading `^^^` is drawn under it.
    """
    key = (file, line, name)
    entry = _FRAME_CODE.get(key)
    if entry is None:
        text = linecache.getline(file, line).rstrip("\n")
        stripped = text.strip()
        prefix = text[:len(text) - len(text.lstrip())] if stripped else ""
        ident = "_" * max(1, len(stripped) - len("raise "))
        if prefix and line > 1:  # an indented statement: open a block on the line before
            source = "\n" * (line - 2) + "if 1:\n" + prefix + f"raise {ident}\n"
        else:
            source = "\n" * (line - 1) + f"raise {ident}\n"
        try:
            code = compile(source, file, "exec")
            code = code.replace(co_name=name)
        except (SyntaxError, ValueError):
            return None
        entry = (code, ident)
        if len(_FRAME_CODE) > 256:
            _FRAME_CODE.clear()
        _FRAME_CODE[key] = entry
    code, ident = entry
    saved = exc.__traceback__, exc.__context__, exc.__suppress_context__
    try:
        exec(code, {ident: exc, "__name__": "graphjit.generated", "__builtins__": {}})
    except BaseException as raised:
        tb = raised.__traceback__
    else:  # pragma: no cover
        return None
    finally:
        exc.__context__, exc.__suppress_context__ = saved[1], saved[2]
    exc.__traceback__ = saved[0]
    while tb is not None and tb.tb_frame.f_code is not code:
        tb = tb.tb_next
    return tb


def workspace_bytes(run) -> int:
    """Bytes of the workspaces pooled by the generated function `run` (`Emitter.workspace` in
    backends/emit_numpy.py): the buffers of big temporaries it keeps between calls
    (graph/passes/scratch.py); `cache_info()["workspace_bytes"]` sums them."""
    buffers = {}
    for workspace in getattr(run, "__globals__", {}).get("_ws") or []:
        for view in workspace:
            base = view if view.base is None else view.base
            buffers[id(base)] = base.nbytes
    return sum(buffers.values())
