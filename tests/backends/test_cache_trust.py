"""The disk cache trusts only what it wrote (backends/cache_trust.py, docs/cache.md): a planted entry
never runs, what graphjit creates is private whatever the umask, a cache another user could write
is refused with one warning (memory only, still correct), and a user's own files are never deleted."""

import hashlib
import json
import os
import pathlib
import secrets
import stat
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest
from click.testing import CliRunner

import graphjit as ms
from graphjit.backends import cache_trust, disk_cache
from graphjit.cli import main


def triple(x):
    return x * 3.0 + 1.0


def cache_root() -> pathlib.Path:
    return pathlib.Path(os.environ["GRAPHJIT_CACHE_DIR"])


def entry_files():
    return sorted(cache_root().glob("v2/*/*.py"))


def fresh_call(fn, *args):
    jitted = ms.jit(fn)
    return jitted(*args), jitted.cache_info()


def graphjit_warnings(record):
    return [w for w in record if issubclass(w.category, ms.GraphjitWarning)]


# --- a planted entry never runs -----------------------------------------------------------------
USER = """
def run(x):
    return x * 3.0 + 1.0
"""

SCRIPT = """
import json, sys
sys.path.insert(0, {path!r})
import numpy as np
import graphjit as ms
import plant_user
jitted = ms.jit(plant_user.run)
out = jitted(np.arange(4.0))
print(json.dumps({{"out": out.tolist(), "info": jitted.cache_info()}}))
"""


def run_fresh_process(tmp_path):
    proc = subprocess.run([sys.executable, "-c", SCRIPT.format(path=str(tmp_path))], capture_output=True,
                          text=True, timeout=120, env=dict(os.environ, GRAPHJIT_LOG="cache"))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def plant(text: str, sentinel: pathlib.Path, how: str) -> str:
    """The attack of issue 23: a line of code added, `+ 100.0` in the result, the check line recomputed."""
    magic, _, rest = text.partition("\n")
    _, _, rest = rest.partition("\n")
    assert "    return x * 3.0 + 1.0" in rest
    rest = rest.replace("    return x * 3.0 + 1.0",
                        f"    open({str(sentinel)!r}, 'w').write('planted code ran')\n"
                        "    return x * 3.0 + 1.0 + 100.0")
    if how == "sha256":        # the v1 format's checksum, recomputed
        check = f"# sha256: {hashlib.sha256(rest.encode()).hexdigest()}"
    else:                      # an HMAC under a key of the attacker's
        signed = (magic + "\n" + rest).encode()
        check = f"# hmac-sha256: {cache_trust.sign(secrets.token_bytes(32), signed)}"
    return f"{magic}\n{check}\n{rest}"


@pytest.mark.parametrize("how", ["sha256", "hmac-other-key"])
def test_a_planted_entry_with_its_check_recomputed_is_not_run(tmp_path, how):
    (tmp_path / "plant_user.py").write_text(USER)
    first, _ = run_fresh_process(tmp_path)
    assert first["info"]["disk_writes"] == 1
    [path] = entry_files()
    sentinel = tmp_path / "planted"
    path.write_text(plant(path.read_text(), sentinel, how))
    second, err = run_fresh_process(tmp_path)
    assert not sentinel.exists(), "the planted code ran"
    assert second["out"] == [1.0, 4.0, 7.0, 10.0]
    assert second["info"]["disk_loads"] == 0 and second["info"]["compiles"] == 1
    assert "HMAC does not verify" in err or "no HMAC line" in err
    third, _ = run_fresh_process(tmp_path)       # the planted file was replaced by a real entry
    assert third["info"]["disk_loads"] == 1 and third["out"] == first["out"]


# --- what graphjit creates is private -------------------------------------------------------------
def test_directories_0700_and_files_0600_under_umask_000():
    old = os.umask(0)
    try:
        fresh_call(triple, np.ones(3))
        disk_cache.current().flush_stats()
    finally:
        os.umask(old)
    root = cache_root()
    made = [root, *root.rglob("*")]
    assert {p.name for p in made} >= {"graphjit.key", "CACHEDIR.TAG", "v2", "stats.log"}
    assert len(entry_files()) == 1
    for p in made:
        mode = stat.S_IMODE(p.lstat().st_mode)
        assert mode == (0o700 if p.is_dir() else 0o600), f"{p} is {mode:o}"


