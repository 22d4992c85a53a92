"""Deep input (transpiler/source_limits.py, transpiler/deep_stack.py): what eager Python runs compiles and
equals it; what is too deep for graphjit's parser is one ResourceLimitError naming the place, never a
RecursionError, a MemoryError or a segfault."""

import importlib.util
import subprocess
import sys

import numpy as np
import pytest

import graphjit
from eager_vs_compiled import run_both
from graphjit.graph.diagnostics import GraphjitError
from graphjit.transpiler import deep_stack, source_limits
from graphjit.transpiler.deep_stack import ResourceLimitError, run_deep
from graphjit.transpiler.source import PythonSyntaxError, parse_file

LEVELS = ["O0", "O1", "O2"]


def load(tmp_path, name: str, text: str):
    """A module written to a file (graphjit reads the source from the file) and imported."""
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def long_sum(terms: int) -> str:
    return "def f(a):\n    return " + " + ".join(["a"] * terms) + "\n"


def nested_ifs(depth: int) -> str:
    lines = ["def g(a):"]
    for k in range(depth):
        lines.append("    " * (k + 1) + f"if a[0] > {k - depth // 2}:")
    lines.append("    " * (depth + 1) + "a = a + 1.0")
    lines.append("    return a * 2.0")
    return "\n".join(lines) + "\n"


