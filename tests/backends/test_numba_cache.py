"""A kernel compiled by one process is not compiled again by the next: graphjit's disk cache gives
the generated code, and Numba's own cache (`cache=True`, beside the kernel's file in graphjit's
cache directory) gives the machine code."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from locations import REPO

pytest.importorskip("numba")

PROGRAM = textwrap.dedent('''
    import json, sys, time
    t0 = time.perf_counter()
    import numpy as np
    import graphjit
    import numba
    from numba.core.registry import cpu_target
    cpu_target.target_context.refresh()   # Numba's one-time start in a process (1-2 s here, SciPy's BLAS
    t1 = time.perf_counter()              # check included): paid by any Numba code, timed apart

    def recurrence(b, a):
        x = np.empty_like(b)
        x[0] = b[0]
        for i in range(1, len(b)):
            x[i] = a * x[i - 1] + b[i]
        return x

    b = np.linspace(0.0, 1.0, 1000)
    jitted = graphjit.jit(recurrence, jit_level="O2")
    start = time.perf_counter()
    out = jitted(b, 0.5)
    first = time.perf_counter() - start
    expected = recurrence(b, 0.5)
    print(json.dumps({"first_call": first, "imports": t1 - t0, "equal": bool(np.allclose(out, expected)),
                      "kernel": "_numba_kernel(" in jitted.source(b, 0.5),
                      "disk": jitted.cache_info()}, default=str))
''')


def run(program, env):
    out = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def numba_cache_files(root):
    found = {}
    for folder, _, files in os.walk(root):
        for name in files:
            if name.endswith((".nbi", ".nbc")):
                path = os.path.join(folder, name)
                found[path] = os.stat(path).st_mtime_ns
    return found


def test_a_second_process_loads_the_kernel_from_numbas_cache(tmp_path):
    program = tmp_path / "recurrence_program.py"
    program.write_text(PROGRAM)
    cache = tmp_path / "cache"
    env = {**os.environ, "GRAPHJIT_CACHE_DIR": str(cache), "GRAPHJIT_NUMBA": "1",
           "PYTHONPATH": str(REPO.parent), "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    cold = run(program, env)
    assert cold["equal"] and cold["kernel"]
    files = numba_cache_files(cache / "numba")
    assert any(p.endswith(".nbc") for p in files) and any(p.endswith(".nbi") for p in files)
    warm = run(program, env)
    assert warm["equal"] and warm["kernel"]
    assert numba_cache_files(cache / "numba") == files   # reused as they are: nothing compiled again
    assert warm["first_call"] < cold["first_call"]
    print(f"first call: cold {cold['first_call'] * 1e3:.0f} ms, warm {warm['first_call'] * 1e3:.1f} ms "
          f"(Numba's own start before it: {warm['imports']:.2f} s)")