# --- a cache another user could write is refused ------------------------------------------------
def make_writable(where: str):
    root = cache_root()
    if where == "root":
        os.chmod(root, 0o770)
    elif where == "layout":
        os.chmod(root / "v2", 0o707)
    elif where == "slot":
        os.chmod(entry_files()[0].parent, 0o770)
    elif where == "entry":
        os.chmod(entry_files()[0], 0o666)
    elif where == "symlink":   # the entry replaced by a link to a file elsewhere
        path = entry_files()[0]
        target = root.parent / "elsewhere.py"
        target.write_bytes(path.read_bytes())
        path.unlink()
        path.symlink_to(target)
    elif where == "key":
        os.chmod(root / "graphjit.key", 0o644)


@pytest.mark.parametrize("where, why", [
    ("root", "can be written by its group (mode 770)"),
    ("layout", "can be written by others (mode 707)"),
    ("slot", "can be written by its group (mode 770)"),
    ("entry", "can be written by its group and others (mode 666)"),
    ("symlink", "is a symbolic link"),
    ("key", "can be read by others"),
])
def test_a_cache_others_can_write_is_refused_with_one_warning(where, why):
    x = np.arange(3.0)
    fresh_call(triple, x)
    make_writable(where)
    before = sorted(cache_root().rglob("*"))
    with pytest.warns(ms.GraphjitWarning, match="not using the compilation cache") as record:
        out, info = fresh_call(triple, x)
        out2, info2 = fresh_call(triple, np.arange(5.0))   # memory only from now on: no second warning
    [w] = graphjit_warnings(record)
    assert why in str(w.message) and "memory only" in str(w.message) and "GRAPHJIT_CACHE_DIR" in str(w.message)
    np.testing.assert_array_equal(out, x * 3.0 + 1.0)
    np.testing.assert_array_equal(out2, np.arange(5.0) * 3.0 + 1.0)
    assert info["disk_loads"] == 0 and info["compiles"] == 1 and info2["disk_writes"] == 0
    assert sorted(cache_root().rglob("*")) == before    # nothing written, nothing removed


def test_files_of_another_user_are_refused(monkeypatch):
    """Tests run as root: the owner check is exercised by pretending to be another user."""
    x = np.arange(3.0)
    fresh_call(triple, x)
    monkeypatch.setattr(cache_trust, "user", lambda: 4242)
    with pytest.warns(ms.GraphjitWarning, match="belongs to user id") as record:
        out, info = fresh_call(triple, x)
    assert len(graphjit_warnings(record)) == 1 and "not to you (user id 4242)" in str(record[0].message)
    np.testing.assert_array_equal(out, x * 3.0 + 1.0)
    assert info["disk_loads"] == 0


def test_an_entry_of_another_user_in_a_private_slot_is_refused(monkeypatch):
    x = np.arange(3.0)
    fresh_call(triple, x)
    [path] = entry_files()
    real = os.fstat

    def fstat(fd):   # the entry file (only) appears to belong to someone else
        st = real(fd)
        if os.path.samestat(st, os.stat(path)):
            return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, 4242) + tuple(st)[5:])
        return st
    monkeypatch.setattr(cache_trust.os, "fstat", fstat)
    with pytest.warns(ms.GraphjitWarning, match=f"{path.name} belongs to user id 4242"):
        out, info = fresh_call(triple, x)
    np.testing.assert_array_equal(out, x * 3.0 + 1.0)
    assert info["disk_loads"] == 0


# --- the user's own files are never deleted -----------------------------------------------------
def test_a_folder_graphjit_did_not_make_is_left_alone(tmp_path, monkeypatch):
    """GRAPHJIT_CACHE_DIR at a folder that already has v2/<name>/*.py (and v1/): refused, untouched."""
    root = tmp_path / "mine"
    for layout in ("v1", "v2"):
        (root / layout / "notes").mkdir(parents=True)
        (root / layout / "notes" / "todo.py").write_text("print('my own file')\n")
    monkeypatch.setenv("GRAPHJIT_CACHE_DIR", str(root))
    monkeypatch.setenv("GRAPHJIT_CACHE_SIZE", "1")
    with pytest.warns(ms.GraphjitWarning, match="was not made by graphjit"):
        out, _ = fresh_call(triple, np.ones(2))
    np.testing.assert_array_equal(out, np.full(2, 4.0))
    result = CliRunner().invoke(main, ["cache", "info"])
    assert result.exit_code == 0 and "not used (memory only):" in result.output
    assert "was not made by graphjit" in result.output
    result = CliRunner().invoke(main, ["cache", "clear"])
    assert result.exit_code == 1 and "not clearing" in result.output
    assert (root / "v1" / "notes" / "todo.py").exists() and (root / "v2" / "notes" / "todo.py").exists()