@pytest.fixture(autouse=True)
def _no_disk_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("GRAPHJIT_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def deep_module(tmp_path_factory):
    """One file for every level: LibCST parses it once."""
    return load(tmp_path_factory.mktemp("deep"), "deep_functions", long_sum(2000) + "\n\n" + nested_ifs(90))


@pytest.mark.parametrize("jit_level", LEVELS)
def test_a_2000_term_sum_compiles_and_equals_eager(deep_module, jit_level):
    run_both(deep_module.f, (np.arange(3.0),), jit_level=jit_level)


@pytest.mark.parametrize("jit_level", LEVELS)
def test_90_nested_ifs_compile_and_equal_eager(deep_module, jit_level):
    for x in (np.array([100.0, 1.0]), np.array([0.0, 1.0]), np.array([-100.0, 1.0])):
        run_both(deep_module.g, (x,), jit_level=jit_level)


def test_check_reads_a_400_term_sum_and_90_nested_ifs(tmp_path):
    from graphjit.cli import check_file
    path = tmp_path / "deep_checked.py"
    path.write_text("import graphjit as ms\n\n\n@ms.jit\n" + long_sum(400) + "\n\n@ms.jit\n" + nested_ifs(90))
    for level in ("LAX", "STRICT"):   # LAX is the command's default
        assert [d for d in check_file(str(path), level) if d.severity == "error"] == []


@pytest.mark.parametrize("text, where", [
    ("x = " + "(" * 5_000 + "1" + ")" * 5_000 + "\n", "1:"),           # CPython: too many nested parentheses
    ("x = " + "[" * 100_000 + "]" * 100_000 + "\n", "1:"),
    ("y = 1\nx = a" + "[0]" * 1_500 + "\n", "2:"),                      # CPython accepts; over graphjit's limit
    ("y = 1\nx = " + "-" * 5_000 + "1\n", "1:"),                        # CPython's parser stack
])
def test_input_too_deep_for_the_parser_is_one_error_not_a_crash(tmp_path, text, where):
    """Run in a child process: before, LibCST's parser segfaulted on these."""
    path = tmp_path / "too_deep.py"
    path.write_text(text)
    code = ("import sys\nfrom graphjit.transpiler.source import parse_file\n"
            "try:\n    parse_file(sys.argv[1], open(sys.argv[1]).read())\n"
            "except Exception as e:\n    print(type(e).__name__, e.span)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    kind, span = proc.stdout.split()
    assert kind in ("PythonSyntaxError", "ResourceLimitError")
    assert span.startswith(f"{path}:")


def test_depth_over_the_limit_names_the_place_and_the_limit(tmp_path):
    text = "import numpy as np\n\n\nz = 1 + \\\n    b" + ".c" * 1_500 + "\n"
    with pytest.raises(ResourceLimitError) as info:
        parse_file(str(tmp_path / "attrs.py"), text)
    assert info.value.span.line == 5
    assert f"at most {source_limits.MAX_NESTING}" in info.value.message
    assert isinstance(info.value, GraphjitError)


def test_many_deep_expressions_are_bounded_per_file(tmp_path):
    line = "x = " + " + ".join(["a"] * 1_500) + "\n"   # 1 500 squared: 64 of them fit in the budget
    with pytest.raises(ResourceLimitError, match="deeply nested code in one file"):
        parse_file(str(tmp_path / "many_deep.py"), line * 40 + "y = 1\n" + line * 40)
    shallow = "x = " + " + ".join(["a"] * source_limits.DEEP) + "\n"   # not deep: not counted
    parse_file(str(tmp_path / "many_shallow.py"), shallow * 8)


def test_long_elif_chains_are_not_deep_work(tmp_path):
    text = "def f(a):\n    if a == -1:\n        return 0\n" + "".join(
        f"    elif a == {k}:\n        return {k}\n" for k in range(600))
    parse_file(str(tmp_path / "elifs.py"), text)


def test_a_file_over_the_size_limit_is_refused_before_parsing(tmp_path, monkeypatch):
    monkeypatch.setattr(source_limits, "MAX_SOURCE_CHARS", 1_000)
    with pytest.raises(ResourceLimitError, match="at most 1,000"):
        parse_file(str(tmp_path / "long.py"), "x = 1\n" * 200)


def test_python_syntax_errors_and_null_bytes_keep_pythons_position(tmp_path):
    with pytest.raises(PythonSyntaxError) as info:
        parse_file(str(tmp_path / "bad.py"), "x = 1\ny = (\n")
    assert info.value.span.line == 2
    with pytest.raises(PythonSyntaxError):
        parse_file(str(tmp_path / "nul.py"), "x = 1\0\n")


def test_jit_of_a_function_too_deep_raises_a_graphjit_error(tmp_path):
    module = load(tmp_path, "too_deep_jit", "def h(a):\n    return (a" + "[0]" * 1_000 + ")\n")
    with pytest.raises(ResourceLimitError) as info:
        graphjit.jit(module.h)(np.zeros((1,) * 32))
    assert info.value.span.line == 2


def test_stack_exhaustion_anywhere_becomes_one_error_naming_the_place():
    def endless(n):
        return endless(n + 1) + 1

    from graphjit.graph.spans import SourceSpan
    where = SourceSpan("model.py", 3, 1)
    with pytest.raises(ResourceLimitError) as info:
        run_deep(endless, 0, where=where, what="compiling endless")
    assert info.value.span is where and "compiling endless" in info.value.message

    def hungry():
        raise MemoryError

    with pytest.raises(ResourceLimitError, match="out of memory"):
        run_deep(hungry, where=where)


def test_the_deep_worker_restores_the_recursion_limit_and_passes_errors_through():
    before = sys.getrecursionlimit()
    assert run_deep(lambda: sys.getrecursionlimit()) >= deep_stack.RECURSION_LIMIT
    assert sys.getrecursionlimit() == before

    def fails():
        raise KeyError("kept")

    with pytest.raises(KeyError, match="kept"):
        run_deep(fails)
    assert sys.getrecursionlimit() == before


def test_stack_exhaustion_in_the_passes_is_one_error_from_jit(tmp_path, monkeypatch):
    from graphjit.graph.passes import manager

    def overflowing(*args, **kwargs):
        raise RecursionError("maximum recursion depth exceeded")

    module = load(tmp_path, "passes_overflow", "def p(a):\n    return a * 2.0\n")
    monkeypatch.setattr(manager, "run_pipeline", overflowing)
    with pytest.raises(ResourceLimitError) as info:
        graphjit.jit(module.p)(np.zeros(3))
    assert info.value.span.file == str(tmp_path / "passes_overflow.py") and info.value.span.line == 1


def elif_chain(count: int) -> str:
    return "def e(a):\n    if a[0] == -1:\n        return a\n" + "".join(
        f"    elif a[0] == {k}:\n        return a * {k}.0\n" for k in range(count)) + "    return a + 0.5\n"


def test_an_elif_chain_deeper_than_python_compiles_runs_eagerly_at_lax(tmp_path):
    """Each `elif` is an `if` in an `else:` of the generated code: past 100 levels Python refuses it."""
    module = load(tmp_path, "elif_chain", elif_chain(150))
    for first in (3.0, 149.0, 500.0):
        with pytest.warns(UserWarning, match="runs eagerly"):
            run_both(module.e, (np.array([first, 1.0]),))


def test_an_elif_chain_deeper_than_python_compiles_is_a_compile_time_error_at_strict(tmp_path):
    module = load(tmp_path, "elif_chain_strict", elif_chain(150))
    graphjit.set_context(jit_syntax_level=graphjit.STRICT)
    try:
        with pytest.raises(ResourceLimitError, match="nests its blocks deeper than Python compiles") as info:
            graphjit.jit(module.e)(np.array([3.0, 1.0]))
    finally:
        graphjit.set_context(jit_syntax_level=graphjit.LAX)
    assert info.value.span.line == 1
