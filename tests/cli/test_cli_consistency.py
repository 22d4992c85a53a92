"""The command line behaves the same way everywhere: exit statuses, encodings, one-line errors,
messages in the user's words, warnings at the user's line, hints that fit the level in use.

Exit statuses of `graphjit check` and `graphjit transpile`: 2 for usage and input errors (a file
missing, a directory, unreadable, undecodable; `--input` naming no parameter), 1 for problems found
(a Python syntax error included), 0 when clean. `check a.py missing.py b.py` reports a.py and b.py
and exits 2.
"""

from __future__ import annotations

import builtins
import functools
import importlib.util
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest
from click.testing import CliRunner

import graphjit as gj
from graphjit.cli import check_file, main
from graphjit.transpiler import rules

import syntax_corpus
from syntax_corpus import CORPUS

CLEAN = "import numpy as np\nimport graphjit as ms\n\n\n@ms.jit\ndef f(x):\n    return x * 2.0\n"
STRICT_PROBLEM = "import graphjit as ms\n\n\n@ms.jit\ndef f(x):\n    del x\n    return 1\n"


def run(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def write(tmp_path, name, text, encoding="utf-8"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding) if isinstance(text, str) else text)
    return path


# --- exit statuses ---------------------------------------------------------------------------------

@pytest.mark.parametrize("command", ["check", "transpile"])
def test_missing_file_and_directory_exit_2(tmp_path, command):
    code, _, err = run(command, tmp_path / "missing.py")
    assert code == 2 and "no such file" in err and len(err.strip().splitlines()) == 1
    code, _, err = run(command, tmp_path)
    assert code == 2 and "is a directory" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("command", ["check", "transpile"])
def test_unreadable_file_exits_2(tmp_path, command, monkeypatch):
    path = write(tmp_path, "locked.py", CLEAN)
    real_open = builtins.open

    def refusing_open(file, *args, **kwargs):
        if str(file) == str(path):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", refusing_open)
    code, _, err = run(command, path)
    assert code == 2 and "cannot read" in err and "Permission denied" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("command", ["check", "transpile"])
def test_undecodable_file_exits_2(tmp_path, command):
    path = write(tmp_path, "bad.py", b"x = '\xff\xfe'\n")
    code, _, err = run(command, path)
    assert code == 2 and "cannot decode" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("command", ["check", "transpile"])
def test_syntax_error_is_a_problem_found(tmp_path, command):
    path = write(tmp_path, "broken.py", "def f(:\n    return 1\n")
    code, out, err = run(command, path)
    assert code == 1
    assert f"{path}:1" in out + err and "syntax error" in (out + err).lower()


def test_clean_file_and_empty_file_exit_0(tmp_path):
    assert run("check", write(tmp_path, "clean.py", CLEAN))[0] == 0
    code, out, _ = run("check", write(tmp_path, "empty.py", ""))
    assert code == 0 and "no problems found" in out
    assert run("check", write(tmp_path, "plain.py", "x = 1\n"))[0] == 0


def test_problems_exit_1(tmp_path):
    path = write(tmp_path, "strict.py", STRICT_PROBLEM)
    assert run("check", path, "--level", "strict")[0] == 1
    assert run("check", path, "--level", "lax")[0] == 0


def test_check_reports_every_readable_file(tmp_path):
    a = write(tmp_path, "a.py", STRICT_PROBLEM)
    b = write(tmp_path, "b.py", STRICT_PROBLEM.replace("def f", "def g"))
    missing = tmp_path / "missing.py"
    code, out, err = run("check", a, missing, b, "--level", "strict", "--format", "gcc")
    assert code == 2
    assert f"{a}:6:5: error: [GJ303]" in out and f"{b}:6:5: error: [GJ303]" in out
    assert err.strip() == f"{missing}: error: no such file"


def test_transpile_input_that_is_no_parameter(tmp_path):
    path = write(tmp_path, "m.py", CLEAN)
    code, out, err = run("transpile", path, "--input", "y=f64[3]")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "`y` is not a parameter" in err
    assert run("transpile", path, "--input", "x=f64[3]")[0] == 0


