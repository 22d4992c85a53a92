"""The installed package is the whole package: a wheel built from the repository holds every folder of
Python modules (setup.py finds them; nothing is listed by hand), and its metadata is what a user expects.

The wheel is built from a copy of the repository's files (never in the checkout itself, which other
tests read at the same time), with setuptools' own build backend and no network.
"""

import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from locations import REPO

# folders of the repository that are not part of the installed package (setup.py's NOT_INSTALLED)
NOT_INSTALLED = {"tests", "benchmarks", "samples", "docs", "build", "dist"}


def _module_folders() -> set[str]:
    """Every folder of the repository holding Python modules, as paths inside the package."""
    found = set()
    for root, dirs, files in os.walk(REPO):
        rel = os.path.relpath(root, REPO)
        parts = [] if rel == "." else rel.split(os.sep)
        dirs[:] = [d for d in dirs if not d.startswith((".", "__")) and not (not parts and d in NOT_INSTALLED)
                   and not os.path.exists(os.path.join(root, d, "pyvenv.cfg"))]
        if any(f.endswith(".py") for f in files):
            found.add("/".join(["graphjit", *parts]))
    return found


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    source = tmp_path_factory.mktemp("source") / "graphjit"
    ignore = shutil.ignore_patterns(".git", ".*venv*", "venv", "__pycache__", "*.egg-info", "build", "dist",
                                    ".hypothesis", ".pytest_cache", "tests", "benchmarks")
    shutil.copytree(REPO, source, ignore=ignore)
    out = tmp_path_factory.mktemp("wheel")
    code = f"from setuptools import build_meta; print(build_meta.build_wheel({str(out)!r}))"
    done = subprocess.run([sys.executable, "-c", code], cwd=source, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    name = done.stdout.strip().splitlines()[-1]
    with zipfile.ZipFile(out / name) as archive:
        names = archive.namelist()
        texts = {n: archive.read(n).decode() for n in names if ".dist-info/" in n and not n.endswith("RECORD")}
    return names, texts


def test_the_wheel_holds_every_folder_of_python_modules(wheel):
    names, _ = wheel
    in_wheel = {name.rsplit("/", 1)[0] for name in names if name.endswith(".py")}
    missing = sorted(_module_folders() - in_wheel)
    assert not missing, f"folders of Python modules missing from the wheel (each needs an __init__.py): {missing}"


def test_the_wheel_holds_every_module(wheel):
    names, _ = wheel
    modules = {f"graphjit/{p.relative_to(REPO).as_posix()}" for p in REPO.rglob("*.py")
               if "/".join(["graphjit", *p.relative_to(REPO).parent.parts]) in _module_folders()}
    missing = sorted(modules - set(names))
    assert not missing, f"modules missing from the wheel: {missing[:20]}"


def test_the_wheel_holds_no_tests_or_benchmarks(wheel):
    names, _ = wheel
    stray = sorted(n for n in names if n.split("/")[1:2] and n.split("/")[1] in NOT_INSTALLED)
    assert not stray, stray[:10]


def test_the_wheel_metadata_names_license_classifiers_and_entry_point(wheel):
    names, texts = wheel
    metadata = next(t for n, t in texts.items() if n.endswith(".dist-info/METADATA"))
    assert "License-Expression: MIT" in metadata
    assert "Classifier: Programming Language :: Python :: 3" in metadata
    assert "Requires-Dist: numpy" in metadata
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    entry_points = next(t for n, t in texts.items() if n.endswith(".dist-info/entry_points.txt"))
    assert "graphjit = graphjit.cli:main" in entry_points


def test_version_from_python_m():
    import graphjit
    done = subprocess.run([sys.executable, "-m", "graphjit", "--version"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"graphjit, version {graphjit.__version__}"
