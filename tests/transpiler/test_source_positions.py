"""transpiler/source.py's positions: the same `CodeRange` for every node as LibCST's own `PositionProvider`."""

import ast
import sys

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from graphjit.transpiler.source import node_positions

from locations import REPO


@pytest.mark.parametrize("relative", ["transpiler/lower/calls.py", "samples/network.py", "cli/__init__.py"])
def test_fast_positions_equal_libcsts_provider(relative):
    text = (REPO / relative).read_text()
    module = cst.parse_module(text + "\n\nif x:\n    pass\nelif y:  # comment\n    z = (1 +\n         2);  w = 3\n")
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    found = node_positions(module)
    assert len(dict(found)) == len(expected)
    assert all(found[node] == where for node, where in expected.items())
    assert found.get(cst.Name("not_in_the_module")) is None


ODD_FILES = {   # what a chunk boundary could get wrong: comments and blank lines between statements, a
    # block's footer, semicolons, CRLF and CR, tabs, 2-space indentation, form feeds, non-ASCII columns
    "footers": "import x\n# lead\n\n@ x.jit\n@  deco(1)\ndef f(a):\n    return a  # c\n    # footer\n  # less\n"
               "# zero\n\nasync def g(): pass # c\ndef h(b):\n    if b:\n        return 1\n        # inner\n"
               "    # outer\nx = 1; y = (2,\n 3); z = 4\n\n\n# end\n",
    "crlf": "import numpy as np\r\n\r\ndef f(x):\r\n    y = x + 1  # c\r\n    return y\r\n    # footer\r\n\r\n"
            "# col0\r\ndef g(x, n=2):\r\n    return x * n\r\n",
    "cr": "a = 1\rdef f(x):\r    return x\r",
    "tabs_after_two": "N = 3\nif N:\n  M = 1\n\ndef f(x):\n\tif x:\n\t\treturn x + N\n\treturn x\n",
    "form_feed": "def f(x):\n    return x\n\x0c\ndef é(x):\n    s = 'é'; return x + len(s)\n",
    "no_newline_at_end": "def f(x):\n    return x",
    "docstring_first": '"""doc"""\n\nfrom __future__ import annotations\n\nclass A:\n    x = 1\n\n    def m(self):\n'
                       '        return self.x\n',
}


@pytest.mark.parametrize("text", list(ODD_FILES.values()) + [(REPO / "samples/network.py").read_text()],
                         ids=list(ODD_FILES) + ["network"])
def test_chunks_give_the_whole_files_positions_and_code(tmp_path, text):
    """LibCST parses a file one chunk of top-level statements at a time: every node has the position,
    and every statement the code, that it has in the tree of the whole file."""
    from graphjit.transpiler.source import forget_file, parse_file
    path = str(tmp_path / "odd.py")
    parsed = parse_file(path, text)
    whole = cst.parse_module(text)
    positions = node_positions(whole)
    assert (parsed.module.default_indent, parsed.module.default_newline) == (whole.default_indent,
                                                                              whole.default_newline)
    statements = [stmt for chunk in range(len(parsed.starts)) for stmt in parsed.statements(chunk)]
    assert len(statements) == len(whole.body)
    heads = {head.lineno: head for head in parsed.heads if head is not None}
    for expected, found in zip(whole.body, statements):
        assert whole.code_for_node(expected) == parsed.module.code_for_node(found)
        pairs = [(expected, found)]
        while pairs:
            a, b = pairs.pop()
            assert type(a) is type(b) and positions.raw(a) == parsed.positions.raw(b)
            assert len(a.children) == len(b.children)
            pairs.extend(zip(a.children, b.children))
        if isinstance(expected, cst.FunctionDef) and positions.raw(expected)[0] in heads:
            span = parsed.def_span(heads[positions.raw(expected)[0]])
            assert (span.line, span.col - 1, span.end_line, span.end_col - 1) == positions.raw(expected)
    parsed.release()
    assert parsed.statements(0)[0] is not None and len(parsed._chunks) == 1   # parsed again when asked for
    forget_file(path)


def test_check_holds_one_functions_tree_at_a_time(tmp_path, monkeypatch):
    """graphjit check of many functions: a function's chunk is parsed when it is lowered and dropped
    after; the static module makes plain `def`s from Python's tree, without LibCST's."""
    from graphjit.cli import check_file
    from graphjit.transpiler import source
    path = tmp_path / "many.py"
    path.write_text("import numpy as np\nimport graphjit as ms\n" + "".join(
        f"\n@ms.jit\ndef f{k}(x, y):\n    z = x * {k} + y\n    return np.sum(z) + y.mean()\n" for k in range(40)))
    most = []
    real = source.ParsedFile._parse_chunk

    def counting(self, chunk):
        most.append(len(self._chunks) + 1)
        return real(self, chunk)

    monkeypatch.setattr(source.ParsedFile, "_parse_chunk", counting)
    assert check_file(str(path), "STRICT") == []
    assert len(most) == 42 and max(most) <= 3   # the two imports (kept), then each function once, alone


PIECES = dict(ODD_FILES, **{
    "strings_and_blocks": 'x = """\ndef not_code():\n    pass\n"""\nif x:\n    y = 1\nelse:\n    y = 2\ntry:\n    z = 1\n'
                          'except Exception:\n    z = 2\nfinally:\n    w = 3\n@dec\n\ndef f(a,\nb):\n    return (a +\n'
                          'b)\nv = 1 + \\\n2\nclass C:\n    pass\n',
    "syntax_error_late": "x = 1\n" * 40 + "def f(:\n    pass\n" + "y = 2\n" * 40,
    "too_deep_late": "x = 1\n" * 40 + "y = " + "(" * 150 + "1" + ")" * 150 + "\n" + "z = 3\n" * 40,
})


@pytest.mark.parametrize("text", list(PIECES.values()) + [(REPO / "samples/network.py").read_text()],
                         ids=list(PIECES) + ["network"])
def test_pieces_of_pythons_tree_give_the_whole_files_chunks(tmp_path, monkeypatch, text):
    """A large file is parsed by Python a piece at a time: the same chunks, `def`s and errors as the whole file."""
    from graphjit.transpiler import source, source_limits

    def read(pieces: int):
        monkeypatch.setattr(source_limits, "PIECE_CHARS", pieces)
        path = str(tmp_path / f"odd{pieces}.py")
        try:
            parsed = source.parse_file(path, text)
        except Exception as e:   # the one error graphjit gives
            return type(e).__name__, str(e).replace(path, "FILE")
        found = (parsed.starts, [h and (h.name, h.lineno) for h in parsed.heads], parsed.keep,
                 sorted((k, ast.dump(v)) for k, v in parsed.python_defs.items()))
        source.forget_file(path)
        return found

    assert read(1) == read(1 << 18)
