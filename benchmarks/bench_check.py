"""`graphjit check` time and peak memory against file size: a file of many small functions, one long function.

    python benchmarks/bench_check.py                  # the issue's inputs: 64 387 small functions (5 MB), one
                                                      # function of 150 000 statements; and smaller ones
    python benchmarks/bench_check.py 3000 20000:lines # other sizes (N small functions, N:lines for one function)
    python benchmarks/bench_check.py --quick          # a small run (the test suite checks the script works)

Each row generates its file in a temporary directory and runs `check_file` on it at STRICT in a
fresh process (parsing caches start cold, and the peak resident memory, `ru_maxrss`, is that
check's). The front end is imported (and warmed up on a one-function file) before the clock starts.
The targets of issue 23: the 5 MB file in <= 30 s and <= 1 GB, the long function in <= 60 s.
A benchmark, not a test: nothing here asserts a time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SMALL = '''
@ms.jit
def f{k}(x, y):
    z = x * {k} + y
    return np.sum(z) + y.mean()
'''

HEADER = "import numpy as np\nimport graphjit as ms\n"


def many_functions(count: int) -> str:
    """`count` small jitted functions (64 387 of them make the issue's 5 MB file)."""
    return HEADER + "".join(SMALL.format(k=k) for k in range(count))


def one_long_function(lines: int) -> str:
    """One jitted function of `lines` statements."""
    body = "".join(f"    x = x + {k}\n" for k in range(lines))
    return f"{HEADER}\n\n@ms.jit\ndef big(x):\n{body}    return x\n"


CHILD = """
import json, resource, sys, time
from graphjit.cli import check_file
check_file(sys.argv[2], 'STRICT')
start = time.perf_counter()
found = check_file(sys.argv[1], 'STRICT')
seconds = time.perf_counter() - start
errors = [d.message for d in found if d.severity == 'error']
print(json.dumps({"seconds": seconds, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "errors": errors[:3]}))
"""


def measure(text: str, timeout: float) -> dict:
    """Seconds and peak MB of checking `text` in a fresh process (or why it did not finish)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench_input.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        warm = os.path.join(tmp, "warm_up.py")
        with open(warm, "w", encoding="utf-8") as f:
            f.write(many_functions(1))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
        try:
            out = subprocess.run([sys.executable, "-c", CHILD, path, warm], capture_output=True, text=True,
                                 env=env, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"failed": f"over {timeout:.0f} s"}
        if out.returncode != 0:
            return {"failed": (out.stderr.strip().splitlines() or [f"exit {out.returncode}"])[-1][:60]}
        result = json.loads(out.stdout.strip().splitlines()[-1])
        result["mb"] = len(text.encode()) / 1e6
        return result


def rows(argv: list) -> list:
    """(label, text) for each size asked for; the defaults when none is."""
    sizes = [a for a in argv if not a.startswith("--")]
    if "--quick" in argv:
        sizes = sizes or ["30", "300:lines"]
    elif not sizes:
        sizes = ["3000", "64387", "20000:lines", "150000:lines"]
    out = []
    for size in sizes:
        count, _, kind = size.partition(":")
        n = int(count)
        if kind == "lines":
            out.append((f"one {n:,}-statement function", one_long_function(n)))
        else:
            out.append((f"{n:,} small functions", many_functions(n)))
    return out


def main(argv: list) -> None:
    timeout = 600.0 if "--quick" not in argv else 120.0
    print(f"{'file':<32} {'MB':>6} {'seconds':>8} {'peak MB':>8}  note")
    for label, text in rows(argv):
        result = measure(text, timeout)
        size = len(text.encode()) / 1e6
        if "failed" in result:
            print(f"{label:<32} {size:>6.2f} {'-':>8} {'-':>8}  {result['failed']}")
            continue
        note = f"errors: {result['errors']}" if result["errors"] else ""
        print(f"{label:<32} {size:>6.2f} {result['seconds']:>8.2f} {result['peak_mb']:>8.0f}  {note}")


if __name__ == "__main__":
    main(sys.argv[1:])
