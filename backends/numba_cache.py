"""Numba's own disk cache of a kernel's machine code (`numba.njit(cache=True)`), kept only where
graphjit trusts it: `<cache>/numba/__pycache__/`, a directory graphjit makes 0700 and checks.

Numba's cache is pickles: when a kernel compiles, Numba unpickles its index
(`<kernel file>.<name>-<line>.pyXY.nbi`) and then a data file (`.nbc`), and unpickling can run any
code. Numba checks neither who wrote these files nor where they are (its own places:
`NUMBA_CACHE_DIR`, `__pycache__` beside the source file, else `~/.cache/numba`). So here:

- a kernel's cache is always `<cache>/numba/__pycache__` (Numba's `NUMBA_CACHE_DIR` and its other
  locators are not used for kernels); before every load and every store the cache root, `numba/`
  and `__pycache__/` must be the user's and not writable by group or others, with no symbolic link
  below the root (backends/cache_trust.py), else nothing is loaded or stored;
- an index or data file is unpickled only if it is the user's regular file, not writable by group
  or others; Numba's files are written 0600 (a private temporary file renamed into place);
- the index is stamped with the kernel file's name, which holds the SHA-256 of the kernel's text
  (the text graphjit compiled, never read back from the file).

If Numba's cache machinery is not what this module expects (another Numba version), or
`NUMBA_CACHE_LOCATOR_CLASSES` chooses another place, the kernel gets no disk cache: it is compiled
in every process, with the same results.
"""

from __future__ import annotations

import contextlib
import os
from typing import Optional

from .. import log
from . import cache_trust
from .cache_trust import Untrusted

CACHE_DIR = "__pycache__"   # inside the kernel directory (<cache>/numba)
_CLASSES: dict = {}


def cache_for(fn, directory: str):
    """A Numba cache for the kernel function `fn` (compiled from a file name in the checked kernel
    directory `directory`), to set as its dispatcher's cache; None when there can be none."""
    try:
        cls = _cache_class()
        cache = cls(fn)
    except Exception as e:   # noqa: BLE001 - Numba's cache internals differ: no disk cache
        log.info("vectorize", "kernel %s is not cached on disk by Numba: %s: %s", fn.__name__, type(e).__name__, e)
        return None
    expected = os.path.join(directory, CACHE_DIR)
    if not isinstance(cache._impl.locator, cls.Locator) or cache.cache_path != expected:
        log.info("vectorize", "kernel %s is not cached on disk by Numba: its cache would be in %s, not in %s",
                 fn.__name__, cache.cache_path, expected)
        return None
    return cache


def trusted(cache_path: str) -> bool:
    """`<root>/numba/__pycache__` exists, and it and the directories above it up to the cache root
    are the user's and private (False, logged, when they are not)."""
    root = os.path.dirname(os.path.dirname(cache_path))
    try:
        cache_trust.check_dirs(root, cache_path)
    except FileNotFoundError:
        return False
    except (Untrusted, OSError) as e:
        log.info("vectorize", "Numba's cache in %s is not used: %s", cache_path, e)
        return False
    return True


def private_file(path: str) -> bool:
    """`path` is missing, or the user's regular file that nobody else can write (may be unpickled)."""
    try:
        cache_trust.check(os.lstat(path), path, "file")
    except FileNotFoundError:
        return True
    except (Untrusted, OSError) as e:
        log.info("vectorize", "Numba's cache file %s is not read: %s", path, e)
        return False
    return True


_NEEDED = {   # what the classes below override or call, by Numba class
    "IndexDataCacheFile": ("_load_index", "_load_data", "_open_for_write", "_data_path"),
    "Cache": ("load_overload", "save_overload"),
    "FunctionCache": (),
    "CompileResultCacheImpl": (),
    "_CacheLocator": ("ensure_cache_path",),
}


def _cache_class():
    """Numba's FunctionCache for kernels, with the locator, index and checks above (built once)."""
    if "cache" in _CLASSES:
        return _CLASSES["cache"]
    from numba.core import caching
    for owner, names in _NEEDED.items():
        cls = getattr(caching, owner, None)
        if cls is None or any(not hasattr(cls, n) for n in names):
            raise AttributeError(f"numba.core.caching.{owner} is not what graphjit expects")

    class Locator(caching._CacheLocator):
        """The kernel's cache is `__pycache__` beside its file, made 0700 and checked."""

        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = os.path.join(os.path.dirname(py_file), CACHE_DIR)

        def ensure_cache_path(self):
            cache_trust.make_dir(self._cache_path)
            if not trusted(self._cache_path):
                raise Untrusted(f"{self._cache_path} is not private")

        def get_cache_path(self):
            return self._cache_path

        def get_source_stamp(self):   # the file's name holds the SHA-256 of the text compiled
            return os.path.basename(self._py_file)

        def get_disambiguator(self):
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func, py_file):
            return cls(py_func, py_file)

    class Impl(caching.CompileResultCacheImpl):
        _locator_classes = [Locator]

    class Index(caching.IndexDataCacheFile):
        """Numba's index and data files, unpickled only when private, written 0600."""

        def _load_index(self):
            path = getattr(self, "_index_path", None)
            if path is None or not private_file(path):
                return {}
            return super()._load_index()

        def _load_data(self, name):
            path = self._data_path(name)
            if not private_file(path):
                raise OSError(f"{path} is not private")   # Numba: no entry, compile
            return super()._load_data(name)

        @contextlib.contextmanager
        def _open_for_write(self, filepath):
            fd, tmp = cache_trust.temp_file(os.path.dirname(filepath), prefix=".numba-")
            try:
                with os.fdopen(fd, "wb") as f:
                    yield f
                os.replace(tmp, filepath)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise

    class KernelCache(caching.FunctionCache):
        _impl_class = Impl

        def __init__(self, py_func):
            super().__init__(py_func)
            self._cache_file = Index(cache_path=self._cache_path, filename_base=self._impl.filename_base,
                                     source_stamp=self._impl.locator.get_source_stamp())

        def load_overload(self, sig, target_context) -> Optional[object]:
            if not trusted(self._cache_path):
                return None
            return super().load_overload(sig, target_context)

        def save_overload(self, sig, data) -> None:
            try:
                self._impl.locator.ensure_cache_path()
                super().save_overload(sig, data)
            except (Untrusted, OSError) as e:   # no room, or no longer private: not stored
                log.info("vectorize", "Numba's cache in %s is not written: %s", self._cache_path, e)

    KernelCache.Locator = Locator
    _CLASSES["cache"] = KernelCache
    return KernelCache
