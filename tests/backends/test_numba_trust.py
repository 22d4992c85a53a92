"""Numba kernels run only graphjit's own code (backends/numba_kernels.py, backends/numba_cache.py,
docs/numba.md "Caching"): a kernel file planted in the cache is never run, a shared /tmp directory
is never used, what kernels write is private whatever the umask, a `numba/` directory others can
write (or a symlink) means no disk cache for kernels (one warning, the same results), and Numba's
cache index is unpickled only from the user's private directory, never from NUMBA_CACHE_DIR."""

import os
import pickle
import stat
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest

import graphjit
from graphjit.backends import numba_kernels

from side_effects import watch

pytest.importorskip("numba")

LINES = ("def trust_prefix(x):\n", "    for i in range(1, x.shape[0]):\n", "        x[i] += x[i - 1]\n")


@pytest.fixture(autouse=True)
def _numba_on(monkeypatch):
    monkeypatch.setenv("GRAPHJIT_NUMBA", "1")
    monkeypatch.setattr(numba_kernels, "_LOADED", {})   # each test compiles its kernels again


def cache_root() -> Path:
    return Path(os.environ["GRAPHJIT_CACHE_DIR"])


def prefix_kernel():
    return numba_kernels.numba_kernel("trust_prefix", "numpy", ("arr:float64:1",), (), LINES)


def run_prefix(handle=None):
    """Run the kernel on 1..8 and check the result is the Python loop's; the handle used."""
    handle = handle or prefix_kernel()
    x = np.arange(1.0, 9.0)
    handle(x)
    np.testing.assert_array_equal(x, np.cumsum(np.arange(1.0, 9.0)))
    return handle


def recurrence(b, a):
    x = np.empty_like(b)
    x[0] = b[0]
    for i in range(1, len(b)):
        x[i] = a * x[i - 1] + b[i]
    return x


def run_recurrence(a=0.5):
    """Through jit at O2 (the loop is a kernel); the result must equal eager Python's."""
    b = np.linspace(0.0, 1.0, 50)
    jitted = graphjit.jit(recurrence, jit_level="O2")
    out = jitted(b, a)
    assert "_numba_kernel(" in jitted.source(b, a)
    np.testing.assert_array_equal(out, recurrence(b, a))
    return out


PLANTED = """import os
os.mkdir({marker!r})


def {name}(*args):
    return None
"""


def plant_source(directory: Path, file_name: str, marker: Path) -> Path:
    path = directory / file_name
    path.write_text(PLANTED.format(marker=str(marker), name=file_name[:-len(".py")].rsplit("_", 1)[0]))
    os.chmod(path, 0o600)
    return path


def graphjit_warnings(record) -> list:
    return [str(w.message) for w in record if issubclass(w.category, graphjit.GraphjitWarning)]


def modes(root: Path) -> dict:
    out = {".": stat.S_IMODE(os.lstat(root).st_mode)}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            out[str(path.relative_to(root))] = stat.S_IMODE(os.lstat(path).st_mode)
    return out


def kernels_compiled() -> list:
    """The dispatchers compiled in this test (with the fixture's empty table)."""
    return [fn for fn, _ in numba_kernels._LOADED.values()]


# --- a planted kernel source never runs -----------------------------------------------------------
def test_a_planted_kernel_file_with_the_right_name_never_runs(tmp_path, monkeypatch):
    run_recurrence()   # learn the kernel file's name (it depends only on the kernel's text)
    names = [p.name for p in (cache_root() / "numba").glob("recurrence_*.py")]
    assert len(names) == 1
    other = tmp_path / "other-cache"
    (other / "numba").mkdir(parents=True, mode=0o700)
    os.chmod(other, 0o700)
    marker = tmp_path / "planted-code-ran"
    planted = plant_source(other / "numba", names[0], marker)
    monkeypatch.setenv("GRAPHJIT_CACHE_DIR", str(other))
    monkeypatch.setattr(numba_kernels, "_LOADED", {})
    run_recurrence()   # equal to eager: the planted function (which does nothing) did not run
    assert not marker.exists(), "the planted kernel file ran"
    assert kernels_compiled(), "the loop ran as a Numba kernel"
    assert planted.read_text().startswith("# graphjit Numba kernel")   # replaced by the kernel's text


# --- no shared /tmp directory ---------------------------------------------------------------------
def test_without_a_usable_cache_kernels_compile_in_memory_and_never_use_tmp(tmp_path, monkeypatch):
    shared = tmp_path / "tmp"
    (shared / "graphjit-numba").mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(shared))   # the machine's shared /tmp, for this test
    handle = prefix_kernel()
    marker = tmp_path / "planted-code-ran"
    plant_source(shared / "graphjit-numba", f"trust_prefix_{handle.sha}.py", marker)
    before = sorted(str(p) for p in shared.rglob("*"))
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("GRAPHJIT_CACHE_DIR", str(blocker / "cache"))   # cannot be created
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        run_prefix(handle)
        run_prefix(numba_kernels.numba_kernel("trust_prefix2", "numpy", ("arr:float64:1",), (), (
            LINES[0].replace("trust_prefix", "trust_prefix2"),) + LINES[1:]))
    assert not marker.exists(), "a kernel file planted in /tmp/graphjit-numba ran"
    assert sorted(str(p) for p in shared.rglob("*")) == before, "something was written to /tmp"
    messages = graphjit_warnings(record)
    assert len(messages) == 1 and f"cannot write the compilation cache in {blocker / 'cache'}" in messages[0]
    assert handle.path.startswith(numba_kernels.UNSAVED)
    assert handle.dispatcher.stats.cache_path is None   # no Numba disk cache


