"""Who may have written a file of the on-disk cache: owner and mode checks, private creation, the
per-user key that authenticates entries (HMAC-SHA256), and the tag of directories graphjit made.

An entry is Python source that graphjit runs, so the cache is trusted only when nobody but the user
could have written it:

- every directory from the cache root to the entry, and the entry itself, belongs to the user and
  is not writable by group or others; below the root nothing is a symbolic link (`check`, read
  with lstat or fstat of the open file);
- graphjit creates directories 0700 and files 0600 whatever the umask (`make_dir`, `create_file`);
- each entry carries an HMAC-SHA256 of its whole text under a random 32-byte key kept in
  `<root>/graphjit.key` (0600, owner checked, created once with O_EXCL and a hard link, so two
  processes starting together agree on one key). A file whose HMAC does not verify was not written
  by graphjit with this key, and is never run;
- a directory graphjit made holds `CACHEDIR.TAG` (https://bford.info/cachedir/, with a graphjit
  line): eviction and `graphjit cache clear` delete only in such directories (`is_tagged`).

`Untrusted` says what is wrong and how to fix it; the caller then caches in memory only.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import os
import secrets
import stat
import time
from typing import Optional

KEY_FILE = "graphjit.key"
KEY_BYTES = 32
TAG_FILE = "CACHEDIR.TAG"
TAG_SIGNATURE = "Signature: 8a477f597d28d172789f06886806bc55"
TAG_TEXT = (f"{TAG_SIGNATURE}\n"
            "# This file is a cache directory tag created by graphjit (its compilation cache).\n"
            "# For information about cache directory tags, see https://bford.info/cachedir/\n")
DIR_MODE = 0o700
FILE_MODE = 0o600
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class Untrusted(Exception):
    """Someone other than the user could have written this part of the cache (the message says why)."""


def user() -> Optional[int]:
    """The user the cache must belong to (the effective uid); None where there are no uids (Windows)."""
    return os.geteuid() if hasattr(os, "geteuid") else None


def check(st: os.stat_result, path: str, kind: str) -> None:
    """Raise Untrusted unless `st` (of `path`) is a `kind` ("dir" or "file") only the user can write."""
    if stat.S_ISLNK(st.st_mode):
        raise Untrusted(f"{path} is a symbolic link")
    if kind == "dir" and not stat.S_ISDIR(st.st_mode):
        raise Untrusted(f"{path} is not a directory")
    if kind == "file" and not stat.S_ISREG(st.st_mode):
        raise Untrusted(f"{path} is not a regular file")
    me = user()
    if me is None:   # pragma: no cover - Windows: the user's profile directory is private already
        return
    if st.st_uid != me:
        raise Untrusted(f"{path} belongs to user id {st.st_uid}, not to you (user id {me})")
    if st.st_mode & 0o022:
        who = "its group and others" if st.st_mode & 0o022 == 0o022 else "its group" if st.st_mode & 0o020 \
            else "others"
        raise Untrusted(f"{path} can be written by {who} (mode {stat.S_IMODE(st.st_mode):o})")


def check_dir(path: str, follow: bool = False) -> None:
    """Check a directory of the cache (`follow`: the root, which may be reached through a symlink)."""
    check(os.stat(path) if follow else os.lstat(path), path, "dir")


def check_dirs(root: str, path: str) -> None:
    """Check `root` (which may be reached through a symlink) and every directory below it down to
    `path` (none of them a symlink); OSError (FileNotFoundError) if one is missing."""
    root = os.path.abspath(root)
    path = os.path.abspath(path)
    check_dir(root, follow=True)
    relative = os.path.relpath(path, root)
    if relative == os.curdir:
        return
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        raise Untrusted(f"{path} is not inside {root}")
    current = root
    for part in relative.split(os.sep):
        current = os.path.join(current, part)
        check_dir(current)


def open_checked(path: str) -> int:
    """A read-only descriptor of `path`, refused (Untrusted) if it is a symlink or not the user's
    private regular file; checked on the open file, so it cannot be swapped after the check."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise Untrusted(f"{path} is a symbolic link") from None
        raise
    try:
        check(os.fstat(fd), path, "file")
    except BaseException:
        os.close(fd)
        raise
    return fd


# --- creating -----------------------------------------------------------------------------------
def make_dir(path: str) -> bool:
    """Create `path` 0700 whatever the umask (its missing parents too); True if this call created it."""
    parent = os.path.dirname(path)
    if parent and parent != path and not os.path.isdir(parent):
        make_dir(parent)
    try:
        os.mkdir(path, DIR_MODE)
    except FileExistsError:
        return False
    os.chmod(path, DIR_MODE)
    return True


