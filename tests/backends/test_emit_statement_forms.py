"""Python loops the emitter writes in Python's own statement forms (backends/emit_layout.py): `A[i, j] += v`
(augmented subscript), `for b in data:` (NumPy's iterator), and `crc = crc >> 1` for a number's
`crc >>= 1` (graph/passes/simplify.py). Each is checked against eager Python at every level, through the
emitter and the interpreter, and the generated code is checked for the form, and for where the form must
not be used."""

import re

import numpy as np
import pytest

import graphjit
from graphjit.graph.passes import simplify

from eager_vs_compiled import run_both
from graph_testing import assert_pass_leaves, assert_pass_output

LEVELS = [("O0", "auto"), ("O1", "auto"), ("O2", "auto"), ("O1", "no_sink"), ("O2", "no_sink")]


def sweep(TSTEPS, A):
    for t in range(TSTEPS):
        for i in range(1, A.shape[0] - 1):
            for j in range(1, A.shape[1] - 1):
                A[i, j] += A[i, j - 1]
                A[i, j] /= 9.0
                A[i, 1:3] -= 0.5


def checksum(data, poly=0x8408):
    crc = 0xFFFF
    for b in data:
        cur = 0xFF & b
        for _ in range(0, 8):
            if (crc & 0x0001) ^ (cur & 0x0001):
                crc = (crc >> 1) ^ poly
            else:
                crc >>= 1
            cur >>= 1
    return crc & 0xFFFF


def rows_written(x):
    total = np.zeros(x.shape[1])
    for row in x:
        total += row
        row *= 2.0          # writes x through the row view, after reading it
    return total


def index_used(x):
    total = 0.0
    for i in range(x.shape[0]):
        total = total + x[i] * i
    return total


def read_after_write(x):
    for i in range(x.shape[0]):
        x[i] = 1.0
        x[i] = x[i] + 2.0
    return x


def update_kept(x):
    s = x[0]
    for i in range(x.shape[0]):
        t = x[i]
        t += 1.0
        x[i] = t
        s = s + t
    return s


def old_value_read_after(x):
    s = 1.0
    total = 0.0
    k = 0
    while k < x.shape[0]:
        old = s
        if x[k] > 0.5:
            s = s * 2.0
        else:
            s = s - x[k]
        total = total + old * s
        k += 1
    return s, total


def swap_in_branch(x):
    a, b = 0.0, 1.0
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            a, b = b, a + x[i]
        else:
            a, b = b - x[i], a
    return a, b


def shrink(z, c):
    n = np.zeros(z.shape[0], np.int64)
    idx = np.arange(z.shape[0])
    for i in range(6):
        z = z * z + c
        keep = np.abs(z) <= 2.0
        n[idx[~keep]] = i + 1
        z, c, idx = z[keep], c[keep], idx[keep]
    return n


def rotate(x):
    a, b, c = 1.0, 2.0, 3.0
    for i in range(x.shape[0]):
        a, b, c = b + x[i], c, a
    return a, b, c


def stencil_steps(f, ey, hz):
    for x in f:
        ey[0, :] = x
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        d = hz[1:, :] - hz[:-1, :]
        if x > 0.5:
            e = d * 2.0
            hz[1:, :] += e
        hz[:-1, :] -= 0.7 * (ey[1:, :] - ey[:-1, :] + d)
    return ey, hz


PROGRAMS = [
    (sweep, lambda: (3, np.random.default_rng(0).random((6, 7)))),
    (checksum, lambda: (np.random.default_rng(1).integers(0, 256, 40).astype(np.uint8),)),
    (rows_written, lambda: (np.random.default_rng(2).random((4, 3)),)),
    (index_used, lambda: (np.random.default_rng(3).random(5),)),
    (read_after_write, lambda: (np.random.default_rng(4).random(5),)),
    (update_kept, lambda: (np.random.default_rng(5).random(5),)),
    (old_value_read_after, lambda: (np.random.default_rng(6).random(7),)),
    (swap_in_branch, lambda: (np.random.default_rng(7).random(9),)),
    (shrink, lambda: (np.zeros(50, complex), np.random.default_rng(8).random(50) * 3 - 2 + 0.5j)),
    (rotate, lambda: (np.random.default_rng(9).random(5),)),
    (stencil_steps, lambda: tuple(np.random.default_rng(10).random(s) for s in ((6,), (5, 4), (5, 4)))),
]


@pytest.mark.parametrize("level,exec_mode", LEVELS)
@pytest.mark.parametrize("fn,make", PROGRAMS, ids=[p[0].__name__ for p in PROGRAMS])
def test_equals_eager(fn, make, level, exec_mode, monkeypatch):
    monkeypatch.setenv("GRAPHJIT_NUMBA", "0")   # the loops run as the emitter writes them
    for _ in range(2):
        run_both(fn, make(), jit_level=level, exec_mode=exec_mode)


def source(fn, args, level="O2"):
    return graphjit.jit(fn, jit_config=graphjit.JitConfig(jit_level=level, numba=False)).source(*args)


def code_lines(text):
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]


