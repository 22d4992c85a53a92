"""`graphjit check` time against file size: it must grow linearly.

    python benchmarks/bench_check.py            # 300, 1000, 3000 small functions; one long function
    python benchmarks/bench_check.py 100 200    # other function counts
    python benchmarks/bench_check.py --quick    # a small run (the test suite checks the script works)

Each row generates a file of N small jitted functions (or one function of N lines) in a temporary
directory and times `check_file` on it at STRICT in a fresh process (so parsing caches start cold).
A benchmark, not a test: the target is 3 000 small functions in under 10 s.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SMALL = '''
@ms.jit
def f{k}(x, y):
    z = x * {k} + y
    if z.shape[0] > 2:
        z = z - 1.0
    return np.sum(z) + y.mean()
'''


def many_functions(count: int) -> str:
    return "import numpy as np\nimport graphjit as ms\n" + "".join(SMALL.format(k=k) for k in range(count))


def one_long_function(lines: int) -> str:
    body = "".join(f"    x = x + {k}\n" for k in range(lines))
    return f"import numpy as np\nimport graphjit as ms\n\n\n@ms.jit\ndef big(x):\n{body}    return x\n"


def time_check(text: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench_input.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        warm = os.path.join(tmp, "warm_up.py")   # first use imports the front end: not part of the time
        with open(warm, "w", encoding="utf-8") as f:
            f.write(many_functions(1))
        code = ("import sys, time\nfrom graphjit.cli import check_file\ncheck_file(sys.argv[2], 'STRICT')\n"
                "start = time.perf_counter()\nfound = check_file(sys.argv[1], 'STRICT')\n"
                "assert not [d for d in found if d.severity == 'error'], found[:3]\n"
                "print(time.perf_counter() - start)\n")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
        out = subprocess.run([sys.executable, "-c", code, path, warm], capture_output=True, text=True, env=env,
                             check=True)
        return float(out.stdout.strip().splitlines()[-1])


def main(argv: list) -> None:
    quick = "--quick" in argv
    counts = [int(a) for a in argv if a != "--quick"] or ([10, 30] if quick else [300, 1000, 3000])
    print(f"{'file':<28} {'seconds':>8} {'ms per unit':>12}")
    for count in counts:
        seconds = time_check(many_functions(count))
        print(f"{f'{count} small functions':<28} {seconds:>8.2f} {1000 * seconds / count:>12.2f}")
    if quick or not argv:
        for lines in ((300,) if quick else (5_000, 20_000)):
            seconds = time_check(one_long_function(lines))
            print(f"{f'one {lines}-line function':<28} {seconds:>8.2f} {1000 * seconds / lines:>12.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
