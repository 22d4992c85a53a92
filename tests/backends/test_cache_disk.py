"""The on-disk cache: reuse across JitFunctions and processes, invalidation, damage, races, limits."""

import importlib
import json
import os
import pathlib
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from click.testing import CliRunner

import graphjit as ms
from graphjit.backends import disk_cache
from graphjit.cli import main

from locations import REPO


def triple(x):
    return x * 3.0 + 1.0


def entry_files():
    return sorted(pathlib.Path(os.environ["GRAPHJIT_CACHE_DIR"]).glob("v2/*/*.py"))


def fresh_call(fn, *args, **options):
    jitted = ms.jit(fn, **options)
    return jitted(*args), jitted.cache_info()


def test_a_new_jit_function_loads_from_disk():
    x = np.arange(4.0)
    out, info = fresh_call(triple, x)
    assert info["compiles"] == 1 and info["disk_writes"] == 1
    [path] = entry_files()
    text = path.read_text()
    assert text.startswith("# graphjit cache entry v2\n# hmac-sha256: ")
    assert "# function: tests.test_cache_disk:triple" in text or "# function: test_cache_disk:triple" in text
    assert "# signature: (x: array float64 <f8 (4,))" in text and "def triple(x):" in text
    again, info = fresh_call(triple, x)
    np.testing.assert_array_equal(again, out)
    assert info["compiles"] == 0 and info["disk_loads"] == 1


def test_cache_false_and_env_turn_the_disk_off(monkeypatch):
    fresh_call(triple, np.ones(2), cache=False)
    assert entry_files() == []
    monkeypatch.setenv("GRAPHJIT_CACHE", "0")
    fresh_call(triple, np.ones(2))
    assert entry_files() == []
    monkeypatch.delenv("GRAPHJIT_CACHE")
    fresh_call(triple, np.ones(2))
    assert len(entry_files()) == 1


