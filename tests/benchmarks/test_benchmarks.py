"""The benchmark scripts keep working: each runs in its quick mode and prints its table."""

import subprocess
import sys

import pytest

from locations import BENCHMARKS

SCRIPTS = sorted(p.name for p in BENCHMARKS.glob("bench_*.py"))


@pytest.mark.parametrize("script", SCRIPTS)
def test_benchmark_quick_mode_runs(script, tmp_path):
    env = {"GRAPHJIT_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    import os
    env = dict(os.environ, **env)
    proc = subprocess.run([sys.executable, str(BENCHMARKS / script), "--quick"], capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip()  # the report (a table)
