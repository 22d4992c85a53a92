"""Functions for tests/transpiler/test_syntax_levels.py that are not one-construct corpus entries.

Markers (`# <- CODE:COL`) as in tests/syntax_corpus.py.
"""

import numpy as np

import syntax_corpus
from graphjit import nn


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


# --- programs the graph cannot follow: rejected below LAX (GJ001), run as fallback blocks at LAX ----

def list_grows_in_runtime_if(x):
    xs = [x[0]]
    if x.sum() > 3:  # <- GJ001:5
        xs.append(x[1])
    return len(xs), xs


def list_grows_in_runtime_loop(x):
    xs = []
    i = 0
    while i < int(x.sum()):  # <- GJ001:5
        xs.append(i)
        i += 1
    return xs


def dict_keys_in_runtime_if(x):
    d = {"a": 1.0}
    if x[0] > 0.5:  # <- GJ001:5
        d["b"] = x[0]
    return len(d)


def list_grows_in_loop_with_break(x):
    xs = []
    for i in range(4):  # <- GJ001:5
        if x[i] > 0.9:
            break
        xs.append(x[i])
    return xs


def global_list_iterated_after_append(x):
    syntax_corpus.LOG.append(x[0])  # <- GJ203:5
    total = 0.0
    for v in syntax_corpus.LOG:  # <- GJ001:5
        total = total + v
    return total


# Names that may be unbound: Python raises UnboundLocalError only on the paths where they are (call 0
# of the test takes those paths, call 1 the others); the graph has no unbound values.

def bound_in_one_branch(x):
    if x[0] > 1.0:
        y = x * 2
    return y  # <- GJ001:12


def bound_in_a_loop_that_may_not_run(x):
    for i in range(int(x[0])):
        y = x * i
    return i, y  # <- GJ001:12


def bound_in_a_while_loop(x):
    n = 0
    while n < x[0]:
        last = n
        n += 1
    return last  # <- GJ001:12


CANNOT_FOLLOW = [list_grows_in_runtime_if, list_grows_in_runtime_loop, dict_keys_in_runtime_if,
                 list_grows_in_loop_with_break, global_list_iterated_after_append, bound_in_one_branch,
                 bound_in_a_loop_that_may_not_run, bound_in_a_while_loop]


# --- several rows at once: each level rejects exactly the marked constructs it does not accept ------

def global_written_in_try(x):
    global COUNT  # <- GJ202:5
    try:  # <- GJ301:5
        COUNT += 1
    except NameError:
        pass
    return x * COUNT


def global_list_appended_in_try(x):
    try:  # <- GJ301:5
        syntax_corpus.LOG.append(x[0])
    except AttributeError:
        pass
    return len(syntax_corpus.LOG), syntax_corpus.LOG[-1]


def nonlocal_two_levels_down(x):
    total = 0

    def outer():
        def inner():
            nonlocal total  # <- GJ305:13
            total += 1
        inner()
        inner()
    outer()
    return x * total


def nested_generator_consumed(x):
    def gen(n):
        for i in range(n):
            yield x * i  # <- GJ311:13
    return list(gen(3))


PROGRAMS = [global_written_in_try, global_list_appended_in_try, nonlocal_two_levels_down,
            nested_generator_consumed]


def _reset():
    global COUNT
    COUNT = 0


syntax_corpus.RESETS.append(_reset)


class CountingCell(nn.Cell):
    """A Cell whose construct keeps Python state: `self.count += 1` is a COMPATIBLE construct."""

    def __init__(self):
        super().__init__()
        self.count = 0
        self.seen = []

    def construct(self, x):
        self.count += 1  # <- GJ201:9
        self.seen.append(float(x.sum()))  # <- GJ203:9
        return x * self.count
