"""Names released as a top-level loop starts (backends/emit_release.py): a carried value keeps its
initial value's name when nothing after the loop reads that name (`acc = ...; for ...: acc = acc + v`,
not `acc_1 = acc` and a loop on `acc_1` that keeps the first array alive), and the function's other
array names that are dead by then are deleted before the loop. Generated code is checked for both
and for where neither may happen; every program is checked against eager at every level, through the
emitter and the interpreter."""

import re

import numpy as np
import pytest

import graphjit

from eager_vs_compiled import run_both

LEVELS = [("O0", "auto"), ("O1", "auto"), ("O2", "auto"), ("O1", "no_sink"), ("O2", "no_sink")]


def escape(x):
    grid = np.stack([x, x * 0.5])
    a, b = grid[0], grid[1]
    c = a + b
    z = np.zeros_like(c)
    idx = np.arange(c.shape[0])
    count = np.zeros(c.shape[0], np.int64)
    for i in range(6):
        z = z * z + c
        keep = np.abs(z) <= 2.0
        count[idx[~keep]] = i + 1
        z, c, idx = z[keep], c[keep], idx[keep]
    return count


def halve_until_small(x):
    y = x.copy()
    n = 0
    while y.max() > 1.0:
        y = y / 2
        n = n + 1
    return y, n


def start_read_after(x):
    start = x * 2.0
    y = start
    for i in range(3):
        y = y * 0.5 + start[i]
    return y + start


def argument_carried(x):
    for i in range(3):
        x = x * 2.0
    return x


def two_carried_from_one(x):
    acc = x * 1.0
    lo = acc
    hi = acc
    for i in range(x.shape[0]):
        lo = np.minimum(lo, x[i])
        hi = np.maximum(hi, x[i])
    return lo, hi


def two_loops(x):
    grid = np.stack([x, x + 1.0])
    a = grid[0] * 1.0
    for i in range(3):
        a = a * 0.5
    b = a + 1.0
    for i in range(2):
        b = b - x[i]
    return b


def source_of(fn, *args, level="O2"):
    jitted = graphjit.jit(fn, jit_level=level)
    jitted(*args)
    return jitted.source(*args)


@pytest.mark.parametrize("level,exec_mode", LEVELS)
@pytest.mark.parametrize("fn,make", [
    (escape, lambda: (np.linspace(-1.5, 1.5, 23),)),
    (halve_until_small, lambda: (np.linspace(0.0, 9.0, 7),)),
    (start_read_after, lambda: (np.arange(12.0).reshape(3, 4),)),
    (argument_carried, lambda: (np.arange(5.0),)),
    (two_loops, lambda: (np.arange(4.0),)),
    (two_carried_from_one, lambda: (np.array([[3.0, -1.0], [0.5, 4.0], [2.0, 2.0]]),)),
])
def test_eager_vs_compiled(fn, make, level, exec_mode):
    run_both(fn, make(), jit_level=level, exec_mode=exec_mode)


@pytest.mark.parametrize("level", ["O1", "O2"])
def test_carried_values_keep_their_names_and_dead_arrays_are_deleted(level):
    src = source_of(escape, np.linspace(-1.5, 1.5, 23), level=level)
    head, loop = src.split("\n    for i in range(6):\n")
    assert not re.search(r"^    (z|c|idx)_\d+ = ", head, re.M), src   # no copy of a carried name
    assert re.search(r"^        c = c\[keep\]$", loop, re.M) and re.search(r"^        idx = idx\[keep\]$", loop, re.M), src
    deleted = re.search(r"^    del (.+)$", head, re.M)
    assert deleted, src
    names = deleted.group(1).split(", ")
    assert "grid" in names, src   # the stacked array is freed before the loop
    assert not {"z", "c", "idx", "count", "x"} & set(names), src


def test_while_loop_carries_its_initial_name():
    src = source_of(halve_until_small, np.linspace(0.0, 9.0, 7))
    assert "while y.max() > 1.0:" in src and "y = y / 2" in src, src
    assert "y_1" not in src and not re.search(r"^    del ", src, re.M), src


def test_name_read_after_the_loop_is_neither_reused_nor_deleted():
    src = source_of(start_read_after, np.arange(12.0).reshape(3, 4))
    assert not re.search(r"^    del ", src, re.M), src
    assert re.search(r"^    (\w+) = start$", src, re.M), src   # the loop carries a copy of the name


def test_argument_name_is_never_deleted():
    src = source_of(argument_carried, np.arange(5.0), level="O1")
    assert not re.search(r"^    del ", src, re.M), src


def test_one_initial_value_carried_twice_keeps_one_name():
    src = source_of(two_carried_from_one, np.ones((3, 2)), level="O1")
    loop = src[src.index("for "):]
    assert "del acc" not in src, src
    assert len(set(re.findall(r"^        (\w+) = np\.m(?:in|ax)imum", loop, re.M))) == 2, src


def test_a_name_released_before_one_loop_is_not_released_again():
    src = source_of(two_loops, np.arange(4.0), level="O1")
    deleted = [name for line in re.findall(r"^    del (.+)$", src, re.M) for name in line.split(", ")]
    assert "grid" in deleted and len(deleted) == len(set(deleted)), src