def test_augmented_subscript_is_written_as_python_does():
    lines = code_lines(source(sweep, (3, np.zeros((6, 7)))))
    assert "A[i, j] += A[i, j - 1]" in lines and "A[i, j] /= 9.0" in lines
    assert "A[i, 1:3] -= 0.5" in lines
    # the value is used after the store: the update keeps its own name
    lines = code_lines(source(update_kept, (np.zeros(5),)))
    assert not any(line.startswith("x[i] +=") for line in lines)


def test_iteration_over_an_array_is_written_as_a_for_over_it():
    assert "for b in data:" in code_lines(source(checksum, (np.zeros(40, np.uint8),)))
    assert "for row in x:" in code_lines(source(rows_written, (np.zeros((4, 3)),)))
    # the index is used for more than the element, or the element is read after a write: range loop
    assert not any(line.startswith("for x") or " in x:" in line for line in
                   code_lines(source(index_used, (np.zeros(5),))))
    assert not any(" in x:" in line for line in code_lines(source(read_after_write, (np.zeros(5),))))


def test_number_update_is_a_plain_operator():
    lines = code_lines(source(checksum, (np.zeros(40, np.uint8),), level="O1"))
    assert any(line.endswith("= crc_1 >> 1") or line.endswith("= crc >> 1") for line in lines), lines
    assert not any(line.endswith(">>= 1") and "crc" in line for line in lines)


def test_simplify_turns_a_number_update_into_the_operator():
    assert_pass_output(simplify.run, """
        graph f(%n: int, %x: f64[3]) -> tuple(int, f64[3])
          %0 = inplace(%n, 1) {op='rshift'} : int
          %1 = inplace(%x, 2.0) {op='mul'} : f64[3]
          %2 = tuple(%0, %1) : tuple(int, f64[3])
          return %2
    """, """
        graph f(%n: int, %x: f64[3]) -> tuple(int, f64[3])
          %0 = rshift(%n, 1) : int
          %1 = inplace(%x, 2.0) {op='mul'} : f64[3]
          %2 = tuple(%0, %1) : tuple(int, f64[3])
          return %2
    """)


def test_simplify_keeps_updates_of_arrays():
    assert_pass_leaves(simplify.run, """
        graph f(%x: f64[3], %s: f64[]) -> tuple(f64[3], f64[])
          %0 = inplace(%x, 2.0) {op='mul'} : f64[3]
          %1 = inplace(%s, 1.0) {op='add'} : f64[]
          %2 = tuple(%0, %1) : tuple(f64[3], f64[])
          return %2
    """)


def test_branches_assign_the_loop_variable_when_nothing_reads_its_old_value():
    lines = code_lines(source(checksum, (np.zeros(40, np.uint8),)))
    branch_targets = {line.split(" = ")[0] for line in lines if ">> 1" in line and " = " in line}
    assert len(branch_targets) == 1, lines              # both branches assign the loop's variable ...
    (target,) = branch_targets
    copies = [line for line in lines if line.startswith(f"{target} = ") and line.split(" = ")[1].startswith("crc_")
              and line.split(" = ")[1].isidentifier()]
    assert not copies, lines   # (`crc_1 = crc` before the inner loop is its initial value)
    # the old value is read after the branch: the branch result keeps a name of its own
    lines = code_lines(source(old_value_read_after, (np.zeros(7),)))
    doubled = [line for line in lines if line.endswith("* 2.0")]
    assert doubled and not doubled[0].startswith("s = "), lines
    # two carried values swapped in a branch: one tuple assignment, every right side read first
    assert "a, b = b, a + x[i]" in code_lines(source(swap_in_branch, (np.zeros(9),)))


def test_carried_arrays_are_replaced_one_by_one_when_no_value_reads_an_earlier_name():
    lines = code_lines(source(shrink, (np.zeros(50, complex), np.zeros(50, complex))))
    replaced = [line for line in lines if line.endswith("[keep]")]
    assert len(replaced) == 3 and all(", " not in line.split(" = ")[0] for line in replaced), lines
    # each value reads a name assigned before it: one tuple assignment
    assert any(line.count(",") == 4 and line.count(" = ") == 1 for line in
               code_lines(source(rotate, (np.zeros(5),)))), code_lines(source(rotate, (np.zeros(5),)))


def test_a_loop_body_frees_each_array_after_its_last_use():
    lines = code_lines(source(stencil_steps, (np.zeros(6), np.zeros((5, 4)), np.zeros((5, 4)))))
    freed = [name for line in lines if line.startswith("del ") for name in line[4:].split(", ")]
    assert "d" in freed and len(freed) == len(set(freed)), lines
    branch_names = {line.split(" = ")[0] for line in lines if line.endswith("* 2.0")}
    assert branch_names and not branch_names & set(freed)   # bound in a branch only: may be unbound
    views = {line.split(" = ")[0] for line in lines if re.fullmatch(r"\w+ = \w+\[[^\]]*\]", line)}
    assert views
    assert not views & set(freed)                            # a view holds no memory of its own
    for name in freed:                                       # freed after its last use, never before
        where = lines.index(f"del {name}")
        assert not any(re.search(rf"\b{name}\b", line) for line in lines[where + 1:]), (name, lines)