def make_tagged_dir(path: str) -> bool:
    """Create `path` 0700 holding CACHEDIR.TAG, atomically (made aside, then renamed into place), so
    a process never sees it without its tag; False if it already existed."""
    if os.path.lexists(path):
        return False
    parent = os.path.dirname(path)
    make_dir(parent)
    tmp = os.path.join(parent, f".{os.path.basename(path)}.tmp-{secrets.token_hex(6)}")
    make_dir(tmp)
    tag = os.path.join(tmp, TAG_FILE)
    try:
        write_file(tag, TAG_TEXT.encode())
        os.rename(tmp, path)
        return True
    except OSError as e:
        if e.errno not in (errno.EEXIST, errno.ENOTEMPTY, errno.EISDIR):
            raise
        return False   # another process made it first
    finally:
        if os.path.lexists(tmp):
            for leftover in (tag, tmp):
                try:
                    (os.rmdir if leftover == tmp else os.unlink)(leftover)
                except OSError:
                    pass


def is_tagged(path: str) -> bool:
    """`path` holds the CACHEDIR.TAG graphjit writes (so graphjit made it)."""
    try:
        fd = open_checked(os.path.join(path, TAG_FILE))
    except (OSError, Untrusted):
        return False
    try:
        head = os.read(fd, 4096).decode("utf-8", "replace")
    finally:
        os.close(fd)
    return head.startswith(TAG_SIGNATURE + "\n") and "graphjit" in head


def create_file(path: str) -> int:
    """A new file 0600 (whatever the umask), opened for writing; FileExistsError if `path` exists."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, FILE_MODE)
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, FILE_MODE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def temp_file(directory: str, prefix: str = ".tmp-", suffix: str = "") -> tuple:
    """(descriptor, path) of a new private file in `directory` with a random name."""
    while True:
        path = os.path.join(directory, f"{prefix}{secrets.token_hex(8)}{suffix}")
        try:
            return create_file(path), path
        except FileExistsError:
            continue


def write_file(path: str, data: bytes) -> None:
    """Write a new private file at `path` (FileExistsError if it exists)."""
    fd = create_file(path)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


# --- the key --------------------------------------------------------------------------------------
def load_key(root: str, create: bool) -> Optional[bytes]:
    """The user's key for the cache at `root` (None if there is none and not `create`).

    Created once: a private temporary file with 32 random bytes is hard-linked to the key's name,
    which fails if another process linked its key first; both then read the one that won. Raises
    Untrusted if the key file is not the user's private regular file, or is damaged.
    """
    path = os.path.join(root, KEY_FILE)
    for attempt in range(25):
        try:
            fd = open_checked(path)
        except FileNotFoundError:
            if not create:
                return None
            _create_key(root, path)
            continue
        try:
            st = os.fstat(fd)
            if st.st_mode & 0o077 and user() is not None:
                raise Untrusted(f"{path} (the key that authenticates cache entries) can be read by others "
                                f"(mode {stat.S_IMODE(st.st_mode):o})")
            data = os.read(fd, KEY_BYTES + 1)
        finally:
            os.close(fd)
        if len(data) == KEY_BYTES:
            return data
        if attempt < 24 and len(data) < KEY_BYTES and time.time() - st.st_mtime < 5:   # being written
            # (by the path for file systems without hard links): wait
            time.sleep(0.02)
            continue
        raise Untrusted(f"{path} (the key that authenticates cache entries) is damaged; delete it "
                        "(entries written with it will be rebuilt)")
    raise Untrusted(f"{path} could not be read")   # pragma: no cover


def _create_key(root: str, path: str) -> None:
    fd, tmp = temp_file(root, prefix=".key-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(KEY_BYTES))
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass   # another process's key won
        except OSError:   # a file system without hard links: create the name itself
            try:
                fd = create_file(path)
            except FileExistsError:
                return
            with os.fdopen(fd, "wb") as f:
                f.write(secrets.token_bytes(KEY_BYTES))
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def sign(key: bytes, data: bytes) -> str:
    """The HMAC-SHA256 of `data` under `key`, in hex."""
    return hmac.new(key, data, hashlib.sha256).hexdigest()


def verify(key: bytes, data: bytes, mac: bytes) -> bool:
    """`mac` (hex, as read from a file: any bytes) is the HMAC of `data` under `key`."""
    return hmac.compare_digest(sign(key, data).encode(), mac.strip())