@pytest.mark.parametrize("damage, message", [
    ("corrupt", "HMAC does not verify"),
    ("truncated", "HMAC does not verify"),
    ("foreign", "not a graphjit cache entry"),
    ("other_key", "belongs to another key"),
])
def test_damaged_entries_are_a_logged_miss_and_rebuilt(damage, message, caplog):
    x = np.arange(3.0)
    fresh_call(triple, x)
    [path] = entry_files()
    data = path.read_bytes()
    if damage == "corrupt":
        path.write_bytes(data.replace(b"* 3.0", b"* 4.0"))
    elif damage == "truncated":
        path.write_bytes(data[:len(data) // 2])
    elif damage == "foreign":
        path.write_text("print('not ours')\n")
    else:  # a valid entry of another function copied into this slot
        fresh_call(triple, np.arange(5.0))
        other = next(p for p in entry_files() if p.parent != path.parent)
        path.write_bytes(other.read_bytes())
    with warnings.catch_warnings(), caplog.at_level("INFO", logger="graphjit.cache"):
        warnings.simplefilter("error")
        out, info = fresh_call(triple, x)
    assert [r for r in caplog.records if message in r.getMessage()]
    np.testing.assert_array_equal(out, x * 3.0 + 1.0)
    assert info["compiles"] == 1 and info["disk_loads"] == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, info = fresh_call(triple, x)  # rebuilt (the same variant's file replaced): a clean load now
    assert info["disk_loads"] == 1


def test_unwritable_cache_dir_falls_back_to_memory_with_one_warning(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("GRAPHJIT_CACHE_DIR", str(blocker / "cache"))  # cannot be created
    with pytest.warns(ms.GraphjitWarning, match="cannot write the compilation cache") as record:
        out, info = fresh_call(triple, np.ones(2))
        out2, info2 = fresh_call(triple, np.ones(3))
    assert len(record) == 1
    assert info["compiles"] == 1 and info2["compiles"] == 1 and info["disk_writes"] == 0
    np.testing.assert_array_equal(out, np.full(2, 4.0))


def test_read_only_cache_dir(tmp_path, monkeypatch):
    root = tmp_path / "ro"
    monkeypatch.setenv("GRAPHJIT_CACHE_DIR", str(root))
    fresh_call(triple, np.ones(2))   # an entry written while it was writable
    if os.geteuid() != 0:
        os.chmod(root / "v2", 0o500)
        for d in (root / "v2").iterdir():
            if d.is_dir():
                os.chmod(d, 0o500)
    else:  # root ignores permissions: make the writes fail as a read-only file system would
        import errno

        def read_only(*args, **kwargs):
            raise OSError(errno.EROFS, "Read-only file system")
        monkeypatch.setattr(disk_cache.os, "replace", read_only)
    try:
        with pytest.warns(ms.GraphjitWarning, match="cannot write") as record:
            out, info = fresh_call(triple, np.ones(5))      # a new entry cannot be stored
            out2, info2 = fresh_call(triple, np.ones(6))
        assert len(record) == 1 and info["compiles"] == 1 and info2["compiles"] == 1
        out3, info3 = fresh_call(triple, np.ones(2))         # the old one still loads
        assert info3["disk_loads"] == 1
    finally:
        for d in [root / "v2", *(root / "v2").iterdir()]:
            if d.is_dir():
                os.chmod(d, 0o700)


def test_size_cap_evicts_least_recently_used(monkeypatch):
    fresh_call(triple, np.ones(1))
    size = entry_files()[0].stat().st_size
    monkeypatch.setenv("GRAPHJIT_CACHE_SIZE", str(int(size * 3.5)))
    for n in range(2, 8):
        fresh_call(triple, np.ones(n))
        assert sum(p.stat().st_size for p in entry_files()) <= size * 3.5 + 16
    names = "".join(p.read_text() for p in entry_files())
    assert "(7,)" in names and "(1,)" not in names


def test_cli_cache_info_and_clear():
    fresh_call(triple, np.ones(2))
    fresh_call(triple, np.ones(2))
    disk_cache.current().flush_stats()
    result = CliRunner().invoke(main, ["cache", "info", "-v"])
    assert result.exit_code == 0, result.output
    assert "entries: 1" in result.output and "1 hits" in result.output and "triple-" in result.output
    result = CliRunner().invoke(main, ["cache", "clear"])
    assert result.exit_code == 0 and "removed 1 entry" in result.output and "left" not in result.output
    assert entry_files() == []
    root = pathlib.Path(os.environ["GRAPHJIT_CACHE_DIR"])
    assert (root / "v2" / "CACHEDIR.TAG").exists() and (root / "graphjit.key").exists()


def test_no_sink_entries_stay_in_memory():
    fresh_call(triple, np.ones(2), exec_mode="no_sink")
    assert entry_files() == []


# --- several modules and processes -----------------------------------------------------------------
HELPER = """
FACTOR = {factor}


def scale(x):
    return x * FACTOR
"""

USER = """
import numpy as np
import {helper}


def run(x):
    return {helper}.scale(x) + 1.0
"""


def write_modules(tmp_path, name, factor=2.0):
    (tmp_path / f"{name}_helper.py").write_text(HELPER.format(factor=factor))
    (tmp_path / f"{name}_user.py").write_text(USER.format(helper=f"{name}_helper"))
    return tmp_path


def test_editing_a_helper_in_another_module_invalidates(tmp_path, monkeypatch):
    write_modules(tmp_path, "edit1")
    monkeypatch.syspath_prepend(str(tmp_path))
    helper = importlib.import_module("edit1_helper")
    user = importlib.import_module("edit1_user")
    x = np.ones(3)
    run = ms.jit(user.run)
    np.testing.assert_array_equal(run(x), x * 2 + 1)
    assert fresh_call(user.run, x)[1]["disk_loads"] == 1

    (tmp_path / "edit1_helper.py").write_text(HELPER.format(factor=2.0).replace("x * FACTOR", "x * FACTOR * 10"))
    importlib.reload(helper)
    np.testing.assert_array_equal(run(x), x * 20 + 1)       # the same jitted function: a guard failed
    assert run.cache_info()["compiles"] == 2
    assert len(entry_files()) == 1                         # the stale entry was replaced
    out, info = fresh_call(user.run, x)                    # a new jitted function loads the new one
    np.testing.assert_array_equal(out, x * 20 + 1)
    assert info["disk_loads"] == 1


def test_changing_a_module_attribute_recompiles(tmp_path, monkeypatch):
    write_modules(tmp_path, "attr1")
    monkeypatch.syspath_prepend(str(tmp_path))
    helper = importlib.import_module("attr1_helper")
    user = importlib.import_module("attr1_user")
    run = ms.jit(user.run)
    x = np.ones(2)
    assert run(x)[0] == 3.0
    helper.FACTOR = 5.0
    assert run(x)[0] == 6.0
    assert run.cache_info()["compiles"] == 2


SCRIPT = """
import json, sys, time
sys.path.insert(0, {path!r})
import numpy as np
import graphjit as ms
import {user}
{prelude}
x = np.arange(6.0).reshape(2, 3)
jitted = ms.jit({user}.run)
out = jitted(x)
print(json.dumps({{"out": out.tolist(), "info": jitted.cache_info(),
                  "libcst": "libcst" in sys.modules, "networkx": "networkx" in sys.modules}}))
"""


def run_script(tmp_path, user, prelude="", env=None, wait=True):
    script = tmp_path / f"script_{user}.py"
    script.write_text(SCRIPT.format(path=str(tmp_path), user=user, prelude=prelude))
    full_env = dict(os.environ, **(env or {}))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=full_env)
    if not wait:
        return proc
    return finish(proc)


def finish(proc):
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1]), err


