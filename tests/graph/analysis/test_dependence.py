"""The dependence test and the affine forms behind the vectorizer's legality decisions."""

import pytest

from graphjit.graph.analysis.affine import Affine, Symbol, range_interval
from graphjit.graph.analysis.dependence import ANY, K, Access, Point, Span, conflict, feasible

k = Affine.of(K)


def read(*dims, pos=0):
    return Access("a", False, pos, tuple(dims))


def write(*dims, pos=1):
    return Access("a", True, pos, tuple(dims))


@pytest.mark.parametrize("offset, carried", [(-1, True), (-2, True), (0, False), (1, False), (3, False)])
def test_read_before_write_at_an_offset(offset, carried):
    # x[i] = f(x[i + offset]): the read at k meets the write of an earlier iteration k' iff offset < 0
    assert conflict(read(Point(k + offset)), write(Point(k)), trip=10) is carried


def test_offset_larger_than_the_range_is_no_dependence():
    assert not conflict(read(Point(k - 5)), write(Point(k)), trip=5)
    assert conflict(read(Point(k - 5)), write(Point(k)), trip=6)


def test_a_write_must_touch_each_element_once():
    assert not conflict(write(Point(k)), write(Point(k)), trip=10)
    assert not conflict(write(Point(k * 2 + 1)), write(Point(k * 2 + 1)), trip=10)
    assert conflict(write(Point(Affine.constant(0))), write(Point(Affine.constant(0))), trip=10)
    assert not conflict(write(Point(Affine.constant(0))), write(Point(Affine.constant(0))), trip=1)


def test_gcd_test_separates_even_and_odd():
    assert not conflict(read(Point(k * 2 + 1)), write(Point(k * 2)), trip=None)
    assert conflict(read(Point(k * 2 - 2)), write(Point(k * 2)), trip=None)


def test_rows_of_a_2d_array():
    m = Affine.constant(8)
    row = Span(Affine.constant(0), m, 1)
    assert conflict(read(Point(k - 1), row), write(Point(k), row), trip=4)        # u[i-1, :] then u[i, :] = ...
    assert not conflict(read(Point(k + 1), row), write(Point(k), row), trip=4)
    left, right = Span(Affine.constant(0), Affine.constant(4), 1), Span(Affine.constant(4), Affine.constant(4), 1)
    assert not conflict(read(Point(k - 1), right), write(Point(k), left), trip=4)  # disjoint columns


def test_a_window_that_slides_with_the_index():
    window = Span(k, Affine.constant(3), 1)            # x[i:i + 3]
    # x[i] = sum(x[i:i + 3]) reads ahead of the writes: fine
    assert not conflict(read(window), write(Point(k)), trip=10)
    # x[i + 2] = sum(x[i:i + 3]) reads what the two previous iterations wrote
    assert conflict(read(window), write(Point(k + 2)), trip=10)
    # x[i] = ... before a read of x[i:i + 3]: the read at k' < k needs x[k] before it is written
    assert conflict(write(Point(k), pos=0), read(window, pos=1), trip=10)


def test_symbolic_offsets_cancel_or_count_as_dependences():
    n = Symbol("n")
    assert not conflict(read(Point(k + Affine.of(n) + 1)), write(Point(k + Affine.of(n))), trip=10)
    assert conflict(read(Point(k + Affine.of(n))), write(Point(k)), trip=10)      # unknown distance


def test_unknown_axes_are_dependences():
    assert conflict(read(ANY), write(Point(k)), trip=10)


def test_feasible_is_exact_on_small_systems():
    x, y = 1, 2
    assert feasible([({x: 2, y: -2}, -1)], []) is False                  # 2x - 2y = 1
    assert feasible([({x: 1, y: -1}, -3)], [({x: 1}, 0), ({y: -1}, 1)]) is True   # x = y + 3, x >= 0, y <= 1
    assert feasible([({x: 1, y: -1}, -3)], [({x: -1}, 2), ({y: 1}, 0)]) is False  # x = y + 3, x <= 2, y >= 0
    assert feasible([], [({x: 1}, -5), ({x: -1}, 4)]) is False           # 5 <= x <= 4


def test_affine_arithmetic_and_intervals():
    i, n = Symbol("i"), Symbol("n")
    e = Affine.of(i) * 2 - Affine.of(n) + 3
    assert e.coef(i) == 2 and e.coef(n) == -1 and e.const == 3
    assert e.interval({i: (0, 9), n: (4, 4)}) == (-1, 17)
    assert (e - e).is_const and (e - e).const == 0
    assert e.subst(i, Affine.constant(5)) == Affine.constant(13) - Affine.of(n)
    assert range_interval((0, 0), (10, 10), 1) == (0, 9)
    assert range_interval((9, 9), (-1, -1), -1) == (0, 9)
    assert range_interval((3, 3), (3, 3), 1) is None
