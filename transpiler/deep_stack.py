"""Running the front end on a thread with a deep stack, and turning stack or memory exhaustion into one error.

LibCST's parser, its visitors and the lowering recurse once per level of nesting: a 2 000-term sum
`a + a + ... + a` is a left-deep tree 2 000 levels down, deeper than Python's default recursion
limit, and LibCST's native parser overflows an 8 MiB C stack (a segfault, not an exception) on
input deep enough. `run_deep(fn, ...)` runs `fn` on a worker thread with a `STACK_BYTES` stack and
the recursion limit raised to `RECURSION_LIMIT` (room for every nesting depth `source_limits`
lets through), the calling thread waiting; inside a worker, it just calls `fn`. A RecursionError or
MemoryError that still happens becomes a `ResourceLimitError` naming the place, never a traceback.
Only stack pages actually used take memory.
"""

from __future__ import annotations

import contextvars
import sys
import threading
from typing import Callable, Optional

from ..graph.diagnostics import GraphjitError
from ..graph.spans import SourceSpan

STACK_BYTES = 512 << 20       # the worker thread's stack: virtual, committed only as deep as it is used
RECURSION_LIMIT = 60_000      # Python frames while a worker runs (a frame through C code is a few KiB of stack)


class ResourceLimitError(GraphjitError):
    """The input is too deep or too big for graphjit to read or compile within its limits."""


_local = threading.local()
_lock = threading.Lock()
_workers = 0                  # deep workers running (the raised recursion limit is restored after the last)
_saved_limit: Optional[int] = None


def in_deep_worker() -> bool:
    return getattr(_local, "deep", False)


def run_deep(fn: Callable, *args, where: Optional[SourceSpan] = None, what: str = "compiling", **kwargs):
    """`fn(*args, **kwargs)` on a deep-stack worker thread (or here, inside one); its result or its error.

    RecursionError and MemoryError become `ResourceLimitError` at `where` (the file, or the function
    being compiled); every other exception passes through unchanged, with its traceback.
    """
    if in_deep_worker():
        return _guarded(fn, args, kwargs, where, what)
    context = contextvars.copy_context()   # the caller's context variables (numpy's errstate, graphjit's context)
    outcome: dict = {}

    def work() -> None:
        _local.deep = True
        try:
            outcome["value"] = context.run(_guarded, fn, args, kwargs, where, what)
        except BaseException as e:     # handed to the waiting thread, re-raised there
            outcome["error"] = e

    _enter()
    try:
        with _lock:
            old = threading.stack_size()
            threading.stack_size(STACK_BYTES)
            try:
                worker = threading.Thread(target=work, name="graphjit-deep-stack", daemon=True)
                worker.start()
            finally:
                threading.stack_size(old)
        worker.join()
    finally:
        _leave()
    if "error" in outcome:
        error = outcome.pop("error")
        try:
            raise error
        finally:
            del error
    return outcome.get("value")


def _guarded(fn, args, kwargs, where, what):
    try:
        return fn(*args, **kwargs)
    except RecursionError:
        raise too_deep(where, what) from None
    except MemoryError:
        raise ResourceLimitError(f"out of memory while {what}", where,
                                 hint="the input is too big for graphjit; split it") from None


def too_deep(where: Optional[SourceSpan], what: str) -> ResourceLimitError:
    return ResourceLimitError(f"nested too deeply for graphjit while {what}", where,
                              hint="split the expression or block into smaller ones")


def _enter() -> None:
    global _workers, _saved_limit
    with _lock:
        if _workers == 0:
            _saved_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved_limit, RECURSION_LIMIT))
        _workers += 1


def _leave() -> None:
    global _workers, _saved_limit
    with _lock:
        _workers -= 1
        if _workers == 0 and _saved_limit is not None:
            if sys.getrecursionlimit() == max(_saved_limit, RECURSION_LIMIT):   # nobody changed it since
                sys.setrecursionlimit(_saved_limit)
            _saved_limit = None