def test_clear_leaves_the_old_format_alone(monkeypatch):
    fresh_call(triple, np.ones(2))
    old = cache_root() / "v1" / "triple-0123"
    old.mkdir(parents=True)
    (old / "0123456789abcdef.py").write_text("# graphjit cache entry v1\n# sha256: 00\n")
    result = CliRunner().invoke(main, ["cache", "clear"])
    assert result.exit_code == 0 and "removed 1 entry" in result.output
    assert "v1 (the format before entries were signed) is left alone" in result.output
    assert (old / "0123456789abcdef.py").exists() and entry_files() == []


def test_eviction_and_clear_delete_only_entries(monkeypatch):
    fresh_call(triple, np.ones(1))
    [first] = entry_files()
    size = first.stat().st_size
    users = [first.parent / "notes.py", first.parent / "0123456789abcdef.py", cache_root() / "v2" / "mine.py",
             cache_root() / "v2" / "folder" / "kept.py"]
    users[-1].parent.mkdir()
    for p in users:
        p.write_text("print('a file of the user, not an entry')\n")
        os.utime(p, (0, 0))          # the least recently used of all: first in line for eviction
    planted = first.parent / "fedcba9876543210.py"   # the entry header, another key's HMAC
    planted.write_text(first.read_text().replace("# hmac-sha256: ", "# hmac-sha256: 0"))
    os.utime(planted, (0, 0))
    monkeypatch.setenv("GRAPHJIT_CACHE_SIZE", str(int(size * 2.5)))
    for n in range(2, 7):
        fresh_call(triple, np.ones(n))
    assert all(p.exists() for p in users + [planted])
    assert 1 <= len([p for p in entry_files() if p not in users + [planted]]) <= 2   # entries were evicted
    result = CliRunner().invoke(main, ["cache", "clear"])
    assert result.exit_code == 0, result.output
    assert "left 4 files graphjit cannot verify" in result.output   # mine.py is not in a slot
    assert all(p.exists() for p in users + [planted])
    assert sorted(entry_files()) == sorted(p for p in users + [planted] if p.suffix == ".py" and
                                           p.parent.parent == cache_root() / "v2")


# --- the key ------------------------------------------------------------------------------------
KEY_SCRIPT = """
import os, sys, time
from graphjit.backends import cache_trust
link = os.link
os.link = lambda a, b: (time.sleep(0.2), link(a, b))[1]   # every process writes its key before any links
open(sys.argv[2], "w").close()
while not os.path.exists(sys.argv[3]):                     # start together
    time.sleep(0.005)
print(cache_trust.load_key(sys.argv[1], create=True).hex())
"""


def test_processes_creating_the_key_at_once_agree_on_one(tmp_path):
    root = tmp_path / "race"
    root.mkdir(mode=0o700)
    go = tmp_path / "go"
    ready = [tmp_path / f"ready{k}" for k in range(4)]
    procs = [subprocess.Popen([sys.executable, "-c", KEY_SCRIPT, str(root), str(r), str(go)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for r in ready]
    deadline = time.time() + 60
    while not all(r.exists() for r in ready) and time.time() < deadline:
        time.sleep(0.01)
    go.touch()
    keys = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        keys.append(out.strip())
    assert len(set(keys)) == 1 and len(keys[0]) == 64
    key = root / "graphjit.key"
    assert key.read_bytes().hex() == keys[0] and stat.S_IMODE(key.stat().st_mode) == 0o600
    assert sorted(p.name for p in root.iterdir()) == ["graphjit.key"]   # no temporary file left


def test_a_damaged_key_is_refused_not_replaced():
    fresh_call(triple, np.ones(2))
    key = cache_root() / "graphjit.key"
    key.write_bytes(b"short")
    with pytest.warns(ms.GraphjitWarning, match="is damaged; delete it"):
        out, info = fresh_call(triple, np.ones(2))
    assert info["disk_loads"] == 0 and key.read_bytes() == b"short"
    np.testing.assert_array_equal(out, np.full(2, 4.0))


def test_entries_written_with_another_key_are_misses(caplog):
    fresh_call(triple, np.ones(2))
    (cache_root() / "graphjit.key").unlink()
    cache_trust.load_key(str(cache_root()), create=True)   # a new key: the entry was signed with the old one
    with warnings.catch_warnings(), caplog.at_level("INFO", logger="graphjit.cache"):
        warnings.simplefilter("error")
        out, info = fresh_call(triple, np.ones(2))
    assert info["disk_loads"] == 0 and info["compiles"] == 1
    assert any("HMAC does not verify" in r.getMessage() for r in caplog.records)
    np.testing.assert_array_equal(out, np.full(2, 4.0))
