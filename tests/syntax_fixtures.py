"""Functions for tests/test_syntax_levels.py that are not one-construct corpus entries.

Markers (`# <- CODE:COL`) as in tests/syntax_corpus.py.
"""

import numpy as np

import syntax_corpus


def many_problems(x):
    """Seven constructs STRICT rejects, of five rows: one GraphSyntaxError lists them all."""
    global COUNT  # <- GJ202:5
    COUNT = 1
    syntax_corpus.BOX.count = 3  # <- GJ201:5
    try:  # <- GJ301:5
        y = x / x.sum()
    except ZeroDivisionError:
        y = x
    seen = {1, 2}  # <- GJ321:12
    label = f"{x.sum():.2f}"  # <- GJ221:13
    with np.errstate(all="ignore"):  # <- GJ302:5
        z = y * len(seen)
    del seen  # <- GJ303:5
    return z, label


COUNT = 0
