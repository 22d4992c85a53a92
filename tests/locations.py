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

# samples that only make sense run: they parse arguments, build data and gradient functions and
# train at module level, which `graphjit transpile` and `graphjit check` (reading a file, never
# running it) cannot see; tests/test_training_samples.py and tests/test_tutorial_samples.py run them
RUN_ONLY_SAMPLES = frozenset({"quickstart", "train_tutorial", "lenet", "autodiff_tutorial"})
