"""Watch for side effects while graphjit reads a file from elsewhere (docs/security.md).

`with watch() as seen: graphjit.load(path)` records, through a CPython audit hook, every event that
reading a file must never cause: a file opened for writing, a file or folder created, removed or
renamed, a module imported that was not imported before, a process started, a socket opened, a
pickle resolving a global, and code executed by `exec`/`eval` outside graphjit's own modules.
`seen.assert_none()` fails with the list. Audit hooks cannot be removed, so one hook is installed
for the process and records only while a `watch()` is open (in the thread that opened it).

Imports of graphjit's own modules are allowed (`allow_imports`). `allow_exec=True` lets code objects run (compiling a loaded graph to NumPy source executes graphjit's
own generated module); the other events are always recorded.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

# events that are side effects whatever their arguments
_ALWAYS = {
    "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "os.startfile",
    "subprocess.Popen", "os.remove", "os.rmdir", "os.mkdir", "os.rename", "os.link", "os.symlink",
    "os.truncate", "os.chmod", "os.chown", "os.utime", "shutil.rmtree", "shutil.move", "shutil.copyfile",
    "socket.connect", "socket.bind", "socket.__new__", "pickle.find_class", "ctypes.dlopen",
    "os.kill", "os.putenv", "os.unsetenv", "webbrowser.open", "urllib.Request",
}

_state = threading.local()
_installed = False


class Seen:
    """The side effects recorded by one `watch()`."""

    def __init__(self, allow_exec: bool, allow_imports: tuple[str, ...]):
        self.allow_exec = allow_exec
        self.allow_imports = allow_imports
        self.events: list[tuple[str, str]] = []
        self.modules_before = set(sys.modules)

    def record(self, event: str, args) -> None:
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & _WRITE_FLAGS)
            if writing:
                self.events.append((event, repr(path)))
        elif event == "import":
            name = args[0] if args else "?"
            ours = any(name == p or name.startswith(p + ".") for p in self.allow_imports)
            if not ours and name not in self.modules_before and name not in sys.modules:
                self.events.append((event, str(name)))
        elif event == "exec":
            if not self.allow_exec:
                self.events.append((event, repr(getattr(args[0], "co_filename", args[0]))[:120]))
        elif event in _ALWAYS:
            self.events.append((event, repr(args)[:200]))

    def assert_none(self) -> None:
        assert not self.events, "side effects while reading:\n" + "\n".join(f"  {e}: {a}" for e, a in self.events)


def _hook(event: str, args) -> None:
    seen = getattr(_state, "seen", None)
    if seen is None or getattr(_state, "busy", False):
        return
    _state.busy = True
    try:
        seen.record(event, args)
    finally:
        _state.busy = False


@contextlib.contextmanager
def watch(allow_exec: bool = False, allow_imports: tuple[str, ...] = ("graphjit",)):
    """Record side effects in this thread while the block runs; yields a `Seen`.

    Imports of the packages in `allow_imports` (graphjit's own modules, by default) are not recorded.
    """
    global _installed
    if not _installed:
        sys.addaudithook(_hook)
        _installed = True
    seen = Seen(allow_exec, allow_imports)
    outer = getattr(_state, "seen", None)
    _state.seen = seen
    try:
        yield seen
    finally:
        _state.seen = outer
