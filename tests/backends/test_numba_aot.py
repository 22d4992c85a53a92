"""Kernels compiled ahead of time (backends/numba_aot.py): the same results and exceptions as eager
Python, a later process imports the kernel's library without importing Numba, a strided view gets a
library of its own, and without a C compiler numba.njit compiles the kernel instead.

The semantics tests of test_numba_kernels.py run here again with ahead-of-time libraries (imported
by name below); Numba's runtime for the libraries is compiled once for the session.
"""

import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import graphjit
from graphjit.backends import numba_aot, numba_kernels

from locations import REPO

pytest.importorskip("numba")

# one worker of pytest-xdist runs the whole module: Numba's runtime is compiled once (--dist loadgroup)
pytestmark = pytest.mark.xdist_group("numba_aot")

from test_numba_kernels import (  # noqa: E402,F401  (run again here, with ahead-of-time libraries)
    KERNEL_LOOPS, cases, gather_recurrence, run_same,
    test_a_gather_out_of_bounds_raises_index_error_after_the_same_writes,
    test_a_kernel_numba_refuses_runs_its_python_loop_and_says_why,
    test_a_python_int_result_keeps_its_type_and_numpy_scalars_theirs,
    test_an_index_out_of_bounds_raises_index_error_after_the_same_writes,
    test_arguments_of_other_types_than_planned_run_the_python_loop,
    test_indices_proved_in_bounds_compile_without_checks_for_that_shape_only,
    test_numpy_division_by_zero_gives_inf_and_nan_as_eager,
    test_numpy_integers_wrap_as_eager,
    test_python_division_by_zero_raises_after_the_same_writes,
)


@pytest.fixture(scope="session")
def aot_runtime(tmp_path_factory):
    """Numba's runtime for ahead-of-time libraries, compiled once for the session."""
    directory = tmp_path_factory.mktemp("aot")
    try:
        numba_aot.runtime(str(directory))
    except numba_aot.Unavailable as e:
        pytest.fail(f"ahead-of-time kernels are unavailable here: {e}")
    return directory / f"runtime-{numba_aot.machine_key()}"


@pytest.fixture(autouse=True)
def _aot_on(monkeypatch, aot_runtime):
    monkeypatch.setenv("GRAPHJIT_NUMBA", "1")
    monkeypatch.setenv("GRAPHJIT_NUMBA_AOT", "1")
    # kernels loaded by earlier tests (same source: `for b in data:` does not name the length) load
    # again from this test's own cache directory
    monkeypatch.setattr(numba_kernels, "_LOADED", {})
    aot = Path(numba_kernels.kernel_dir()) / "aot"
    aot.mkdir(parents=True, exist_ok=True)
    (aot / aot_runtime.name).symlink_to(aot_runtime, target_is_directory=True)


def libraries() -> list:
    aot = Path(numba_kernels.kernel_dir()) / "aot"
    return sorted(p.name for p in aot.iterdir() if not p.name.startswith("runtime-"))


@pytest.mark.parametrize("name", KERNEL_LOOPS)
def test_kernel_loops_equal_eager_through_their_libraries(name, rng):
    fn, args = cases(rng)[name]
    jitted = run_same(fn, args, jit_level="O2")
    run_same(fn, cases(np.random.default_rng(7))[name][1], jit_level="O2")
    source = jitted.source(*args)
    # a loop the vectorizer guards (`the loop runs instead when ...`) calls its kernel only when the guard fails
    if "_numba_kernel(" in source and "the loop runs instead" not in source:
        assert libraries(), "the kernel ran from an ahead-of-time library"


def strided_recurrence(x, b):
    for i in range(1, len(x)):
        x[i] = 0.5 * x[i - 1] + b[i]
    return x


def test_a_strided_view_gets_a_library_of_its_own(rng):
    """A library compiled for contiguous arrays would read a strided view's memory wrongly: the call
    checks the layouts and loads (or compiles) the one for `A` (any layout)."""
    jitted = graphjit.jit(strided_recurrence, jit_level="O2")
    b = rng.random(8)
    run_same(strided_recurrence, (rng.random(8), b), jit_level="O2")
    base = rng.random(16)
    expected = strided_recurrence(base.copy()[::2], b)
    view = base.copy()[::2]
    np.testing.assert_array_equal(jitted(view, b), expected)
    np.testing.assert_array_equal(view, expected)
    layouts = {name.split(".")[0].split("_")[-2] for name in libraries()}
    assert {"CC", "AC"} <= layouts, libraries()


def test_read_only_arrays_get_a_library_of_their_own_and_are_never_written(rng):
    """Numba types a read-only array apart and refuses to write it: eager NumPy's ValueError, from
    the Python loop; a read-only array that is only read runs in the kernel."""
    jitted = graphjit.jit(strided_recurrence, jit_level="O2")
    b = rng.random(8)
    b.flags.writeable = False
    x = rng.random(8)
    expected = strided_recurrence(x.copy(), b)
    np.testing.assert_array_equal(jitted(x.copy(), b), expected)
    x.flags.writeable = False
    with pytest.raises(ValueError) as eager_error:
        strided_recurrence(x, b)
    with pytest.raises(ValueError) as compiled_error:
        jitted(x, b)
    assert str(compiled_error.value) == str(eager_error.value)
    assert "Cc" in {name.split(".")[0].split("_")[-2] for name in libraries()}, libraries()


