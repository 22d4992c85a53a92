"""The on-disk cache of generated sources: a second process skips the front end and the passes.

Layout under the cache directory ($GRAPHJIT_CACHE_DIR, else the platform's user cache directory,
e.g. ~/.cache/graphjit):

    graphjit.key                                the user's key that authenticates entries (0600)
    CACHEDIR.TAG                                when graphjit created the directory itself
    v2/CACHEDIR.TAG                             graphjit made this directory (docs/cache.md)
    v2/<function>-<key digest>/<variant>.py    one entry: header, HMAC, metadata, source
    v2/stats.log                                one line of counters per process that used the cache

A slot (one key) holds variants: entries with the same key whose guards or inlined sources
differ (e.g. two models of different sizes passed to one function). An entry file is Python
source with a commented header naming its key:

    # graphjit cache entry v2
    # hmac-sha256: 6f1c...       (of the whole entry but this line, under the user's key)
    # key: 3b2a...
    # function: samples.network:run @ /.../samples/network.py
    # ... one line per key component ...
    # meta: {"name": "run", "guards": [...], "line_table": [...], "consts": [...], ...}
    def run(x):
        ...

Only what graphjit wrote is run or deleted (backends/cache_trust.py): directories 0700 and files
0600, the user's own, none writable by group or others (else one warning and memory only); an
entry whose HMAC does not verify is a miss, logged, and never run; eviction and `clear` delete
only entries that verify, in the tagged directory, one file at a time.
Writes go to a temporary file in the slot and are renamed into place (`os.replace`), so readers
see a whole old file or a whole new one, and two processes compiling the same entry both succeed.
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
from . import cache_trust
from .cache_key import CacheKey
from .cache_trust import Untrusted

MAGIC = "# graphjit cache entry v2"
MAC_LINE = "# hmac-sha256: "
LAYOUT = "v2"
MAX_ENTRY_BYTES = 64 * 1024 * 1024   # a larger file is not an entry graphjit wrote
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
        self.refused: Optional[str] = None   # why the cache is not trusted: memory only, warned once
        self.stats = {"hits": 0, "misses": 0, "writes": 0, "evictions": 0, "corrupt": 0}
        self._key: Optional[bytes] = None   # the key of the last successful check
        self._size: Optional[int] = None
        self._registered = False
        self._lock = threading.Lock()

    # --- trust -----------------------------------------------------------------------------
    def open(self, create: bool = False) -> Optional[bytes]:
        """The user's key when the cache may be used (None: it may not, or there is nothing yet):
        the root and the layout directory are the user's own and private, the layout directory is
        graphjit's (tagged), the key file is private. Checked at every load and store (a few stat
        calls), so a directory made writable since the last one is seen. With `create`, what is
        missing is created; without, a missing part means nothing to read."""
        if self.refused is not None or (create and not self.writable):
            return None
        key = None
        with self._lock:
            try:
                key = self._open(create)
            except Untrusted as e:
                self.refuse(str(e))
            except OSError as e:
                if create:
                    self.unwritable(e)
            self._key = key
        return key

    def _open(self, create: bool) -> Optional[bytes]:
        if not os.path.isdir(self.root):
            if not create:
                return None
            cache_trust.make_tagged_dir(self.root)
        cache_trust.check_dir(self.root, follow=True)
        if not os.path.lexists(self.base):
            if not create:
                return None
            cache_trust.make_tagged_dir(self.base)
        cache_trust.check_dir(self.base)
        if not cache_trust.is_tagged(self.base):
            raise Untrusted(f"{self.base} was not made by graphjit (it has no graphjit {cache_trust.TAG_FILE})")
        return cache_trust.load_key(self.root, create)

    def trust(self) -> Optional[str]:
        """Why this cache is not used (None: it is, or there is nothing yet); warns nothing."""
        if self.refused is None:
            try:
                self._key = self._open(create=False)
            except Untrusted as e:
                self.refused = str(e)
            except OSError:
                pass
        return self.refused

    def refuse(self, why: str) -> None:
        """Stop using the disk for this root: one warning saying why and what to do."""
        self.refused = why
        self._key = None
        warn_once(("untrusted", self.root),
                  f"graphjit: not using the compilation cache in {self.root}: {why}. Cached code runs only "
                  "from a directory graphjit made that nobody else can write, so compiled code is cached in "
                  "memory only for this process. Make the directory yours and private (`chmod -R go-w`), "
                  "remove what you did not put there, or set GRAPHJIT_CACHE_DIR to another directory.")

    def unwritable(self, e: OSError) -> None:
        self.writable = False
        warn_once(("unwritable", self.root),
                  f"graphjit: cannot write the compilation cache in {self.root} ({e.strerror or e}); "
                  "compiled code is cached in memory only for this process "
                  "(set GRAPHJIT_CACHE_DIR to a writable directory, or GRAPHJIT_CACHE=0)")

    # --- reading ---------------------------------------------------------------------------
    def slot(self, key: CacheKey) -> str:
        name = key.function.split(":", 1)[-1].split(" @ ")[0]
        safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in name)[:60]
        return os.path.join(self.base, f"{safe}-{key.digest()[:24]}")

    def load(self, key: CacheKey) -> list:
        """The entries stored under `key` that verify, most recently used first."""
        slot = self.slot(key)
        secret = self.open()
        if secret is None:
            self._count("misses")
            return []
        try:
            cache_trust.check_dir(slot)
            names = [n for n in os.listdir(slot) if n.endswith(".py") and not n.startswith(".")]
        except Untrusted as e:
            self.refuse(str(e))
            return []
        except OSError:
            self._count("misses")
            return []
        out = []
        for name in names:
            path = os.path.join(slot, name)
            try:
                entry, mtime = read_entry(path, secret, key, with_mtime=True)
            except CorruptEntry as e:
                self._count("corrupt")
                log.info("cache", "ignoring cache entry %s: %s (a miss; it will be rebuilt)", path, e)
                continue
            except Untrusted as e:
                self.refuse(str(e))
                return []
            except OSError:
                continue
            out.append((mtime, entry))
        out.sort(key=lambda item: -item[0])
        if not out:
            self._count("misses")
        return [e for _, e in out]

    def touch(self, entry: StoredEntry) -> None:
        """A hit: count it and refresh the file's time for least-recently-used eviction."""
        self._count("hits")
        try:
            os.utime(entry.path, follow_symlinks=False)
        except (OSError, NotImplementedError):
            pass

    def ours(self, path: str, secret: Optional[bytes]) -> bool:
        """`path` is an entry graphjit wrote with this user's key `secret` (it may be deleted)."""
        if secret is None:
            return False
        try:
            read_entry(path, secret)
            return True
        except (CorruptEntry, Untrusted, OSError):
            return False

    # --- writing ---------------------------------------------------------------------------
    def store(self, key: CacheKey, entry: StoredEntry) -> Optional[str]:
        """Write `entry` atomically; the path written, or None (memory only)."""
        secret = self.open(create=True)
        if secret is None:
            return None
        slot = self.slot(key)
        path = os.path.join(slot, f"{entry.variant()}.py")
        data = render_entry(key, entry, secret).encode("utf-8")
        tmp = None
        try:
            cache_trust.make_dir(slot)
            cache_trust.check_dir(slot)
            fd, tmp = cache_trust.temp_file(slot, suffix=".py")
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
            tmp = None
        except Untrusted as e:
            self.refuse(str(e))
            return None
        except OSError as e:
            self.unwritable(e)
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
        self.evict(secret=secret)
        return path

    def evict(self, cap: Optional[int] = None, secret: Optional[bytes] = None) -> int:
        """Remove least recently used entries until the total size is under the cap. Only entries
        that verify are removed; other files are left alone and not counted."""
        cap = size_cap() if cap is None else cap
        if self._size is not None and self._size <= cap:
            return 0
        secret = secret or self.open()
        files = self.entries(secret)
        self._size = sum(size for _, size, _ in files)
        removed = 0
        if self._size > cap:
            for path, size, _ in sorted(files, key=lambda item: item[2]):
                if self._size <= cap * 0.8:
                    break
                self._size -= size   # removed, or not ours: either way it does not count
                if self.remove(path, secret):
                    removed += 1
                    log.info("cache", "evicted %s (%d bytes, least recently used)", path, size)
        if removed:
            self._count("evictions", removed)
        return removed

    def entries(self, secret: Optional[bytes] = None) -> list:
        """(path, size, mtime) of every `.py` file in the slots (entries, unless someone put other
        files there); stale temporary files that verify are removed on the way."""
        out = []
        secret = secret or self.open()
        if secret is None:
            return out
        try:
            slots = list(os.scandir(self.base))
        except OSError:
            return out
        now = time.time()
        for slot in slots:
            if not slot.is_dir(follow_symlinks=False):
                continue
            try:
                items = list(os.scandir(slot.path))
            except OSError:
                continue
            for item in items:
                try:
                    st = item.stat(follow_symlinks=False)
                except OSError:
                    continue
                if item.name.startswith(".tmp-"):
                    if now - st.st_mtime > 3600:
                        self.remove(item.path, secret)
                    continue
                if item.name.endswith(".py") and item.is_file(follow_symlinks=False):
                    out.append((item.path, st.st_size, st.st_mtime))
        return out

    def remove(self, path: str, secret: Optional[bytes] = None) -> bool:
        """Delete `path` if it is an entry graphjit wrote (it verifies), then its slot if now empty."""
        if not self.ours(path, secret or self.open()):
            return False
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
        if not any(self.stats.values()) or self._key is None:
            return
        line = json.dumps(dict(self.stats, pid=os.getpid(), time=round(time.time()))) + "\n"
        path = os.path.join(self.base, "stats.log")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0),
                         cache_trust.FILE_MODE)
            with os.fdopen(fd, "a", encoding="utf-8") as f:
                if hasattr(os, "fchmod"):
                    os.fchmod(fd, cache_trust.FILE_MODE)
                f.write(line)
        except OSError:
            pass
        for k in self.stats:
            self.stats[k] = 0

    def _stats_lines(self) -> Optional[list]:
        """The records of stats.log (None if it is missing, or holds anything graphjit did not write)."""
        try:
            fd = cache_trust.open_checked(os.path.join(self.base, "stats.log"))
        except (OSError, Untrusted):
            return None
        with os.fdopen(fd, "rb") as f:
            data = f.read(MAX_ENTRY_BYTES)
        records = []
        for line in data.decode("utf-8", "replace").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                return None
            if not isinstance(record, dict) or "pid" not in record:
                return None
            records.append(record)
        return records

    def info(self) -> dict:
        refused = self.trust()   # first: a refused cache is reported here, not warned about
        files = self.entries()
        totals = {"hits": 0, "misses": 0, "writes": 0, "evictions": 0, "corrupt": 0}
        for record in self._stats_lines() or []:
            for k in totals:
                try:
                    totals[k] += int(record.get(k, 0))
                except (TypeError, ValueError):
                    pass
        for k in totals:
            totals[k] += self.stats.get(k, 0)
        return {"directory": self.root, "entries": len(files),
                "functions": len({os.path.dirname(p) for p, _, _ in files}), "refused": refused,
                "bytes": sum(s for _, s, _ in files), "cap": size_cap(), "files": files, **totals}

    def clear(self) -> tuple:
        """Remove every entry that verifies, one file at a time, then the slots left empty, and the
        statistics; (entries removed, other files left). Raises Untrusted when the cache is not
        the user's own (nothing is removed)."""
        why = self.trust()
        if why is not None:
            raise Untrusted(why)
        secret = self.open()
        if secret is None:
            return 0, 0
        removed = left = 0
        for path, _, _ in self.entries(secret):
            if self.remove(path, secret):
                removed += 1
            else:
                left += 1
        if self._stats_lines() is not None:
            try:
                os.unlink(os.path.join(self.base, "stats.log"))
            except OSError:
                pass
        self._size = None
        return removed, left


