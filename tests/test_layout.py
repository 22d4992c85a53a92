"""The test suite's own layout (tests/README.md): folders mirror the packages, one test file per pass,
unique file names, no `__init__.py`.

pytest imports each test file by its base name, with its folder on sys.path (the default "prepend"
import mode), so two files of the same name in different folders would clash; and an `__init__.py`
in tests/ would make the tests part of the package the repository root is (named after whatever
directory it was checked out to).
"""

import collections

from locations import REPO, TESTS

NOT_TEST_FOLDERS = {"golden", "__pycache__"}
NOT_PASSES = {"__init__", "manager"}


def _test_files():
    return sorted(p for p in TESTS.rglob("test_*.py") if not NOT_TEST_FOLDERS & set(p.relative_to(TESTS).parts))


def test_test_file_names_are_unique_across_folders():
    by_name = collections.defaultdict(list)
    for path in _test_files():
        by_name[path.name].append(str(path.relative_to(TESTS)))
    clashes = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    assert not clashes, f"pytest imports test files by base name; rename one of each: {clashes}"


def test_no_init_files_in_tests():
    found = [str(p.relative_to(TESTS)) for p in TESTS.rglob("__init__.py")]
    assert not found, f"tests/ holds no packages (see this module's docstring): {found}"


def test_every_test_folder_mirrors_a_folder_of_the_repository():
    folders = {p.parent.relative_to(TESTS) for p in _test_files()} - {TESTS.relative_to(TESTS)}
    missing = sorted(str(f) for f in folders if not (REPO / f).is_dir())
    assert not missing, f"tests/<folder>/ mirrors <repository>/<folder>/; no such folder: {missing}"


def test_every_pass_has_its_own_test_file():
    passes = sorted(p.stem for p in (REPO / "graph" / "passes").glob("*.py") if p.stem not in NOT_PASSES)
    missing = [name for name in passes if not (TESTS / "graph" / "passes" / f"test_{name}.py").exists()]
    assert passes and not missing, f"write tests/graph/passes/test_<pass>.py for: {missing}"
