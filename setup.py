"""Packaging: the repository root is the import package `graphjit`; its subpackages are found here.

Every folder below the root that holds an `__init__.py` is a subpackage (setuptools' `find_packages`),
except the folders that are not part of the installed package: tests, benchmarks, samples, docs and
build or environment folders. tests/test_packaging.py checks that a built wheel holds every one.
"""

from setuptools import find_packages, setup

NOT_INSTALLED = ["tests", "benchmarks", "samples", "docs", "build", "dist"]

setup(
    package_dir={"graphjit": "."},
    packages=["graphjit"] + ["graphjit." + name for name in find_packages(
        ".", exclude=[pattern for folder in NOT_INSTALLED for pattern in (folder, folder + ".*")])],
)
