"""transpiler/lower/dispatch.py and the front end's shape: one table entry per LibCST class, one home per construct."""

import ast
import pathlib

import libcst as cst
import networkx as nx

from graphjit.transpiler import rules
from graphjit.transpiler.lower.dispatch import CONSTRUCTS, EXPRESSIONS, STATEMENTS

TRANSPILER = pathlib.Path(__file__).parents[2] / "transpiler"


def test_tables_are_keyed_by_libcst_classes_and_hold_module_functions():
    for table, base in ((STATEMENTS, cst.BaseStatement), (EXPRESSIONS, cst.BaseExpression)):
        for node_class, lower in table.items():
            assert issubclass(node_class, (base, cst.BaseSmallStatement)), node_class
            assert lower.__module__.startswith("graphjit.transpiler.lower."), lower
            assert lower.__name__.startswith("lower_"), lower
    assert CONSTRUCTS.statements is STATEMENTS and CONSTRUCTS.expressions is EXPRESSIONS


def test_a_construct_the_rules_reject_has_no_lowering():
    lowered = {c.__name__ for c in STATEMENTS} | {c.__name__ for c in EXPRESSIONS}
    assert not lowered & (set(rules.STATEMENT_RULES) | set(rules.EXPRESSION_RULES))


def _modules():
    return sorted(TRANSPILER.rglob("*.py"))


def _name(path: pathlib.Path) -> str:
    parts = path.relative_to(TRANSPILER.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: pathlib.Path):
    """(module imported, names, at module level?) of each relative import of the file."""
    tree = ast.parse(path.read_text())
    package = _name(path).split(".") if path.name == "__init__.py" else _name(path).split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[:len(package) - node.level + 1]
            yield ".".join(base + ([node.module] if node.module else [])), [a.name for a in node.names], \
                node in tree.body


def test_front_end_modules_are_small_and_say_what_they_do():
    for path in _modules():
        text = path.read_text()
        assert len(text.splitlines()) <= 500, path
        doc = ast.get_docstring(ast.parse(text))
        assert doc and doc.strip(), f"{path} has no module docstring"


def test_no_private_name_or_function_level_import_across_front_end_modules():
    for path in _modules():
        for module, names, top in _imports(path):
            assert top, f"{path.name}: function-level import of {module}"
            assert not [n for n in names if n.startswith("_")], f"{path.name} imports {names} from {module}"


def test_front_end_imports_have_no_cycle():
    graph = nx.DiGraph()
    for path in _modules():
        for module, names, _ in _imports(path):
            if module.startswith("transpiler"):
                graph.add_edge(_name(path), module)
    assert list(nx.simple_cycles(graph)) == []