def test_without_a_c_compiler_numba_njit_compiles_the_kernel_and_the_log_says_why(rng, monkeypatch, caplog):
    monkeypatch.setattr(numba_aot, "_STATE", {})
    monkeypatch.setenv("CC", str(Path(os.sep) / "no-such-dir" / "cc"))
    with caplog.at_level(logging.INFO, logger="graphjit.vectorize"):
        run_same(strided_recurrence, (rng.random(9), rng.random(9)), jit_level="O2")
    assert "is compiled by numba.njit, not ahead of time: " in caplog.text
    assert "unavailable" in numba_aot._STATE    # the next kernels are not tried ahead of time
    assert libraries() == []


def test_a_library_directory_others_can_write_is_not_used(rng, monkeypatch, caplog):
    aot = Path(numba_kernels.kernel_dir()) / "aot"
    os.chmod(aot, 0o777)
    with caplog.at_level(logging.INFO, logger="graphjit.vectorize"):
        run_same(strided_recurrence, (rng.random(8), rng.random(8)), jit_level="O2")
    assert "is compiled by numba.njit, not ahead of time: its directory cannot be trusted" in caplog.text
    assert "can be written by its group and others (mode 777)" in caplog.text
    assert libraries() == []


PROGRAM = textwrap.dedent('''
    import json, sys, time
    import numpy as np
    import graphjit

    def gather(x, idx):
        for i in range(1, len(x)):
            x[i] = 0.5 * x[i - 1] + x[idx[i]]
        return x

    x = np.linspace(0.0, 1.0, 50)
    jitted = graphjit.jit(gather, jit_level="O2")
    start = time.perf_counter()
    out = jitted(x.copy(), np.arange(50))
    first = time.perf_counter() - start
    equal = bool(np.array_equal(out, gather(x.copy(), np.arange(50))))
    numba_after_first_call = "numba" in sys.modules
    bad = np.arange(50)
    bad[7] = 60
    try:
        jitted(x.copy(), bad)
        error = None
    except IndexError as e:
        error = str(e)
    print(json.dumps({"first_call": first, "equal": equal, "numba": numba_after_first_call, "error": error,
                      "kernel": "_numba_kernel(" in jitted.source(x, bad)}))
''')


def test_a_second_process_imports_the_library_without_numba(tmp_path, aot_runtime):
    program = tmp_path / "gather_program.py"
    program.write_text(PROGRAM)
    aot = tmp_path / "cache" / "numba" / "aot"
    aot.mkdir(parents=True)
    (aot / aot_runtime.name).symlink_to(aot_runtime, target_is_directory=True)
    env = {**os.environ, "GRAPHJIT_CACHE_DIR": str(tmp_path / "cache"), "GRAPHJIT_NUMBA": "1",
           "GRAPHJIT_NUMBA_AOT": "1", "PYTHONPATH": str(REPO.parent), "OMP_NUM_THREADS": "1"}

    def run():
        out = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, timeout=300, env=env)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout.strip().splitlines()[-1])

    cold = run()
    assert cold["kernel"] and cold["equal"] and cold["numba"]
    built = {p.name: p.stat().st_mtime_ns for p in aot.iterdir() if p.suffix != "" and "runtime-" not in p.name}
    assert built
    warm = run()
    assert warm["kernel"] and warm["equal"]
    assert not warm["numba"], "the first call imported Numba"
    assert {p.name: p.stat().st_mtime_ns for p in aot.iterdir() if p.name in built} == built   # not rebuilt
    assert warm["error"] == cold["error"] == "index 60 is out of bounds for axis 0 with size 50"
    print(f"first call: cold {cold['first_call'] * 1e3:.0f} ms, warm {warm['first_call'] * 1e3:.1f} ms")


def test_a_library_graphjit_did_not_sign_is_compiled_again(tmp_path, aot_runtime):
    """A library is native code: a modified one is never loaded (backends/cache_trust.py); a new
    process compiles and signs it again (a process that loaded a library cannot rebuild it)."""
    program = tmp_path / "gather_program.py"
    program.write_text(PROGRAM)
    aot = tmp_path / "cache" / "numba" / "aot"
    aot.mkdir(parents=True)
    (aot / aot_runtime.name).symlink_to(aot_runtime, target_is_directory=True)
    env = {**os.environ, "GRAPHJIT_CACHE_DIR": str(tmp_path / "cache"), "GRAPHJIT_NUMBA": "1",
           "GRAPHJIT_NUMBA_AOT": "1", "PYTHONPATH": str(REPO.parent), "OMP_NUM_THREADS": "1",
           "GRAPHJIT_LOG": "vectorize"}

    def run():
        out = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, timeout=300, env=env)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr

    run()
    [library] = [p for p in aot.iterdir() if p.name.endswith(".so")]
    assert (aot / (library.name + ".hmac")).exists() and oct(library.stat().st_mode)[-3:] == "700"
    library.write_bytes(library.read_bytes() + b"planted")
    again, err = run()
    assert again["equal"] and again["kernel"] and again["numba"]
    assert f"kernel library {library} is not loaded: its HMAC does not verify" in err
    assert not library.read_bytes().endswith(b"planted")   # compiled again, and signed
    assert numba_aot.untrusted(str(library)) is None
