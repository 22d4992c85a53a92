"""Kernels compiled ahead of time: a Numba kernel built once as a CPython extension module in graphjit's
cache, which a later process imports without importing Numba (backends/numba_kernels.py calls it).

Numba's own cache (`cache=True`) keeps the machine code, but loading it starts Numba in the process
first: its import, its CPU target and SciPy's BLAS check, about 1 s before the first kernel runs.
Here the kernel is compiled by Numba's ahead-of-time compiler (`numba.pycc`) into a shared library
beside its source file, `<cache>/numba/aot/<name>_<sha>_<layouts>_<machine>.so`, and a later
process imports that library directly (well under a millisecond): Numba is imported only when a
kernel must be compiled, or when a kernel raises (NumPy's IndexError is rebuilt by Numba's code).

- The library is compiled for this CPU (`host`), for the argument types the kernel was planned for
  and for the memory layout of its array arguments at the call (`C`: contiguous, `A`: any, lower
  case read-only, `U` unaligned); the caller checks both at every call (a C-contiguous signature
  given a strided view would read the wrong elements, a writable one would write a read-only array). `<machine>` keys the Numba, NumPy and Python versions and the CPU.
- Numba's runtime for such libraries (its C helpers and memory manager, `runtime-<machine>/`) is
  compiled by the C compiler once per machine and linked into every kernel (0.1 s each).
- Numba compiles the kernel with the same error model and bounds checks as `numba.njit` would.
- Anything that prevents it (no C compiler, `numba.pycc` missing) raises Unavailable: the caller
  uses `numba.njit(cache=True)` instead, as it does with `GRAPHJIT_NUMBA_AOT=0`.
- A library is native code the process runs, so it is loaded only if graphjit wrote it
  (backends/cache_trust.py): `<lib>.hmac` beside it holds the HMAC-SHA256 of its name and bytes
  under the user's cache key, and the library, the directories from the cache root to it and the
  runtime's files belong to the user and are not writable by others. Otherwise it is compiled again
  (and, where the directories are not private, by `numba.njit` instead). Directories are made 0700.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import platform
import shutil
import sys
import tempfile
import threading
import numpy as np

from . import cache_trust
from .cache_trust import Untrusted

ENV = "GRAPHJIT_NUMBA_AOT"   # 0 / off: kernels are compiled by numba.njit(cache=True) instead
INIT = "graphjit_kernels"    # the name the runtime's init function is compiled under
_LOCK = threading.Lock()
_STATE: dict = {}            # per process: the machine key, the runtime's object files, the toolchain


class Unavailable(Exception):
    """This kernel cannot be compiled ahead of time here (the caller uses numba.njit)."""


def enabled() -> bool:
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "off", "false", "no")


def layouts(array_params: tuple, args: tuple) -> str:
    """Per array argument, what Numba's type of it says beyond dtype and rank, as `numba.njit` would
    see it: `C` contiguous or `A` any layout, lower case when read-only (Numba then refuses a write
    into it, as eager NumPy raises), `U` when unaligned. A library is compiled per combination."""
    return "".join(_layout(args[i].flags) for i in array_params)


def _layout(flags) -> str:
    if not flags.aligned:
        return "U"
    code = "C" if flags.c_contiguous else "A"
    return code if flags.writeable else code.lower()


def machine_key() -> str:
    """A short hash of what a compiled library depends on, computed without importing Numba: Numba's
    installation (its path and stamp), NumPy's and Python's versions, the CPU (model and flags)."""
    key = _STATE.get("machine")
    if key is None:
        spec = importlib.util.find_spec("numba")
        origin = spec.origin if spec is not None and spec.origin else ""
        stamp = os.stat(origin) if origin else None
        parts = [origin, str(stamp.st_mtime_ns if stamp else ""), str(stamp.st_size if stamp else ""),
                 np.__version__, sys.version, platform.machine(), _cpu()]
        key = _STATE["machine"] = hashlib.sha256("\n".join(parts).encode()).hexdigest()[:12]
    return key


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            seen = []
            for line in f:
                if line.startswith(("model name", "flags", "Features", "CPU part")):
                    seen.append(line.strip())
                if line.startswith(("flags", "Features")):
                    break
            return "\n".join(seen)
    except OSError:
        return platform.processor()


def library_path(directory: str, name: str, sha: str, layout: str) -> str:
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    return os.path.join(directory, "aot", f"{_module_name(name, sha, layout)}{suffix}")


def _module_name(name: str, sha: str, layout: str) -> str:
    return f"{name}_{sha}_{layout or 'S'}_{machine_key()}"


def load(path: str):
    """The kernel function of the library at `path` (imported without Numba), or None if there is
    none, or it is not one graphjit wrote (it is then compiled again)."""
    if not os.path.exists(path):
        return None
    why = untrusted(path)
    if why is not None:
        from .. import log
        log.info("vectorize", "kernel library %s is not loaded: %s", path, why)
        return None
    module_name = os.path.basename(path).split(".")[0]
    loader = importlib.machinery.ExtensionFileLoader(module_name, path)
    spec = importlib.util.spec_from_file_location(module_name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    sys.modules.setdefault(module_name, module)   # kept alive, as any imported extension module
    return module.run


# --- trust: a library runs only if graphjit wrote it ------------------------------------------------
MAX_LIBRARY_BYTES = 256 * 1024 * 1024


def _cache_root(path: str) -> str:
    """The cache root of a library `<root>/numba/aot/<library>`."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(path))))


