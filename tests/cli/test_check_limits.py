"""`graphjit check` and `transpile` on hostile or odd input: one clear line and a non-zero exit, never a
traceback, a segfault or "no problems found" after an error (the 5 MB and 150 000-statement cases
are timed by benchmarks/bench_check.py; a scaled-down run is here)."""

import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from graphjit.cli import check_file, main

from locations import BENCHMARKS, REPO


def run(*args):
    result = CliRunner().invoke(main, [*map(str, args)])
    return result.exit_code, result.stdout, result.stderr


def test_a_symlink_loop_is_reported_as_a_loop(tmp_path):
    os.symlink(tmp_path / "b.py", tmp_path / "a.py")
    os.symlink(tmp_path / "a.py", tmp_path / "b.py")
    code, out, err = run("check", tmp_path / "a.py")
    assert code == 2
    assert "symbolic link" in err and "no such file" not in err
    assert "no problems found" not in out
    code, _, err = run("transpile", tmp_path / "a.py")
    assert code == 2 and "symbolic link" in err


def test_binary_junk_is_one_error_and_a_non_zero_exit(tmp_path):
    path = tmp_path / "junk.py"
    path.write_bytes(bytes(range(256)) * 4)
    code, out, err = run("check", path)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "cannot decode" in err
    assert "no problems found" not in out


def test_null_bytes_are_a_python_syntax_error(tmp_path):
    path = tmp_path / "nul.py"
    path.write_bytes(b"x = 1\x00\n")
    code, out, _ = run("check", path, "--format", "gcc")
    assert code == 1 and out.startswith(f"{path}:1:1: error:")


def test_a_readable_file_beside_an_unreadable_one_is_still_reported(tmp_path):
    good = tmp_path / "good.py"
    good.write_text("x = 1\n")
    code, out, err = run("check", good, tmp_path / "missing.py")
    assert code == 2 and "no such file" in err


@pytest.mark.parametrize("text", [
    "x = " + "(" * 5_000 + "1" + ")" * 5_000 + "\n",
    "x = " + "[" * 100_000 + "]" * 100_000 + "\n",
    "import graphjit as ms\n\n\n@ms.jit\ndef f(a):\n    return a" + "[0]" * 1_500 + "\n",
])
def test_too_deep_input_is_one_diagnostic_in_a_child_process(tmp_path, text):
    """A child process, as a user runs it: before, these crashed LibCST's parser (rc 139)."""
    path = tmp_path / "deep_input.py"
    path.write_text(text)
    env = dict(os.environ, PYTHONPATH=str(REPO.parent))
    proc = subprocess.run([sys.executable, "-m", "graphjit", "check", "--format", "gcc", str(path)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{path}:") and ": error: " in lines[0]


def test_transpile_of_too_deep_input_is_one_line(tmp_path):
    path = tmp_path / "deep_transpile.py"
    path.write_text("import graphjit as ms\n\n\n@ms.jit\ndef f(a):\n    return a" + "[0]" * 1_500 + "\n")
    code, out, err = run("transpile", path)
    assert code == 1 and "Traceback" not in err
    assert err.strip().splitlines()[0].startswith(f"{path}:6:")


def test_a_400_term_sum_is_checked(tmp_path):
    path = tmp_path / "sum400.py"
    path.write_text("import graphjit as ms\n\n\n@ms.jit\ndef f(a):\n    return " + "+".join(["a"] * 400) + "\n")
    code, out, err = run("check", path)
    assert code == 0, out + err


def test_many_functions_and_a_long_function_scaled_down(tmp_path):
    """The benchmark's two inputs, small: checked without errors (their time is the benchmark's job)."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import bench_check
    finally:
        sys.path.remove(str(BENCHMARKS))
    for name, text in (("many", bench_check.many_functions(200)), ("long", bench_check.one_long_function(2_000))):
        path = tmp_path / f"{name}.py"
        path.write_text(text)
        assert [d for d in check_file(str(path), "STRICT") if d.severity == "error"] == []


def test_a_checked_files_syntax_tree_is_not_kept(tmp_path):
    """`graphjit check a.py b.py ...` holds one file's syntax tree at a time."""
    from graphjit.transpiler import source
    path = tmp_path / "kept.py"
    path.write_text("import graphjit as ms\n\n\n@ms.jit\ndef f(a):\n    return a + 1.0\n")
    check_file(str(path), "LAX")
    assert not [key for key in source._FILES if key[0] == str(path)]


def test_a_huge_source_line_is_shown_cut_around_the_place(tmp_path):
    path = tmp_path / "wide.py"
    path.write_text("x = 1\ny = " + "[" * 300 + "]" * 300 + "\n")
    code, out, _ = run("check", path)
    assert code == 1
    excerpt = [line for line in out.splitlines() if line.startswith("2 | ")]
    assert excerpt and excerpt[0].startswith("2 | ...") and excerpt[0].endswith("...")
    assert max(len(line) for line in out.splitlines()) < 200
    caret = next(line for line in out.splitlines() if "^" in line)
    assert excerpt[0][caret.index("^")] == "["