# --- PEP 263 encodings -----------------------------------------------------------------------------

LATIN1 = ("# -*- coding: latin-1 -*-\nimport numpy as np\nimport graphjit as ms\n\nNAME = 'café'\n\n\n"
          "@ms.jit\ndef f(x):\n    # poids: é\n    return x * 2.0 + len(NAME)\n")


def test_source_encodings_are_honoured(tmp_path):
    path = write(tmp_path, "latin.py", LATIN1, "latin-1")
    with pytest.raises(UnicodeDecodeError):
        path.read_text(encoding="utf-8")
    assert run("check", path, "--level", "strict")[0] == 0
    code, out, _ = run("transpile", path)
    assert code == 0 and "def f(x):" in out
    spec = importlib.util.spec_from_file_location("latin_sample", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    np.testing.assert_allclose(module.f(np.ones(3)), np.ones(3) * 2.0 + 4)


# --- messages --------------------------------------------------------------------------------------

INTERNAL = re.compile(r"\b(Node|Static|Seq)\b")
CORPUS_NAMES = tuple(n for n, e in CORPUS.items() if e.fn.__module__ == "syntax_corpus")


@functools.cache
def corpus_diagnostics(level: str) -> tuple:
    """`graphjit check` of the whole syntax corpus at `level`, read once for the tests of this file."""
    return tuple(check_file(syntax_corpus.__file__, level, CORPUS_NAMES))


@pytest.mark.parametrize("level", rules.LEVELS)
def test_no_internal_names_in_messages(level):
    diagnostics = corpus_diagnostics(level)
    assert diagnostics
    leaks = [(d.function, d.message, d.hint) for d in diagnostics if INTERNAL.search(d.message + " " + d.hint)]
    assert not leaks


def test_rank_of_unknown_shape_says_so(tmp_path):
    path = write(tmp_path, "shape.py", "import graphjit as ms\n\n\n@ms.jit\ndef f(x):\n    a, b = x.shape\n"
                                       "    return x * a\n")
    [d] = check_file(str(path), "STRICT")
    assert d.severity == "note" and "the rank of `x.shape` is not known at compile time" in d.message


@pytest.mark.parametrize("level", rules.LEVELS)
def test_hints_never_suggest_the_level_in_use(level):
    below = rules.LEVELS[:rules.RANK[level] + 1]
    for d in corpus_diagnostics(level):
        for name in below:
            assert f"jit_syntax_level={name}" not in d.hint, (level, d.code, d.hint)
            assert f"jit_syntax_level={name.lower()}" not in d.hint, (level, d.code, d.hint)


# --- warnings and nested functions -----------------------------------------------------------------

def _jitted_in_a_loop():
    made = []
    for k in range(2):
        @gj.jit
        def shifted(x):
            try:
                y = x + k
            except ValueError:
                y = x
            return y
        made.append(shifted)
    return made


def test_nested_jitted_functions_find_their_source_and_warn_at_the_users_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = [fn(np.ones(3)) for fn in _jitted_in_a_loop()]
    np.testing.assert_allclose(results[0], np.ones(3) + 1)   # `k` is read when the function runs
    ours = [w for w in caught if "graphjit" in str(w.message) or "GJ" in str(w.message)]
    assert ours
    for w in ours:
        assert w.filename == __file__, (w.filename, w.lineno, str(w.message))


def test_recompile_warning_points_at_the_caller():
    gj.set_context(recompile_warning=2)
    try:
        @gj.jit
        def grow(x):
            return x + 1

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for n in range(1, 5):
                grow(np.ones(n))
    finally:
        gj.set_context(recompile_warning=8)
    ours = [w for w in caught if "recompil" in str(w.message)]
    assert ours and all(w.filename == __file__ for w in ours), [(w.filename, str(w.message)[:80]) for w in ours]


def test_console_errors_have_no_traceback(tmp_path):
    path = write(tmp_path, "bad.py", b"x = '\xff'\n")
    proc = subprocess.run([sys.executable, "-m", "graphjit", "check", str(path)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
