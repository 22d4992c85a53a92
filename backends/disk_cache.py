"""The on-disk cache of generated sources: a second process skips the front end and the passes.

Layout under the cache directory ($GRAPHJIT_CACHE_DIR, else the platform's user cache directory,
e.g. ~/.cache/graphjit):

    v1/<function>-<key digest>/<variant>.py    one entry: header, checksum, metadata, source
    v1/stats.log                                one line of counters per process that used the cache

A slot (one key) holds variants: entries with the same key whose guards or inlined sources
differ (e.g. two models of different sizes passed to one function). An entry file is Python
source with a commented header naming its key:

    # graphjit cache entry v1
    # sha256: 6f1c...            (of everything below this line)
    # key: 3b2a...
    # function: samples.network:run @ /.../samples/network.py
    # ... one line per key component ...
    # meta: {"name": "run", "guards": [...], "line_table": [...], "consts": [...], ...}
    def run(x):
        ...

Writes go to a temporary file in the slot and are renamed into place (`os.replace`), so readers
see a whole old file or a whole new one, and two processes compiling the same entry both succeed.
A file whose magic line, checksum, key or metadata is wrong is reported once, removed and rebuilt.
A directory that cannot be created or written falls back to memory with one warning. The total
size is capped ($GRAPHJIT_CACHE_SIZE, default 256M); the least recently used entries go first
(a hit refreshes the file's modification time).
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import sys
import threading
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Optional

from .. import log
from ..graph.diagnostics import GraphjitWarning, user_stacklevel
from .cache_key import CacheKey

MAGIC = "# graphjit cache entry v1"
LAYOUT = "v1"
DEFAULT_SIZE = 256 * 1024 * 1024


@dataclass
class StoredEntry:
    """What is needed to run a compiled entry without the front end."""

    name: str                 # the generated function's name
    source: str               # the generated source
    line_table: list          # [generated line, file, line, col, end line, end col]
    inlined: list             # (qualname, file, first, last, sha) of everything inlined
    guards: list              # GuardSet.to_json()
    consts: list              # how to rebuild each `_k[i]` (see backends/const_recipes.py)
    pipeline: list = field(default_factory=list)
    compile_seconds: float = 0.0
    path: str = ""            # where it was read from

    def meta(self) -> dict:
        return {"name": self.name, "line_table": self.line_table, "inlined": self.inlined,
                "guards": self.guards, "consts": self.consts, "pipeline": self.pipeline,
                "compile_seconds": round(self.compile_seconds, 6), "created": time.time()}

    def variant(self) -> str:
        body = json.dumps([self.inlined, self.guards, self.consts], sort_keys=True, default=str)
        return hashlib.sha256(body.encode()).hexdigest()[:16]


class CorruptEntry(Exception):
    pass


def default_dir() -> str:
    """$GRAPHJIT_CACHE_DIR, else the platform's user cache directory."""
    env = os.environ.get("GRAPHJIT_CACHE_DIR")
    if env:
        return os.path.abspath(os.path.expanduser(env))
    if sys.platform == "win32":  # pragma: no cover
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
        return os.path.join(base, "graphjit", "Cache")
    if sys.platform == "darwin":  # pragma: no cover
        return os.path.expanduser("~/Library/Caches/graphjit")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(base, "graphjit")


def enabled_by_env() -> bool:
    """GRAPHJIT_CACHE=0 (or off/false/no) turns the disk cache off."""
    return os.environ.get("GRAPHJIT_CACHE", "1").strip().lower() not in ("0", "off", "false", "no")


def size_cap() -> int:
    text = os.environ.get("GRAPHJIT_CACHE_SIZE", "").strip().upper()
    if not text:
        return DEFAULT_SIZE
    factor = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}.get(text[-1:], 1)
    try:
        return int(float(text.rstrip("KMGB") or 0) * factor)
    except ValueError:
        return DEFAULT_SIZE


_STORES: dict = {}
_WARNED: set = set()
_LOCK = threading.Lock()


def warn_once(key: Any, message: str) -> None:
    with _LOCK:
        if key in _WARNED:
            return
        _WARNED.add(key)
    log.info("cache", "%s", message)
    warnings.warn(message, GraphjitWarning, stacklevel=user_stacklevel())


