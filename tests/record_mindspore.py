"""Record MindSpore's results for the cases of mindspore_cases.py into tests/golden/mindspore_tensor.json.

Run with a Python that has MindSpore (not graphjit's venv; CI never runs this):
    python3 -m venv /tmp/msvenv && /tmp/msvenv/bin/pip install "mindspore==2.10.0" "numpy<2"
    /tmp/msvenv/bin/python tests/record_mindspore.py
Each case runs in a process of its own: a MindSpore kernel that cannot be built on this machine (its AKG
compiler) may take the process down, which is recorded as that case's error.
"""

import json
import os
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).parent
OUT = HERE / "golden" / "mindspore_tensor.json"
TIMEOUT = 120   # seconds for one case


def one_case(name: str) -> None:
    sys.path.insert(0, str(HERE))
    import mindspore
    import mindspore_cases
    mindspore.set_device("CPU")
    print("RESULT " + json.dumps(mindspore_cases.run(mindspore, name)))


def main() -> None:
    sys.path.insert(0, str(HERE))
    import mindspore_cases
    env = {**os.environ, "GLOG_v": "3"}
    results = {}
    scratch = tempfile.mkdtemp(prefix="mindspore-cases-")   # MindSpore writes kernel files where it runs
    for name in mindspore_cases.CASES:
        try:
            done = subprocess.run([sys.executable, str(pathlib.Path(__file__).resolve()), name], capture_output=True,
                                  text=True, env=env, timeout=TIMEOUT, cwd=scratch)
            lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
            results[name] = json.loads(lines[-1][7:]) if lines else {
                "kind": "error", "type": "crash", "message": f"MindSpore's process ended ({done.returncode})"}
        except subprocess.TimeoutExpired:
            results[name] = {"kind": "error", "type": "crash", "message": f"no result in {TIMEOUT} s"}
        print(name, results[name]["kind"], flush=True)
    import mindspore
    OUT.write_text(json.dumps({"mindspore": mindspore.__version__, "device": "CPU", "cases": results}, indent=1,
                              sort_keys=True) + "\n")
    print(f"wrote {OUT}: {len(results)} cases, "
          f"{sum(r['kind'] == 'error' for r in results.values())} raise on MindSpore")


if __name__ == "__main__":
    one_case(sys.argv[1]) if len(sys.argv) > 1 else main()