# --- private whatever the umask -------------------------------------------------------------------
@pytest.mark.parametrize("mask", [0o002, 0o000])
def test_what_kernels_write_is_private_whatever_the_umask(mask, monkeypatch, tmp_path):
    monkeypatch.setenv("GRAPHJIT_CACHE_DIR", str(tmp_path / "fresh" / "cache"))
    old = os.umask(mask)
    try:
        handle = run_prefix()
        monkeypatch.setattr(numba_kernels, "_LOADED", {})
        again = run_prefix()   # a new process would do the same: Numba's cache is reused
    finally:
        os.umask(old)
    root = cache_root()
    found = modes(root)
    assert found["."] == 0o700 and found["numba"] == 0o700 and found["numba/__pycache__"] == 0o700, found
    files = {name: mode for name, mode in found.items() if (root / name).is_file()}
    assert all(mode == 0o600 for mode in files.values()), files
    assert any(name.endswith(".nbi") for name in files) and any(name.endswith(".nbc") for name in files)
    assert f"numba/trust_prefix_{handle.sha}.py" in files
    assert handle.dispatcher.stats.cache_path == str(root / "numba" / "__pycache__")
    assert sum(again.dispatcher.stats.cache_hits.values()) == 1


# --- a numba/ others can write: no disk cache -----------------------------------------------------
@pytest.mark.parametrize("kind", ["group-writable", "symlink", "root group-writable"])
def test_a_kernel_dir_others_could_write_means_no_disk_cache_for_kernels(kind, tmp_path):
    root = cache_root()
    root.mkdir(mode=0o700)
    if kind == "symlink":
        target = tmp_path / "elsewhere"
        target.mkdir(mode=0o700)
        (root / "numba").symlink_to(target, target_is_directory=True)
        numba_dir = target
    elif kind == "group-writable":
        numba_dir = root / "numba"
        numba_dir.mkdir()
        os.chmod(numba_dir, 0o770)
    else:
        os.chmod(root, 0o770)
        numba_dir = root
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        run_recurrence(0.25)
        run_recurrence(0.75)   # another kernel: no second warning
    messages = graphjit_warnings(record)
    assert len(messages) == 1, messages   # the root: the disk cache's warning says it for both
    where = f"not using the compilation cache in {root}" if kind.startswith("root") else \
        f"not caching Numba kernels in {root / 'numba'}"
    why = "is a symbolic link" if kind == "symlink" else "can be written by its group"
    assert where in messages[0] and why in messages[0], messages[0]
    dispatchers = kernels_compiled()
    assert dispatchers and all(d.stats.cache_path is None for d in dispatchers)
    assert os.listdir(numba_dir) == [], "kernels wrote into a directory others could write"


# --- Numba's cache index ----------------------------------------------------------------------------
class _Planted:
    """Unpickling it creates a directory: proof that a planted pickle ran."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


def numba_index_name(handle) -> str:
    """The index file Numba keeps for a kernel: `<module>.<qualname>-<first line>.pyXY.nbi`."""
    line = numba_kernels.HEADER.format(error_model=handle.error_model).count("\n") + 1
    module = f"{handle.name}_{handle.sha}"
    return f"{module}.{handle.name}-{line}.py{sys.version_info[0]}{sys.version_info[1]}{sys.abiflags}.nbi"


@pytest.mark.parametrize("untrusted", ["numba/", "numba/__pycache__/", "the index file"])
def test_a_planted_numba_index_where_others_could_write_is_never_unpickled(untrusted, tmp_path):
    root = cache_root()
    pycache = root / "numba" / "__pycache__"
    pycache.mkdir(parents=True, mode=0o700)
    for folder in (root, root / "numba", pycache):
        os.chmod(folder, 0o700)
    handle = prefix_kernel()
    marker = tmp_path / "planted-pickle-ran"
    index = pycache / numba_index_name(handle)
    index.write_bytes(pickle.dumps(_Planted(str(marker))))
    os.chmod(index, 0o600)
    os.chmod({"numba/": root / "numba", "numba/__pycache__/": pycache, "the index file": index}[untrusted],
             0o770 if untrusted == "numba/" else 0o777 if untrusted.endswith("/") else 0o666)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the one warning about an untrusted numba/ (tested above)
        with watch(allow_exec=True) as seen:   # compiling the kernel's own text executes it
            run_prefix(handle)
    assert not marker.exists(), "Numba unpickled a planted cache index"
    assert [e for e in seen.events if e[0] == "pickle.find_class"] == []


def test_numbas_cache_dir_setting_is_not_where_kernels_are_cached(tmp_path, monkeypatch):
    import numba
    elsewhere = tmp_path / "numba-cache-dir"
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(elsewhere))   # NUMBA_CACHE_DIR
    handle = run_prefix()
    assert not elsewhere.exists()
    assert handle.dispatcher.stats.cache_path == str(cache_root() / "numba" / "__pycache__")
    assert list((cache_root() / "numba" / "__pycache__").glob("*.nbi"))