def current() -> Optional["DiskCache"]:
    """The store for the current settings (None when GRAPHJIT_CACHE=0)."""
    if not enabled_by_env():
        return None
    root = default_dir()
    store = _STORES.get(root)
    if store is None:
        with _LOCK:
            store = _STORES.setdefault(root, DiskCache(root))
    return store


class DiskCache:
    def __init__(self, root: str):
        self.root = root
        self.base = os.path.join(root, LAYOUT)
        self.writable = True          # False after a failed write: memory only, warned once
        self.stats = {"hits": 0, "misses": 0, "writes": 0, "evictions": 0, "corrupt": 0}
        self._size: Optional[int] = None
        self._registered = False

    # --- reading ---------------------------------------------------------------------------
    def slot(self, key: CacheKey) -> str:
        name = key.function.split(":", 1)[-1].split(" @ ")[0]
        safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in name)[:60]
        return os.path.join(self.base, f"{safe}-{key.digest()[:24]}")

    def load(self, key: CacheKey) -> list:
        """The valid entries stored under `key`, most recently used first."""
        slot = self.slot(key)
        try:
            names = [n for n in os.listdir(slot) if n.endswith(".py") and not n.startswith(".")]
        except OSError:
            self._count("misses")
            return []
        out = []
        for name in names:
            path = os.path.join(slot, name)
            try:
                entry = read_entry(path, key)
            except CorruptEntry as e:
                self._count("corrupt")
                warn_once(("corrupt", path), f"graphjit: ignoring cache entry {path}: {e}; it will be rebuilt")
                self.remove(path)
                continue
            except OSError:
                continue
            try:
                mtime = os.stat(path).st_mtime
            except OSError:
                mtime = 0.0
            out.append((mtime, entry))
        out.sort(key=lambda item: -item[0])
        if not out:
            self._count("misses")
        return [e for _, e in out]

    def touch(self, entry: StoredEntry) -> None:
        """A hit: count it and refresh the file's time for least-recently-used eviction."""
        self._count("hits")
        try:
            os.utime(entry.path)
        except OSError:
            pass

    # --- writing ---------------------------------------------------------------------------
    def store(self, key: CacheKey, entry: StoredEntry) -> Optional[str]:
        """Write `entry` atomically; the path written, or None (memory only)."""
        if not self.writable:
            return None
        slot = self.slot(key)
        path = os.path.join(slot, f"{entry.variant()}.py")
        data = render_entry(key, entry).encode("utf-8")
        tmp = None
        try:
            os.makedirs(slot, exist_ok=True)
            import tempfile  # only when writing: a process that only loads never pays for it
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".py", dir=slot)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
            tmp = None
        except OSError as e:
            self.writable = False
            warn_once(("unwritable", self.root),
                      f"graphjit: cannot write the compilation cache in {self.root} ({e.strerror or e}); "
                      "compiled code is cached in memory only for this process "
                      "(set GRAPHJIT_CACHE_DIR to a writable directory, or GRAPHJIT_CACHE=0)")
            return None
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
        self._count("writes")
        if self._size is not None:
            self._size += len(data)
        self.evict()
        return path

    def evict(self, cap: Optional[int] = None) -> int:
        """Remove least recently used entries until the total size is under the cap."""
        cap = size_cap() if cap is None else cap
        if self._size is not None and self._size <= cap:
            return 0
        files = self.entries()
        self._size = sum(size for _, size, _ in files)
        removed = 0
        if self._size > cap:
            for path, size, _ in sorted(files, key=lambda item: item[2]):
                if self._size <= cap * 0.8:
                    break
                if self.remove(path):
                    self._size -= size
                    removed += 1
                    log.info("cache", "evicted %s (%d bytes, least recently used)", path, size)
        if removed:
            self._count("evictions", removed)
        return removed

    def entries(self) -> list:
        """(path, size, mtime) of every entry file; stale temporary files are removed on the way."""
        out = []
        try:
            slots = list(os.scandir(self.base))
        except OSError:
            return out
        now = time.time()
        for slot in slots:
            if not slot.is_dir():
                continue
            try:
                items = list(os.scandir(slot.path))
            except OSError:
                continue
            for item in items:
                try:
                    st = item.stat()
                except OSError:
                    continue
                if item.name.startswith(".tmp-"):
                    if now - st.st_mtime > 3600:
                        self.remove(item.path)
                    continue
                if item.name.endswith(".py"):
                    out.append((item.path, st.st_size, st.st_mtime))
        return out

    def remove(self, path: str) -> bool:
        try:
            os.unlink(path)
        except OSError:
            return False
        try:
            os.rmdir(os.path.dirname(path))  # the slot, if that was its last entry
        except OSError:
            pass
        return True

    # --- statistics ------------------------------------------------------------------------
    def _count(self, name: str, n: int = 1) -> None:
        self.stats[name] += n
        if not self._registered:
            self._registered = True
            atexit.register(self.flush_stats)

    def flush_stats(self) -> None:
        """Append this process's counters to stats.log (one short append: atomic on POSIX)."""
        if not any(self.stats.values()):
            return
        line = json.dumps(dict(self.stats, pid=os.getpid(), time=round(time.time()))) + "\n"
        try:
            os.makedirs(self.base, exist_ok=True)
            with open(os.path.join(self.base, "stats.log"), "a", encoding="utf-8") as f:
                f.write(line)
        except OSError:
            pass
        for k in self.stats:
            self.stats[k] = 0

    def info(self) -> dict:
        files = self.entries()
        totals = {"hits": 0, "misses": 0, "writes": 0, "evictions": 0, "corrupt": 0}
        try:
            with open(os.path.join(self.base, "stats.log"), encoding="utf-8") as f:
                for line in f:
                    try:
                        record = json.loads(line)
                    except ValueError:
                        continue
                    for k in totals:
                        totals[k] += int(record.get(k, 0))
        except OSError:
            pass
        for k in totals:
            totals[k] += self.stats.get(k, 0)
        return {"directory": self.root, "entries": len(files),
                "functions": len({os.path.dirname(p) for p, _, _ in files}),
                "bytes": sum(s for _, s, _ in files), "cap": size_cap(), "files": files, **totals}

    def clear(self) -> int:
        """Remove every entry (and the statistics); returns the number of entries removed."""
        import shutil
        n = len(self.entries())
        shutil.rmtree(self.base, ignore_errors=True)
        self._size = None
        return n


