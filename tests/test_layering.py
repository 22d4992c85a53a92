"""Imports go one way: transpiler/ and backends/ use graph/; graph/ uses neither; they don't use each other.

The root's modules are covered too: `context` and `log` are leaves (they import nothing of graphjit),
the drivers (`compiler`, `api`, `export_load`) compose the stages but never the command line, the
back end never imports the driver, and `nn` uses the public surface, not the stages' insides.

Over every module of the package: no private name (`_x`) is imported from another module, and the
import graph (function-level imports included) has no cycle but for listed deliberate lazy imports.
"""

import ast
import functools
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).parent.parent
FORBIDDEN = {
    "graph": {"transpiler", "backends", "api", "compiler", "cli", "nn", "export_load"},
    "transpiler": {"backends", "api", "compiler", "cli", "export_load"},
    "backends": {"transpiler", "api", "compiler", "cli", "export_load", "nn"},
    "context": {"graph", "transpiler", "backends", "api", "compiler", "cli", "nn", "log", "export_load"},
    "log": {"graph", "transpiler", "backends", "api", "compiler", "cli", "nn", "context", "export_load"},
    "compiler": {"api", "cli", "export_load", "nn"},
    "api": {"cli", "export_load"},
    "export_load": {"cli"},
    "gradients": {"cli", "export_load", "nn"},
    "export_reader": {"transpiler", "backends", "api", "compiler", "cli", "nn", "export_load", "gradients"},
    "parameter": {"transpiler", "backends", "api", "compiler", "cli", "nn", "export_load", "gradients"},
    "tensor": {"transpiler", "backends", "api", "compiler", "cli", "nn", "export_load", "gradients"},
    "nn": {"transpiler", "backends", "compiler", "cli", "export_load"},
    "ops": {"transpiler", "backends", "compiler", "cli", "export_load", "nn", "graph"},
    "cli": {"nn"},
    "checkpoint": {"transpiler", "backends", "api", "compiler", "cli", "nn", "export_load", "gradients"},
    "jit_options": {"transpiler", "backends", "api", "compiler", "cli", "nn", "export_load", "gradients",
                    "checkpoint"},
    "common": {"transpiler", "backends", "compiler", "cli", "export_load", "graph"},
    "dataset": {"transpiler", "backends", "compiler", "cli", "export_load", "nn", "ops", "gradients", "api",
                "checkpoint", "jit_options"},
    # MindRecord files: a leaf that reads and writes bytes, used by dataset/
    "mindrecord": {"graph", "transpiler", "backends", "api", "compiler", "cli", "nn", "export_load", "gradients",
                   "ops", "dataset", "checkpoint", "jit_options", "tensor", "parameter", "context", "log", "common"},
    "dtype": {"graph", "transpiler", "backends", "api", "compiler", "cli", "nn", "export_load", "tensor", "common"},
    "sparse_tensor": {"transpiler", "backends", "api", "compiler", "cli", "nn", "export_load", "gradients"},
}


def modules_of(package: str) -> list:
    """The files of a package folder, or the one file of a root module."""
    folder = ROOT / package
    return sorted(folder.rglob("*.py")) if folder.is_dir() else [ROOT / f"{package}.py"]


def test_every_module_is_covered():
    packages = {p.name for p in ROOT.iterdir() if (p / "__init__.py").exists()} - {"tests", "samples", "benchmarks",
                                                                                    "docs"}
    modules = {p.stem for p in ROOT.glob("*.py")} - {"__init__", "__main__", "setup"}   # setup.py: packaging
    assert packages | modules <= set(FORBIDDEN), sorted((packages | modules) - set(FORBIDDEN))


