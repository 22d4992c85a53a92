"""Compile, cache and call the Numba kernels that generated code names (`_numba_kernel(...)`).

backends/emit_numba.py writes a loop as a kernel's source text and a call that falls back on the
Python loop:

    _kernel = _numba_kernel('seidel_loop6', 'numpy', ('arr:float64:2',), (), ('def seidel_loop6(A):\\n', ...))
    ...
    try:
        _kernel(A)
    except _KernelRefused:
        for t in range(2): ...

Nothing here imports Numba until a kernel must be compiled. The kernel's Python function is always
compiled from the text generated code passed in, never imported from a file: a file in the cache
directory is never run. The text is also kept as `<graphjit cache>/numba/<name>_<sha>.py` (for
tracebacks and for reading; `<sha>` hashes the text), and the kernel is compiled ahead of time into
an extension module beside it (backends/numba_aot.py), which a later process imports without
importing Numba; without a C toolchain (or with GRAPHJIT_NUMBA_AOT=0) it is compiled by
`numba.njit(boundscheck=..., error_model=...)` instead, whose machine code Numba caches in
`numba/__pycache__` (backends/numba_cache.py), so a later process loads it instead of compiling.
`numba/` is made 0700 and checked before each compile (the user's, not writable by group or others,
backends/cache_trust.py); when it cannot be used, one warning says why and kernels are compiled in
memory, with no file and no Numba disk cache.
Each call checks that the arguments have the types the kernel was planned for (dtype and rank of
arrays, Python or NumPy scalar type); when Numba is not installed, refuses the kernel (a typing error, raised before any of it
runs), the call raises KernelRefused and the generated code runs its Python loop; the reason is
logged once (`GRAPHJIT_LOG=vectorize`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import linecache
import os
import sys
import threading
import types
import warnings
from typing import Optional

import numpy as np

from .. import log
from . import cache_trust, disk_cache, numba_aot, numba_cache
from .cache_trust import Untrusted
from .disk_cache import default_dir, warn_once

ENV = "GRAPHJIT_NUMBA"          # 0 / off: never send loops to Numba
_LOADED: dict = {}              # (source sha, layouts) -> (compiled function, its layouts), shared by every handle
_LOCK = threading.Lock()


class KernelRefused(Exception):
    """The kernel cannot run (no Numba, or Numba refused it); the caller runs its Python loop."""


def wanted() -> bool:
    """Loops may go to Numba: not switched off by $GRAPHJIT_NUMBA and Numba is installed (looked up
    without importing it)."""
    if os.environ.get(ENV, "1").strip().lower() in ("0", "off", "false", "no"):
        return False
    try:
        return importlib.util.find_spec("numba") is not None
    except (ImportError, ValueError):   # ValueError: sys.modules["numba"] is None (import blocked)
        return False


def kernels_on(config) -> bool:
    """Loops that stay loops go to Numba for this JitConfig: `config.numba`, generated code (the
    interpreter runs the graph as it is), Numba installed and not switched off by $GRAPHJIT_NUMBA."""
    return config.numba and config.exec_mode != "no_sink" and config.jit_level == "O2" and wanted()


UNSAVED = "<graphjit numba kernel>"   # the directory named in a kernel compiled in memory only


def kernel_dir() -> str:
    return os.path.join(default_dir(), "numba")


def trusted_dir() -> Optional[str]:
    """kernel_dir(), made 0700 if missing (the cache root too, tagged as the disk cache makes it)
    and checked: the root and `numba/` belong to the user and are not writable by group or others,
    `numba/` is not a symlink. None when it cannot be used (one warning): kernels are then compiled
    in memory, with no file and no Numba disk cache."""
    root = default_dir()
    directory = os.path.join(root, "numba")
    where = root
    try:
        if not os.path.isdir(root):
            cache_trust.make_tagged_dir(root)
        cache_trust.check_dir(root, follow=True)
        where = directory
        if not os.path.lexists(directory):
            cache_trust.make_dir(directory)
        cache_trust.check_dirs(root, directory)
        return directory
    except (Untrusted, OSError) as e:
        _not_cached(root, where, e)
    return None


def _not_cached(root: str, where: str, e: Exception) -> None:
    """One warning per directory. About the cache root, the disk cache's own (it cannot use the root
    either, and says so once for both)."""
    store = disk_cache.current() if where == root else None
    if store is not None:
        if isinstance(e, Untrusted):
            store.refuse(str(e))
        else:
            store.unwritable(e)
        return
    if isinstance(e, Untrusted):
        why = (f"{e}. Kernels are cached only in a directory nobody else can write, so they are compiled in "
               "memory for this process. Make the directory yours and private (`chmod -R go-w`), remove what "
               "you did not put there, or set GRAPHJIT_CACHE_DIR to another directory.")
    else:
        why = (f"cannot write it ({e.strerror or e}); they are compiled in memory for this process (set "
               "GRAPHJIT_CACHE_DIR to a writable directory)")
    warn_once(("kernels", where), f"graphjit: not caching Numba kernels in {where}: {why}")


class NumbaKernel:
    """One kernel of generated code: its source, Numba's error model, the eager kind of each argument
    (graph/analysis/kernel_plan.py: `float`, `np.int32`, `arr:float64:2`) and the NumPy type each
    returned value is converted to (None: keep Numba's Python float/int/bool)."""

    def __init__(self, name: str, error_model: str, kinds: tuple, results: tuple, lines: tuple,
                 boundscheck: bool = True):
        self.name = name
        self.boundscheck = boundscheck
        self.checks = tuple(_check_for(k) for k in kinds)
        self.kinds = kinds
        self.arrays = tuple(i for i, k in enumerate(kinds) if k.startswith("arr:"))
        self.layout: Optional[str] = None   # the array layouts the function was compiled for (None: any)
        self.error_model = error_model
        self.results = tuple(None if r is None else np.dtype(r).type for r in results)
        self.source = "".join(lines)
        self.sha = hashlib.sha256(f"{HEADER}{error_model} {boundscheck}\n{self.source}".encode()).hexdigest()[:20]
        self.dispatcher = None
        self.refused: Optional[str] = None
        self.refused_layouts: dict = {}   # layouts -> why Numba refused the kernel for them (read-only writes)
        self.path: Optional[str] = None

    def __call__(self, *args):
        for check, a in zip(self.checks, args):
            if not check(a):
                raise KernelRefused(f"an argument of type {type(a).__name__} where the kernel was planned for another")
        disp = self.dispatcher
        if disp is not None and self.layout is not None and numba_aot.layouts(self.arrays, args) != self.layout:
            disp = None   # an ahead-of-time library is compiled for the arrays' layouts: another one
        try:
            if disp is None:   # the first call loads or compiles: Numba's imports and compiler warn
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DeprecationWarning)
                    disp = self.load(args)
                    out = disp(*args)
            else:
                out = disp(*args)
        except Exception as e:
            if _is_numba_error(e) or isinstance(e, ImportError):   # ImportError: Numba lacks an optional
                # package it needs for this kernel (SciPy for np.dot), found only when it compiles one
                why = f"Numba refused it: {str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__}"
                if disp is None and numba_aot.enabled():   # for these layouts only: another may compile
                    self.refused_layouts[numba_aot.layouts(self.arrays, args)] = why
                    log.info("vectorize", "kernel %s runs as a Python loop: %s", self.name, why)
                    raise KernelRefused(why) from None
                self.refuse(why)
            if isinstance(e, OverflowError) and ("int too big" in str(e) or "too large to convert" in str(e)):
                raise KernelRefused(str(e)) from None   # a Python int argument beyond int64: this call only
            raise
        if not self.results:
            return out
        return tuple(v if conv is None else conv(v) for v, conv in zip(out, self.results))

    def refuse(self, why: str):
        self.refused = why
        log.info("vectorize", "kernel %s runs as a Python loop: %s", self.name, why)
        raise KernelRefused(why)

    def load(self, args: tuple):
        if self.refused is not None:
            raise KernelRefused(self.refused)
        layout = numba_aot.layouts(self.arrays, args) if numba_aot.enabled() else None
        if layout in self.refused_layouts:
            raise KernelRefused(self.refused_layouts[layout])
        with _LOCK:
            found = _LOADED.get((self.sha, layout))
            if found is None:
                found = _LOADED[(self.sha, layout)] = self.compile(layout)
        self.dispatcher, self.layout = found
        return self.dispatcher

    def compile(self, layout: Optional[str]) -> tuple:
        """The kernel's function and the layouts it needs: the ahead-of-time library of a former
        process (no Numba import), else compiled now (ahead of time, or by numba.njit)."""
        directory = trusted_dir()
        library = None
        if layout is not None and directory is not None:
            library = numba_aot.library_path(directory, self.name, self.sha, layout)
            try:
                fn = numba_aot.load(library)
            except ImportError:   # a damaged library: compiled again below
                fn = None
            if fn is not None:
                return fn, layout
        try:
            with warnings.catch_warnings():   # Numba's own imports warn (DeprecationWarning); eager code does not
                warnings.simplefilter("ignore")
                import numba
        except ImportError:
            self.refuse("Numba is not installed (pip install graphjit[numba])")
        except Exception as e:   # noqa: BLE001 - e.g. a warning made an error while Numba imports
            self.refuse(f"Numba cannot be imported: {type(e).__name__}: {e}")
        fn = self.function(directory)
        quiet_kernels(numba.NumbaWarning)
        if library is not None:
            try:
                numba_aot.build(fn, self.kinds, layout, library, self.error_model, self.boundscheck)
                return numba_aot.load(library), layout
            except numba_aot.Unavailable as e:
                log.info("vectorize", "kernel %s is compiled by numba.njit, not ahead of time: %s", self.name, e)
        dispatcher = numba.njit(boundscheck=self.boundscheck, error_model=self.error_model)(fn)
        cache = numba_cache.cache_for(fn, directory) if directory is not None else None
        if cache is not None:
            dispatcher._cache = cache   # what `cache=True` sets, in the checked directory only
        return dispatcher, None

    def text(self) -> str:
        return HEADER.format(error_model=self.error_model) + self.source

    def function(self, directory: Optional[str]):
        """The kernel's Python function, compiled from its text: whatever a file of that name holds
        is never run. Its file name is in `directory` (where the text is kept for reading), or in
        UNSAVED when there is none; either way linecache holds the text for tracebacks."""
        text = self.text()
        path = os.path.join(directory or UNSAVED, f"{self.name}_{self.sha}.py")
        if directory is not None:
            self.write(path, text)
        self.path = path
        linecache.cache[path] = (len(text), None, text.splitlines(True), path)
        module_name = f"graphjit_numba_kernels.{self.name}_{self.sha}"
        module = types.ModuleType(module_name)
        module.__file__ = path
        exec(compile(text, path, "exec"), module.__dict__)   # graphjit's own text, from generated code
        sys.modules.setdefault(module_name, module)   # Numba finds a cached function's module by name
        return getattr(module, self.name)

    def write(self, path: str, text: str) -> None:
        """Keep the kernel's text at `path`, private (0600) and written atomically; a file there with
        other bytes (damaged, or not graphjit's) is replaced. Only read by people and tracebacks."""
        data = text.encode("utf-8")
        try:
            fd = cache_trust.open_checked(path)
            with os.fdopen(fd, "rb") as f:
                if f.read(len(data) + 1) == data:
                    return
        except (OSError, Untrusted):
            pass
        tmp = None
        try:
            fd, tmp = cache_trust.temp_file(os.path.dirname(path), suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
            tmp = None
        except OSError as e:
            log.info("vectorize", "kernel %s: its source file %s is not written: %s", self.name, path, e)
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass


def quiet_kernels(category) -> None:
    """Hide Numba's warnings about kernel files (`NumbaPerformanceWarning` when a compilation meets a
    non-contiguous `@`): eager NumPy gives none. One filter, matching only kernel files
    (`<name>_<sha>.py`); other code's warnings pass."""
    warnings.filterwarnings("ignore", category=category, module=KERNEL_FILE)


KERNEL_FILE = r".*_[0-9a-f]{20}$"
# Every kernel file starts so: `checked_index` tests an index the kernel plan could not prove in
# bounds, raising NumPy's IndexError (Numba's own bounds checks say only "index is out of bounds").
# It is inlined into the kernel (cached with it), so it has no disk cache of its own.
HEADER = """# graphjit Numba kernel (generated; error_model={error_model})
import math

import numba
import numpy as np


@numba.njit(inline="always")
def checked_index(i, n, axis):
    if i < -n or i >= n:
        raise IndexError("index " + str(i) + " is out of bounds for axis " + str(axis) + " with size " + str(n))
    return i


"""   # warnings' `module` for a kernel file: its path without `.py`


def _check_for(kind: str):
    """A test that a value is of eager kind `kind` (what the kernel's plan assumed)."""
    if kind.startswith("arr:"):
        _, dtype, rank, *shape = kind.split(":")
        dt, nd = np.dtype(dtype), int(rank)
        if shape:   # compiled without bounds checks for this shape
            dims = tuple(int(d) for d in shape[0].split("x") if d)
            return lambda a: type(a) is np.ndarray and a.dtype == dt and a.shape == dims
        return lambda a: type(a) is np.ndarray and a.dtype == dt and a.ndim == nd
    if kind.startswith("np."):
        cls = np.dtype(kind[3:]).type
        return lambda a: type(a) is cls
    if kind.startswith("int:"):   # a Python int the kernel's plan assumed within ±bound
        bound = int(kind[4:])
        return lambda a: type(a) is int and -bound <= a <= bound
    cls = {"float": float, "int": int, "bool": bool}[kind]
    return lambda a: type(a) is cls


def _is_numba_error(e: Exception) -> bool:
    module = type(e).__module__ or ""
    return module.startswith("numba")


def numba_kernel(name: str, error_model: str, kinds: tuple, results: tuple, lines: tuple,
                 boundscheck: bool = True) -> NumbaKernel:
    """What generated code calls `_numba_kernel`: a handle that compiles on its first call."""
    return NumbaKernel(name, error_model, kinds, results, lines, boundscheck)
