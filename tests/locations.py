"""Where the test suite finds the repository's files, whichever tests/ subfolder a test lives in.

One home for these paths, so moving a test file never changes what it reads.
"""

import pathlib

TESTS = pathlib.Path(__file__).resolve().parent
REPO = TESTS.parent
GOLDEN = TESTS / "golden"
SAMPLES = REPO / "samples"
BENCHMARKS = REPO / "benchmarks"
DOCS = REPO / "docs"