# --- the file format ------------------------------------------------------------------------
def render_entry(key: CacheKey, entry: StoredEntry) -> str:
    body = [f"# key: {key.digest()}"] + [f"# {line}" for line in key.lines()]
    body.append("# meta: " + json.dumps(entry.meta(), separators=(",", ":")))
    rest = "\n".join(body) + "\n" + entry.source
    digest = hashlib.sha256(rest.encode("utf-8")).hexdigest()
    return f"{MAGIC}\n# sha256: {digest}\n{rest}"


def read_entry(path: str, key: Optional[CacheKey] = None) -> StoredEntry:
    """Parse and verify one entry file; raises CorruptEntry (with the reason) or OSError."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise CorruptEntry("not a graphjit cache entry (not text)") from None
    first, _, text = text.partition("\n")
    if first != MAGIC:
        raise CorruptEntry("not a graphjit cache entry (no header)")
    second, _, rest = text.partition("\n")
    if not second.startswith("# sha256: "):
        raise CorruptEntry("no checksum line")
    if hashlib.sha256(rest.encode("utf-8")).hexdigest() != second[len("# sha256: "):].strip():
        raise CorruptEntry("checksum mismatch (truncated or modified)")
    meta = None
    lines = rest.split("\n")
    for k, line in enumerate(lines):
        if line.startswith("# key: ") and key is not None and line[len("# key: "):] != key.digest():
            raise CorruptEntry("it belongs to another key")
        if line.startswith("# meta: "):
            try:
                meta = json.loads(line[len("# meta: "):])
            except ValueError:
                raise CorruptEntry("unreadable metadata") from None
            source = "\n".join(lines[k + 1:])
            break
        if not line.startswith("#"):
            break
    if meta is None:
        raise CorruptEntry("no metadata")
    try:
        return StoredEntry(meta["name"], source, meta["line_table"], [tuple(i) for i in meta["inlined"]],
                           meta["guards"], meta["consts"], meta.get("pipeline", []),
                           meta.get("compile_seconds", 0.0), path)
    except (KeyError, TypeError):
        raise CorruptEntry("incomplete metadata") from None