def _check_directories(path: str) -> None:
    """Raise Untrusted unless the cache root, `numba/` and `aot/` are the user's and private, and
    the runtime (which may be a link to a shared build of the user's) too."""
    aot = os.path.dirname(os.path.abspath(path))
    root = _cache_root(path)
    cache_trust.check_dir(root, follow=True)
    cache_trust.check_dir(os.path.dirname(aot))
    cache_trust.check_dir(aot)


def _signed(path: str, data: bytes) -> bytes:
    return os.path.basename(path).encode() + b"\n" + data


def _read(path: str, limit: int) -> bytes:
    fd = cache_trust.open_checked(path)
    with os.fdopen(fd, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise Untrusted(f"{path} is too large")
    return data


def untrusted(path: str) -> "str | None":
    """Why the library at `path` must not be loaded (None: graphjit wrote it, with this user's key)."""
    try:
        _check_directories(path)
        key = cache_trust.load_key(_cache_root(path), create=False)
        if key is None:
            return "no key to check it with"
        data = _read(path, MAX_LIBRARY_BYTES)
        if not cache_trust.verify(key, _signed(path, data), _read(path + ".hmac", 256)):
            return "its HMAC does not verify (not written by graphjit with this user's key)"
    except Untrusted as e:
        return str(e)
    except OSError as e:
        return f"{type(e).__name__}: {e.strerror or e}"
    return None


def _sign(path: str) -> None:
    """Write `<path>.hmac` for the library just built at `path`."""
    key = cache_trust.load_key(_cache_root(path), create=True)
    mac = cache_trust.sign(key, _signed(path, _read(path, MAX_LIBRARY_BYTES)))
    fd, tmp = cache_trust.temp_file(os.path.dirname(path), prefix=".hmac-")
    try:
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(mac + "\n")
        os.replace(tmp, path + ".hmac")
        tmp = None
    finally:
        if tmp is not None:
            os.unlink(tmp)


def build(fn, kinds: tuple, layout: str, path: str, error_model: str, boundscheck: bool) -> None:
    """Compile `fn` (a kernel's Python function) for `kinds` and `layout` into the library at `path`.
    Raises Numba's errors as they are (Numba refuses the kernel) and Unavailable for the rest."""
    try:
        cache_trust.make_dir(os.path.dirname(path))
        _check_directories(path)
    except (Untrusted, OSError) as e:
        raise Unavailable(f"its directory cannot be trusted: {e}") from None
    try:
        import numba.pycc.compiler as aot_compiler   # setuptools and Numba's pycc
        from numba.core import types
        from numba.core.compiler_lock import global_compiler_lock
        from numba.core.typing import signature
        from numba.np.numpy_support import from_dtype
    except Exception as e:   # noqa: BLE001 - an optional toolchain: any failure means njit instead
        raise Unavailable(f"numba.pycc cannot be imported: {type(e).__name__}: {e}") from None
    objects, toolchain = runtime(os.path.dirname(path))
    argtypes = [_numba_type(types, from_dtype, kind, layout) for kind, layout in _with_layouts(kinds, layout)]
    name = os.path.basename(path).split(".")[0]
    entry = aot_compiler.ExportEntry("run", signature(None, *argtypes), fn)
    compiler = aot_compiler.ModuleCompiler([entry], name, use_nrt=True, cpu_name="host")
    compiler.external_init_function = f"pycc_init_{INIT}"
    build_dir = tempfile.mkdtemp(prefix="graphjit-aot-")
    try:
        obj = os.path.join(build_dir, name + ".o")
        with global_compiler_lock:   # the flags pycc builds are njit's: the kernel's error model, bounds checks
            plain = aot_compiler.Flags
            aot_compiler.Flags = _flags_class(plain, error_model, boundscheck)
            try:
                compiler.write_native_object(obj, wrap=True)
            except Exception as e:
                if type(e).__module__.startswith("numba") or isinstance(e, ImportError):
                    raise   # Numba refuses the kernel (ImportError: SciPy missing for np.dot)
                raise Unavailable(f"pycc failed: {type(e).__name__}: {str(e).strip()[:200]}") from None
            finally:
                aot_compiler.Flags = plain
        try:
            tmp = os.path.join(build_dir, os.path.basename(path))
            toolchain.link_shared(tmp, [obj] + objects, toolchain.get_python_libraries(),
                                  toolchain.get_python_library_dirs(), export_symbols=compiler.dll_exports,
                                  extra_ldflags=["-pthread"] if sys.platform.startswith("linux") else [])
            os.chmod(tmp, 0o700)   # the linker's mode follows the umask
            os.replace(tmp, path)
            _sign(path)
        except Untrusted as e:
            raise Unavailable(f"the library cannot be signed: {e}") from None
        except Exception as e:   # noqa: BLE001 - distutils' CompileError/LinkError, OSError
            _STATE["unavailable"] = f"linking failed: {type(e).__name__}: {str(e).strip()[:200]}"
            raise Unavailable(_STATE["unavailable"]) from None   # the next kernels go to njit directly
    finally:
        shutil.rmtree(build_dir, ignore_errors=True)


def _flags_class(base, error_model: str, boundscheck: bool):
    class KernelFlags(base):
        """pycc's compile flags with the kernel's error model and bounds checks."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.error_model = error_model
            self.boundscheck = boundscheck

    return KernelFlags


def _with_layouts(kinds: tuple, layout: str):
    layouts = iter(layout)
    for kind in kinds:
        yield kind, next(layouts) if kind.startswith("arr:") else None


def _numba_type(types, from_dtype, kind: str, layout):
    """Numba's type of an argument: what `numba.njit` would infer for the planned eager kind."""
    if kind.startswith("arr:"):
        _, dtype, rank, *_ = kind.split(":")
        return types.Array(from_dtype(np.dtype(dtype)), int(rank), "A" if layout == "U" else layout.upper(),
                           readonly=layout.islower(), aligned=layout != "U")
    if kind.split(":")[0] in ("float", "int", "bool"):
        return {"float": types.float64, "int": types.int64, "bool": types.boolean}[kind.split(":")[0]]
    return from_dtype(np.dtype(kind[3:]))


def runtime(directory: str):
    """Numba's runtime object files for ahead-of-time libraries (compiled once per machine into
    `directory`) and the C toolchain that links them; a failure is remembered for the process."""
    root = os.path.join(directory, f"runtime-{machine_key()}")
    with _LOCK:
        if "unavailable" in _STATE:
            raise Unavailable(_STATE["unavailable"])
        if _STATE.get("runtime", (None,))[0] != root:
            try:
                _STATE["runtime"] = (root, _runtime(root))
            except Unavailable as e:
                _STATE["unavailable"] = str(e)
                raise
        return _STATE["runtime"][1]


def _runtime(root: str) -> tuple:
    try:
        from numba.pycc.cc import CC
        from numba.pycc.platform import Toolchain
        toolchain = Toolchain()   # checks that a C compiler works
    except Exception as e:   # noqa: BLE001
        raise Unavailable(f"no working C toolchain: {type(e).__name__}: {str(e).strip()[:200]}") from None
    manifest = os.path.join(root, "objects.json")
    if not os.path.exists(manifest):
        from .. import log
        log.info("vectorize", "compiling Numba's runtime for ahead-of-time kernels (once per machine) into %s", root)
        tmp = None
        try:
            cache_trust.make_dir(os.path.dirname(root))
            tmp = tempfile.mkdtemp(prefix="runtime-", dir=os.path.dirname(root))
            objects = CC(INIT, source_module=__name__)._compile_mixins(tmp)
            for o in objects:
                os.chmod(o, cache_trust.FILE_MODE)   # the compiler's modes follow the umask
            cache_trust.write_file(os.path.join(tmp, "objects.json"),
                                   json.dumps([os.path.relpath(o, tmp) for o in objects]).encode())
            os.replace(tmp, root)
        except OSError:
            if tmp:
                shutil.rmtree(tmp, ignore_errors=True)   # another process built it first, or no room
            if not os.path.exists(manifest):
                raise Unavailable("the runtime could not be written") from None
        except Exception as e:   # noqa: BLE001 - the C compiler failed
            if tmp:
                shutil.rmtree(tmp, ignore_errors=True)
            raise Unavailable(f"compiling the runtime failed: {type(e).__name__}: {str(e).strip()[:200]}") from None
    return _runtime_objects(root, manifest), toolchain


def _runtime_objects(root: str, manifest: str) -> list:
    """The runtime's object files (linked into every library, so checked as the libraries are: the
    user's, not writable by others, inside the runtime directory)."""
    try:
        cache_trust.check_dir(root, follow=True)   # tests share one runtime through a link
        objects = json.loads(_read(manifest, 1 << 16))
        if not isinstance(objects, list) or not all(isinstance(o, str) for o in objects):
            raise Untrusted(f"{manifest} is not a list of object files")
        paths = [os.path.normpath(os.path.join(root, o)) for o in objects]
        for p in paths:
            if not p.startswith(os.path.normpath(root) + os.sep):
                raise Untrusted(f"{manifest} names a file outside its directory")
            cache_trust.check(os.lstat(p), p, "file")
        return paths
    except (Untrusted, OSError, ValueError) as e:
        raise Unavailable(f"Numba's runtime in {root} cannot be trusted: {e}") from None