def test_a_second_process_loads_from_disk_without_the_front_end(tmp_path):
    write_modules(tmp_path, "proc1")
    first, _ = run_script(tmp_path, "proc1_user")
    assert first["info"]["compiles"] == 1 and first["libcst"]
    second, err = run_script(tmp_path, "proc1_user", env={"GRAPHJIT_LOG": "cache"})
    assert second["out"] == first["out"]
    assert second["info"]["compiles"] == 0 and second["info"]["disk_loads"] == 1
    assert not second["libcst"] and not second["networkx"]
    assert "graphjit.cache: run: loaded from disk" in err


def test_two_processes_racing_on_one_entry_both_succeed(tmp_path):
    write_modules(tmp_path, "race1")
    slow_writes = ("import os, time\n_replace = os.replace\n"
                   "os.replace = lambda a, b: (time.sleep(0.3), _replace(a, b))[1]\n")
    procs = [run_script(tmp_path, "race1_user", prelude=slow_writes, wait=False) for _ in range(2)]
    results = [finish(p)[0] for p in procs]
    assert results[0]["out"] == results[1]["out"]
    assert all(r["info"]["compiles"] + r["info"]["disk_loads"] == 1 for r in results)
    assert len(entry_files()) == 1
    third, _ = run_script(tmp_path, "race1_user")
    assert third["info"]["disk_loads"] == 1 and third["out"] == results[0]["out"]


def test_objects_built_at_compile_time_are_rebuilt_the_same_way(tmp_path):
    """samples/jit_function.py builds Network() inside the jitted function, at compile time: a
    process that loads the entry from disk builds it again, at the same moment (the first call),
    so with the same seed it gets the same weights as a process that compiles."""
    code = textwrap.dedent(f"""
        import importlib.util, json, sys
        import numpy as np
        import graphjit as ms
        spec = importlib.util.spec_from_file_location("sample_jit_function", {str(REPO / 'samples' / 'jit_function.py')!r})
        m = importlib.util.module_from_spec(spec); sys.modules["sample_jit_function"] = m
        spec.loader.exec_module(m)
        ms.set_seed(0)
        out = m.run(np.ones([64, 1, 28, 28], np.float32))
        print(json.dumps({{"sum": float(out.astype(np.float64).sum()), "info": m.run.cache_info(),
                          "libcst": "libcst" in sys.modules}}))
    """)
    results = []
    for env in ({}, {}, {"GRAPHJIT_CACHE": "0"}):
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                              env=dict(os.environ, **env))
        assert proc.returncode == 0, proc.stderr
        results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    compiled, loaded, uncached = results
    assert compiled["info"]["compiles"] == 1
    assert loaded["info"]["disk_loads"] == 1 and not loaded["libcst"]
    assert compiled["sum"] == loaded["sum"] == uncached["sum"]