# --- the file format ------------------------------------------------------------------------
def render_entry(key: CacheKey, entry: StoredEntry, secret: bytes) -> str:
    """The text of an entry: its magic line, the HMAC of everything else under `secret`, the key's
    lines, the metadata and the source."""
    body = [f"# key: {key.digest()}"] + [f"# {line}" for line in key.lines()]
    body.append("# meta: " + json.dumps(entry.meta(), separators=(",", ":")))
    rest = "\n".join(body) + "\n" + entry.source
    mac = cache_trust.sign(secret, f"{MAGIC}\n{rest}".encode("utf-8"))
    return f"{MAGIC}\n{MAC_LINE}{mac}\n{rest}"


def read_entry(path: str, secret: bytes, key: Optional[CacheKey] = None, with_mtime: bool = False):
    """Read and verify one entry file: its StoredEntry (and its mtime, `with_mtime`). Raises
    CorruptEntry (with the reason) when it is not an entry graphjit wrote with `secret` for `key`,
    Untrusted when the file is not the user's private regular file, OSError when it cannot be read.
    Nothing is parsed before the HMAC verifies."""
    fd = cache_trust.open_checked(path)
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if st.st_size > MAX_ENTRY_BYTES:
            raise CorruptEntry("not a graphjit cache entry (too large)")
        data = f.read(MAX_ENTRY_BYTES + 1)
    if len(data) > MAX_ENTRY_BYTES:
        raise CorruptEntry("not a graphjit cache entry (too large)")
    first, _, text = data.partition(b"\n")
    if first.decode("latin-1") != MAGIC:
        raise CorruptEntry("not a graphjit cache entry (no header)")
    second, _, rest = text.partition(b"\n")
    if not second.startswith(MAC_LINE.encode()):
        raise CorruptEntry("no HMAC line")
    if not cache_trust.verify(secret, first + b"\n" + rest, second[len(MAC_LINE):]):
        raise CorruptEntry("HMAC does not verify (modified, truncated, or written with another key)")
    entry = parse_entry(rest.decode("utf-8"), path, key)   # verified: graphjit wrote these bytes
    return (entry, st.st_mtime) if with_mtime else entry


def parse_entry(rest: str, path: str, key: Optional[CacheKey]) -> StoredEntry:
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
