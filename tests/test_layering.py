"""Imports go one way: transpiler/ and backends/ use graph/; graph/ uses neither; they don't use each other.

The root's modules are covered too: `context` and `log` are leaves (they import nothing of graphjit),
the drivers (`api`, `export_load`) compose the stages but never the command line, and `nn` uses the
public surface, not the stages' insides.
"""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).parent.parent
FORBIDDEN = {
    "graph": {"transpiler", "backends", "api", "cli", "nn"},
    "transpiler": {"backends", "api", "cli"},
    "backends": {"transpiler", "api", "cli"},
    "context": {"graph", "transpiler", "backends", "api", "cli", "nn", "log", "export_load"},
    "log": {"graph", "transpiler", "backends", "api", "cli", "nn", "context", "export_load"},
    "api": {"cli", "export_load"},
    "export_load": {"cli"},
    "gradients": {"cli", "export_load", "nn"},
    "parameter": {"transpiler", "backends", "api", "cli", "nn", "export_load", "gradients"},
    "nn": {"transpiler", "backends", "cli", "export_load"},
    "cli": {"nn"},
}


def modules_of(package: str) -> list:
    """The files of a package folder, or the one file of a root module."""
    folder = ROOT / package
    return sorted(folder.rglob("*.py")) if folder.is_dir() else [ROOT / f"{package}.py"]


def test_every_module_is_covered():
    packages = {p.name for p in ROOT.iterdir() if (p / "__init__.py").exists()} - {"tests", "samples", "benchmarks",
                                                                                    "docs"}
    modules = {p.stem for p in ROOT.glob("*.py")} - {"__init__", "__main__"}
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
    code = "import sys, graphjit; print(sorted(m for m in ('networkx', 'libcst', 'click') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