def imported_packages(path: pathlib.Path, package: str) -> set:
    tree = ast.parse(path.read_text())
    found = set()
    depth = len(path.relative_to(ROOT).parts) - 1
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = list(path.relative_to(ROOT).parts[:-1])
                base = parts[:len(parts) - (node.level - 1)] if node.level - 1 <= len(parts) else []
                target = base + (node.module.split(".") if node.module else [])
                if node.level > depth:  # climbed to the root package
                    target = (node.module or "").split(".")
                found.add(target[0] if target else "")
                if not node.module and node.level > depth:
                    found.update(alias.name for alias in node.names)
            elif node.module and node.module.startswith("graphjit."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("graphjit."):
                    found.add(alias.name.split(".")[1])
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_import_direction(package):
    bad = []
    for path in modules_of(package):
        used = imported_packages(path, package)
        for name in used & FORBIDDEN[package]:
            bad.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not bad, "\n".join(bad)


def test_import_graphjit_is_light():
    import subprocess
    import sys
    code = ("import sys, graphjit; print(sorted(m for m in ('networkx', 'libcst', 'click', 'dask', 'array_api_compat', "
            "'array_api_strict') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


# --- the import graph between graphjit's modules ---------------------------------------------------
# Module-level and function-level imports both count (a cycle hidden in a function is still a
# cycle); imports under `if TYPE_CHECKING:` do not run and do not count. `graphjit/__init__.py` is
# the module "" (the root package).

# Deliberate lazy imports, for start-up time: (importer, imported) -> why. The edge is left out of
# the graph before cycles are looked for.
LAZY_IMPORTS = {
    ("", "export_load"): "graphjit.export/load load export_load (and the stages) on use: `import graphjit` "
                         "stays light; export_load reads graphjit.__version__",
}

# Private names imported from another module, and import cycles, that other branches of the #11
# refactor are removing. Delete an entry when its branch merges (the test says which are stale).
KNOWN_PRIVATE_IMPORTS: set = set()

KNOWN_CYCLES: set = set()

PACKAGE_FILES = [p for p in sorted(ROOT.rglob("*.py"))
                 if p.relative_to(ROOT).parts[0] not in {"tests", "samples", "benchmarks", "docs"}
                 and not p.relative_to(ROOT).parts[0].startswith(".")]


def module_name(path: pathlib.Path) -> str:
    """`backends.dispatch`, `graph.passes` (a package's `__init__.py`), "" for the root package."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PACKAGE_FILES}


def runtime_imports(tree: ast.AST):
    """Every import statement that runs (at module level or in a function): not `if TYPE_CHECKING:`."""
    for node in ast.iter_child_nodes(tree):
        typing_only = isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for child in node.orelse if typing_only else [node]:
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child
            else:
                yield from runtime_imports(child)


@functools.cache
def module_imports(path: pathlib.Path) -> tuple:
    """(imported module, name or None) for every graphjit import in `path`; a name is None when it
    is itself a module (`from . import dispatch`). Each file is parsed once for the whole module."""
    return tuple(read_module_imports(path))


def read_module_imports(path: pathlib.Path):
    own_package = list(path.relative_to(ROOT).parts[:-1])
    for node in runtime_imports(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("graphjit."):
                    yield alias.name[len("graphjit."):], None
            continue
        if node.level:
            base = own_package[:len(own_package) - (node.level - 1)] if node.level - 1 <= len(own_package) else []
            target = ".".join(base + (node.module.split(".") if node.module else []))
        elif node.module == "graphjit" or (node.module or "").startswith("graphjit."):
            target = node.module[len("graphjit."):] if "." in node.module else ""
        else:
            continue
        for alias in node.names:
            sub = f"{target}.{alias.name}" if target else alias.name
            yield (sub, None) if sub in MODULES else (target, alias.name)


def import_graph():
    import networkx as nx
    graph = nx.DiGraph()
    graph.add_nodes_from(MODULES)
    for name, path in MODULES.items():
        for target, _ in module_imports(path):
            if target != name and target in MODULES:
                graph.add_edge(name, target)
    return graph


def private_imports() -> set:
    found = set()
    for name, path in MODULES.items():
        for target, imported in module_imports(path):
            if imported and imported.startswith("_") and not (imported.startswith("__") and imported.endswith("__")):
                found.add((name, target, imported))
    return found


def import_cycles() -> set:
    """Every simple cycle of the import graph without the deliberate lazy imports, as a tuple of
    module names in import order, starting at the smallest name (one spelling per cycle)."""
    import networkx as nx
    graph = import_graph()
    graph.remove_edges_from(LAZY_IMPORTS)
    cycles = set()
    for cycle in nx.simple_cycles(graph):
        k = cycle.index(min(cycle))
        cycles.add(tuple(cycle[k:] + cycle[:k]))
    return cycles


def test_the_import_graph_is_read_right():
    graph = import_graph()
    assert graph.has_edge("api", "compiler") and graph.has_edge("api", "context")   # module level
    assert graph.has_edge("compiler", "transpiler.lower")                           # function level
    assert graph.has_edge("backends.cache_policy", "backends.dispatch")             # from . import dispatch
    assert graph.has_edge("", "export_load") and graph.has_edge("export_load", "")  # the root package
    assert not graph.has_edge("backends.emit_numpy", "backends.emit_numpy")
    assert all(a in MODULES and b in MODULES for a, b in LAZY_IMPORTS)


def test_no_private_name_is_imported_from_another_module():
    new = sorted(private_imports() - KNOWN_PRIVATE_IMPORTS)
    assert not new, "import a public name (or move the definition where it is used):\n" + "\n".join(
        f"{a} imports {name} from {b}" for a, b, name in new)


def test_no_import_cycle():
    new = sorted(import_cycles() - KNOWN_CYCLES)
    assert not new, "import cycles (function-level imports count; a deliberate lazy import goes in " \
                    "LAZY_IMPORTS with its reason):\n" + "\n".join(" -> ".join(c) for c in new)


def test_the_allow_lists_are_not_stale():
    """An entry whose violation is gone (its branch merged) is deleted, so it cannot come back."""
    stale = sorted(KNOWN_PRIVATE_IMPORTS - private_imports()) + sorted(KNOWN_CYCLES - import_cycles())
    graph = import_graph()
    stale += sorted(edge for edge in LAZY_IMPORTS if not graph.has_edge(*edge))
    assert not stale, "delete these entries from tests/test_layering.py:\n" + "\n".join(map(str, stale))


def test_the_first_compile_warns_nothing(tmp_path):
    """Compiling imports LibCST, whose older releases warn DeprecationWarning on import (through
    mypy_extensions): a user running with `-W error` must still compile."""
    import subprocess
    import sys
    code = ("import numpy as np, graphjit\n"
            "def f(x):\n    return x * 2.0 + 1.0\n"
            "print(graphjit.jit(f)(np.ones(3)).sum())\n")
    script = tmp_path / "first_compile.py"
    script.write_text(code)
    out = subprocess.run([sys.executable, "-W", "error", str(script)], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "GRAPHJIT_CACHE_DIR": str(tmp_path / "cache")})
    assert out.returncode == 0 and out.stdout.strip() == "9.0", out.stdout + out.stderr
