"""The syntax corpus: one small function per construct, each tagged with its row of the rule table.

tests/transpiler/test_syntax_levels.py compiles every function here at STRICT, COMPATIBLE and LAX. Where the
row's level accepts the construct, the compiled function must do exactly what the eager one does
(two calls with fresh seeded inputs: results, argument mutation, printed output, module state,
raised exceptions). Where it does not, compiling must raise `GraphSyntaxError` with exactly the
diagnostics the function's markers name:

    del y  # <- GJ303:5

A marker `# <- CODE:COL` says: a diagnostic CODE at this line, column COL (1-based), where the
construct starts. A function may carry several markers; it must get those diagnostics and no others.

Each function uses its tagged construct and otherwise only STRICT constructs, so the level that
rejects it is the row's level. `@case(key, args)`: `args(rng, k)` builds the arguments of call k.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import operator
import statistics
from dataclasses import dataclass
from typing import Callable

import numpy as np

import graphjit as gj
from graphjit import nn


@dataclass
class Entry:
    name: str
    key: str                 # the row of transpiler.rules.RULES this function exercises
    fn: Callable
    make_args: Callable      # (rng, k) -> tuple of arguments for call k (0 or 1)


CORPUS: dict[str, Entry] = {}


def case(key: str, args: Callable = None):
    def register(fn):
        assert fn.__name__ not in CORPUS, fn.__name__
        CORPUS[fn.__name__] = Entry(fn.__name__, key, fn, args or vec())
        return fn
    return register


# --- argument factories -------------------------------------------------------------------------

def vec(n=4, scale=1.0, shift=0.0):
    """One float64 vector; call 1 gets larger values (so run-time branches go the other way)."""
    return lambda rng, k: (rng.random(n) * scale + shift + k,)


def two_vecs(n=4):
    return lambda rng, k: (rng.random(n) + k, rng.random(n))


def mat(r=3, c=4):
    return lambda rng, k: (rng.random((r, c)) + 0.2 * k,)


def with_static(value0, value1, n=4):
    """A vector and a compile-time argument that differs between the two calls."""
    return lambda rng, k: (rng.random(n), (value0, value1)[k])


def ints(n=4):
    return lambda rng, k: (rng.integers(0, 16, n), rng.integers(1, 8, n))


# --- module state the functions read and write (reset before each run) --------------------------

COUNTER = 0
LAST = None
LOG: list = []
TABLE: dict = {}
SCALE = 2.5


class Box:
    def __init__(self):
        self.count = 0
        self.total = 0.0
        self.items = []


BOX = Box()


class Config:
    scale = 0.5
    name = "cfg"
    layers = (2, 3)


CONFIG = Config()


RESETS: list = []  # more state to reset (tests/syntax_fixtures.py registers its own)


def reset() -> None:
    global COUNTER, LAST
    for extra in RESETS:
        extra()
    COUNTER = 0
    LAST = None
    LOG.clear()
    TABLE.clear()
    TABLE["seed"] = 1.0
    BOX.__dict__.clear()
    BOX.__init__()
    np.random.seed(7)


def state() -> dict:
    """The module state the corpus touches, copied."""
    import copy
    return copy.deepcopy({"COUNTER": COUNTER, "LAST": LAST, "LOG": LOG, "TABLE": TABLE, "BOX": vars(BOX)})


# --- helpers (inlined when called; they are not corpus entries) ---------------------------------

def _scale(v, k=2.0):
    return v * k


def _combine(*parts, weight=1.0, **named):
    total = parts[0] * weight
    for p in parts[1:]:
        total = total + p
    for name in sorted(named):
        total = total - named[name]
    return total


def _power(v, n):
    if n == 0:
        return v * 0 + 1
    return v * _power(v, n - 1)


def _tick(i):
    print("tick", i)
    return i < 2


@gj.jit
def _jitted_double(v):
    return v * 2.0


class Point:
    def __init__(self, x, y=0):
        self.x = x
        self.y = y

    def norm1(self):
        return abs(self.x) + abs(self.y)


DENSE = nn.Dense(4, 2, weight_init="ones", bias_init="zeros")


class Affine(nn.Cell):
    def __init__(self, a, b):
        super().__init__()
        self.a = a
        self.b = b

    def construct(self, x):
        return x * self.a + self.b


AFFINE = Affine(2.0, 1.0)


# =================================================================================================
# statements, STRICT
# =================================================================================================

@case("assign")
def assign_simple(x):
    y = x * 2.0
    return y


@case("assign")
def assign_chained(x):
    a = b = x + 1.0
    return a * b


@case("assign")
def assign_rebind(x):
    y = x
    y = y - 1.0
    return y, x


@case("unpack")
def unpack_nested(x):
    a, (b, c) = x[0], (x[1], x[2])
    return a + b * c


@case("unpack")
def unpack_starred(x):
    first, *rest = (x[0], x[1], x[2], x[3])
    return first, rest


@case("unpack")
def unpack_star_middle(x):
    a, *mid, z = x[0], x[1], x[2], x[3]
    return a - z + len(mid)


@case("unpack", mat(2, 3))
def unpack_rows(m):
    top, bottom = m
    return top - bottom


@case("unpack", two_vecs())
def unpack_swap(x, y):
    x, y = y, x
    return x - y


@case("unpack", lambda rng, k: (rng.random((2 + k, 3)),))
def unpack_wrong_count_raises(m):
    top, bottom = m
    return top - bottom


@case("augassign")
def aug_array_alias(x):
    y = x * 1.0
    z = y
    y += 1.0
    return z


@case("augassign")
def aug_arg_inplace(x):
    x *= 2.0
    return x.sum()


@case("augassign")
def aug_scalar(x):
    n = 1
    n += 2
    n **= 2
    return x * n


@case("augassign")
def aug_subscript(x):
    x[0] += 10.0
    return x


@case("augassign")
def aug_accumulate(x):
    acc = 0.0
    for i in range(3):
        acc += x[i]
    return acc


@case("annassign")
def ann_local(x):
    scale: float = 0.5
    y: np.ndarray = x * scale
    return y


@case("annassign")
def ann_declared_then_set(x):
    n: int
    n = 3
    return x[:n]


@case("setitem")
def setitem_arg(x):
    x[0] = -1.0
    return x.sum()


@case("setitem", mat())
def setitem_slice(m):
    y = m.copy()
    y[1:, ::2] = 0.0
    return y


@case("setitem")
def setitem_mask(x):
    y = x.copy()
    y[y > 0.5] = 1.0
    return y


@case("setitem")
def setitem_runtime_index(x):
    i = int(x.argmax())
    x[i] = 0.0
    return i


@case("setitem")
def setitem_list_item(x):
    parts = [x[0], x[1]]
    parts[1] = x[2]
    return parts


@case("setitem")
def setitem_local_dict(x):
    d = {"a": x}
    d["b"] = x * 2
    return d["a"] + d["b"]


@case("if", with_static("double", "half"))
def if_static(x, mode):
    if mode == "double":
        y = x * 2
    elif mode == "half":
        y = x / 2
    else:
        y = x
    return y


@case("if")
def if_runtime(x):
    if x.sum() > 3.0:
        y = x - 1.0
    else:
        y = x + 1.0
    return y


@case("if")
def if_elif_runtime(x):
    s = x.mean()
    if s > 1.2:
        label = 2
    elif s > 0.5:
        label = 1
    else:
        label = 0
    return label


@case("if")
def if_no_else(x):
    y = x
    if x[0] > 0.5:
        y = y * 10
    return y


@case("for")
def for_range(x):
    total = x[0] * 0
    for i in range(1, len(x)):
        total = total + x[i] * i
    return total


@case("for")
def for_range_runtime_bound(x):
    n = int(x.sum())
    acc = 0
    for i in range(n):
        acc = acc + i
    return acc


@case("for")
def for_tuple(x):
    out = x
    for scale in (1.0, 2.0, 0.5):
        out = out * scale
    return out


@case("for")
def for_list(x):
    parts = []
    for k in [0, 2]:
        parts.append(x[k])
    return parts


@case("for", two_vecs())
def for_zip(x, y):
    acc = 0.0
    for a, b in zip(x, y):
        acc = acc + a * b
    return acc


@case("for")
def for_enumerate(x):
    acc = 0.0
    for i, v in enumerate((x, x * 2)):
        acc = acc + i * v.sum()
    return acc


@case("for")
def for_dict_items(x):
    weights = {"a": 1.0, "b": -2.0}
    out = x
    for name, w in weights.items():
        out = out + w * len(name)
    return out


@case("for", mat())
def for_rows(m):
    total = np.zeros(m.shape[1])
    for row in m:
        total = total + row ** 2
    return total


@case("for")
def for_variables_after_loop(x):
    for i in range(3):
        y = x * i
    return i, y


@case("for", mat())
def for_row_after_loop(m):
    for row in m:
        pass
    return row


@case("for")
def for_runtime_range_variable_after(x):
    i = -1
    for i in range(int(x.sum())):
        pass
    return i


@case("for")
def for_body_rebinds_loop_variable(x):
    j = -1
    for j in range(int(x.sum())):
        j = j * 10
    for i in range(3):
        i = i + 100
    return i, j


@case("while")
def while_runtime(x):
    y = x.copy()
    while y.sum() > 1.0:
        y = y * 0.5
    return y


@case("while")
def while_counter(x):
    i = 0
    while i < 3:
        x = x + i
        i += 1
    return x, i


@case("while")
def while_condition_effect(x):
    i = 0
    while _tick(i):
        i += 1
    return x * i


@case("break")
def break_for(x):
    total = 0.0
    for i in range(4):
        if x[i] > 0.7:
            break
        total = total + x[i]
    return total


@case("break")
def break_keeps_loop_variable(x):
    for i in range(4):
        if x[i] > 0.7:
            break
    return i


@case("break", mat())
def break_nested(m):
    count = 0
    for i in range(3):
        for j in range(4):
            if m[i, j] > 0.5:
                break
            count += 1
    return count


@case("break")
def break_while_true(x):
    i = 0
    while True:
        if i >= 3 or x[i] > 0.8:
            break
        i += 1
    return i


@case("continue")
def continue_for(x):
    total = 0.0
    for v in x:
        if v < 0.5:
            continue
        total = total + v
    return total


@case("continue")
def continue_while(x):
    i = 0
    s = 0.0
    while i < 4:
        i += 1
        if x[i - 1] > 0.5:
            continue
        s = s + x[i - 1]
    return s


@case("return")
def return_in_loop(x):
    for i in range(4):
        if x[i] > 0.5:
            return i
    return -1


@case("return", mat())
def return_nested_loops(m):
    for i in range(3):
        for j in range(4):
            if m[i, j] > 0.9:
                return i * 10 + j
    return -1


@case("return")
def return_in_while(x):
    i = 0
    while i < 8:
        if x[i % 4] > 0.7:
            return x[i % 4]
        i += 1
    return 0.0


@case("return")
def return_early(x):
    if x.sum() > 3:
        return x
    y = x * 2
    return y


@case("return")
def return_bare(x):
    x[0] = 0.0
    return


@case("pass")
def pass_and_docstring(x):
    """A docstring is a statement too."""
    pass
    x.sum()
    return x


@case("pass")
def pass_in_branch(x):
    if x.sum() > 3:
        pass
    else:
        x = x + 1
    return x


@case("def")
def def_nested(x):
    def scale(v, k=2.0):
        return v * k
    return scale(x) + scale(x, 3.0)


@case("def")
def def_closure(x):
    offset = x.mean()

    def shift(v):
        return v - offset
    return shift(x)


@case("def")
def def_nested_twice(x):
    def inner(v):
        def innermost(w):
            return w + 1
        return innermost(v) * 2
    return inner(x)


@case("print")
def print_values(x):
    print("sum:", x.sum())
    return x


@case("print")
def print_kwargs(x):
    print(x[0], x[1], sep=" | ", end="!\n")
    return x * 2


@case("print")
def print_ordered(x):
    print("before")
    y = x + 1
    print("after", y.shape, y)
    return y


@case("print")
def print_containers(x):
    print([1, 2], (3,), {"k": 4}, [x[0] > 2])
    return x


@case("assert")
def assert_static(x):
    assert x.shape[0] == 4
    return x


@case("assert")
def assert_runtime(x):
    assert x.sum() < 3.0, "too big"
    return x


@case("assert")
def assert_runtime_message(x):
    assert x[0] < 0.5, x[0]
    return x


@case("raise")
def raise_runtime(x):
    if x.max() > 1.0:
        raise ValueError("too large")
    return x


@case("raise", with_static(3, -1))
def raise_static(x, n):
    if n < 0:
        raise TypeError("negative n")
    return x * n


@case("raise")
def raise_in_loop(x):
    for i in range(4):
        if x[i] > 1.5:
            raise IndexError("bad element")
    return x


# =================================================================================================
# statements, COMPATIBLE
# =================================================================================================

@case("setattr")
def setattr_global_object(x):
    BOX.count = BOX.count + 1  # <- GJ201:5
    return x + BOX.count


@case("setattr")
def setattr_augmented(x):
    BOX.total += float(x.sum())  # <- GJ201:5
    return x


@case("setattr", lambda rng, k: (Box(), rng.random(3)))
def setattr_argument(box, x):
    box.items = [x.max()]  # <- GJ201:5
    return x


@case("global")
def global_counter(x):
    global COUNTER  # <- GJ202:5
    COUNTER += 1
    return x * COUNTER


@case("global")
def global_array(x):
    global LAST  # <- GJ202:5
    LAST = x.copy()
    return x


@case("mutate_object")
def mutate_global_list(x):
    LOG.append(x.sum())  # <- GJ203:5
    return x


@case("mutate_object")
def mutate_global_dict(x):
    TABLE["last"] = x.max()  # <- GJ203:5
    return x


@case("mutate_object")
def mutate_attribute_list(x):
    BOX.items.append(x[0])  # <- GJ203:5
    return x


@case("mutate_object")
def mutate_then_read_global_list(x):
    LOG.append(x[0])  # <- GJ203:5
    return len(LOG), LOG[-1]


@case("mutate_object")
def mutate_global_dict_in_loop(x):
    for i in range(2):
        TABLE[i] = x[i]  # <- GJ203:9
    return x


@case("global")
def global_written_by_helper(x):
    def bump(k):
        global COUNTER  # <- GJ202:9
        COUNTER += k
    before = COUNTER
    bump(2)
    return x * before + COUNTER


@case("mutate_object")
def mutate_in_while_condition(x):
    LOG.extend([1, 2, 3])  # <- GJ203:5
    n = 0
    while LOG.pop() > 1:  # <- GJ203:11
        n += 1
    return x * n, len(LOG)


@case("global")
def global_read_after_write(x):
    global COUNTER  # <- GJ202:5
    COUNTER = COUNTER + 2
    if COUNTER > 3:
        return x
    return x * COUNTER


# =================================================================================================
# statements, LAX
# =================================================================================================

@case("try")
def try_except(x):
    try:  # <- GJ301:5
        y = x * (1.0 / float(x.sum() > 3))
    except ZeroDivisionError:
        y = x
    return y * 2


@case("try")
def try_finally(x):
    try:  # <- GJ301:5
        print("body", x[0])
    finally:
        print("cleanup")
    return x


@case("try")
def try_return_in_loop(x):
    for i in range(4):
        try:  # <- GJ301:9
            if x[i] > 0.5:
                return i
        except KeyError:
            pass
    return -1


@case("try")
def try_raises_through(x):
    try:  # <- GJ301:5
        if x[0] > 1.0:
            raise ValueError("first element too large")
    except KeyError:
        pass
    return x


@case("try")
def try_calls_nested_def(x):
    def halve(v):
        return v / 2
    double = lambda v: v * 2  # noqa: E731
    try:  # <- GJ301:5
        y = halve(x) + double(x)
    except ValueError:
        y = x
    return y


@case("try")
def try_in_runtime_loop(x):
    total = 0.0
    for i in range(int(x.sum()) + 1):
        try:  # <- GJ301:9
            total = total + 1.0 / (i - 2)
        except ZeroDivisionError:
            total = total - 100.0
    return total


@case("try")
def try_returns_tuple(x):
    try:  # <- GJ301:5
        return x[0], x[1]
    except IndexError:
        return None


@case("with")
def with_errstate(x):
    with np.errstate(divide="ignore"):  # <- GJ302:5
        y = np.log(x - x)
    return y


@case("with")
def with_raises(x):
    with np.errstate(all="ignore"):  # <- GJ302:5
        if x[0] > 1.0:
            raise RuntimeError("inside with")
    return x


@case("with")
def with_return_in_loop(x):
    for i in range(4):
        with np.errstate(all="ignore"):  # <- GJ302:9
            if x[i] > 0.5:
                return x[i] * 10
    return x.sum()


@case("del")
def del_name(x):
    y = x * 2
    del y  # <- GJ303:5
    y = x + 1
    return y


@case("del")
def del_list_item(x):
    parts = [x[0], x[1], x[2]]
    del parts[1]  # <- GJ303:5
    return parts


@case("del")
def del_then_use(x):
    y = x
    del y  # <- GJ303:5
    return y


@case("del")
def del_missing_key(x):
    d = {"a": x}
    del d["zz"]  # <- GJ303:5
    return d["a"]


@case("del")
def del_in_loop(x):
    out = x
    for i in range(2):
        tmp = out * 2
        out = tmp + i
        del tmp  # <- GJ303:9
    return out


@case("del")
def del_global_key_then_read(x):
    del TABLE["seed"]  # <- GJ303:5
    return x * len(TABLE)


@case("match", with_static("double", "other"))
def match_statement(x, mode):
    match mode:  # <- GJ304:5
        case "double":
            y = x * 2
        case _:
            y = x
    return y


@case("match")
def match_runtime_value(x):
    match int(x[0] * 3):  # <- GJ304:5
        case 0:
            label = "zero"
        case 1 | 2:
            label = "small"
        case n if n > 5:
            label = f"big {n}"
        case _:
            label = "other"
    return label


@case("nonlocal")
def nonlocal_counter(x):
    count = 0

    def bump():
        nonlocal count  # <- GJ305:9
        count += 1
    bump()
    bump()
    return x * count


@case("nonlocal")
def nonlocal_in_loop(x):
    total = 0.0

    def add(v):
        nonlocal total  # <- GJ305:9
        total = total + v
    for i in range(3):
        add(x[i])
    return total


@case("class")
def class_inside(x):
    class Pair:  # <- GJ306:5
        def __init__(self, a):
            self.a = a
    p = Pair(x)
    return p.a * 2


@case("class")
def class_attribute_inside(x):
    class Const:  # <- GJ306:5
        k = 3
    return x * Const.k


@case("import")
def import_inside(x):
    import math as m  # <- GJ307:5
    return x * m.pi


@case("import")
def import_from_inside(x):
    from math import tau  # <- GJ307:5
    return x + tau


@case("for_else")
def for_else(x):
    for i in range(4):  # <- GJ308:5
        if x[i] > 0.9:
            break
    else:
        i = -1
    return i


@case("for_else")
def for_else_runtime_loop(x):
    total = 0.0
    for i in range(int(x.sum())):  # <- GJ308:5
        total = total + i
    else:
        total = -total
    return total


@case("while_else")
def while_else(x):
    i = 0
    while i < 4:  # <- GJ309:5
        if x[i] > 0.9:
            break
        i += 1
    else:
        i = -1
    return i


@case("while_else")
def while_else_with_break(x):
    i = 0
    while x[i % 4] < 1.5:  # <- GJ309:5
        i += 1
        if i > 6:
            break
    else:
        i = 100
    return i


@case("async")
def async_nested(x):
    async def helper():  # <- GJ310:5
        return 1
    return x * 2


@case("async")
def async_comprehension_inside(x):
    async def gather(items):  # <- GJ310:5
        return [v async for v in items]
    return x + 1


@case("yield")
def yield_generator(x):
    for i in range(2):
        yield x * i  # <- GJ311:9


@case("yield")
def yield_from_generator(x):
    yield from (x, x + 1)  # <- GJ311:5


@case("decorated_def")
def decorated_nested(x):
    @functools.lru_cache  # <- GJ312:5
    def double(n):
        return n * 2
    return x * double(3)


def _logged(fn):
    def wrapper(*args):
        print("calling", fn.__name__)
        return fn(*args)
    return wrapper


@case("decorated_def")
def decorated_with_wrapper(x):
    @_logged  # <- GJ312:5
    def scale(v):
        return v * 3
    return scale(x)


# past the compile budget (transpiler/budget.py); tests/transpiler/test_compile_budget.py tests it further
WORDS = ("word",) * 1100  # more items than the unrolling limit, and not numbers


@case("unroll_budget")
def loop_past_unroll_budget(x):
    total = x * 0.0
    for word in WORDS:  # <- GJ313:5
        total = total + len(word)
    return total


def _countdown(x, n):
    if n == 0:
        return x
    return _countdown(x + 1.0, n - 1)


@case("inline_budget")
def recursion_past_inline_budget(x):
    y = x * 2.0
    return _countdown(y, 100) + 1.0  # <- GJ340:12


# =================================================================================================
# expressions, STRICT
# =================================================================================================

@case("arith", two_vecs())
def arith_arrays(x, y):
    return (x + y) * (x - y) / 2.0 - x ** 2 + y // 0.3 + x % 0.25


@case("arith", ints())
def arith_bitwise(a, b):
    return (a & b) | (a ^ b) << 1, ~a >> 1


@case("arith", lambda rng, k: (rng.random((3, 4)), rng.random(4) + k))
def arith_matmul(m, v):
    return m @ v


@case("arith", with_static(5, 8))
def arith_python_numbers(x, n):
    return x * (n // 2) + n % 3 + 2 ** n - n / 4


@case("arith", with_static(2, 0))
def arith_division_by_zero(x, n):
    return x * (1 / n)


@case("arith")
def arith_unary(x):
    return -x + (+x) - abs(-x)


@case("compare", two_vecs())
def compare_arrays(x, y):
    return (x < y) | (x >= 0.5) & ~(x == y)


@case("compare")
def compare_chained(x):
    s = x.sum()
    return 1.0 < s < 3.0


@case("compare", lambda rng, k: (rng.random(3), None if k == 0 else rng.random(3)))
def compare_is_none(x, y):
    if y is None:
        return x
    return x + y


@case("compare", with_static(3, 5))
def compare_python_numbers(x, n):
    return n > 2 and n != 5, x


@case("boolop", with_static(True, False))
def boolop_static(x, flag):
    if flag and x.ndim == 1 or not flag:
        return x + 1
    return x


@case("boolop")
def boolop_runtime(x):
    return (x.sum() > 1.5) and (x.max() < 1.9)


@case("boolop")
def boolop_value(x):
    return x.sum() > 3 or x.min()


@case("boolop")
def boolop_not(x):
    return not (x.sum() > 3)


@case("ifexp")
def ifexp_runtime(x):
    return x * 2 if x.sum() > 3 else x - 1


@case("ifexp", with_static(3, 1))
def ifexp_static(x, n):
    return x[:n] if n > 1 else x


@case("subscript", mat())
def subscript_basic(m):
    return m[0], m[-1], m[1:, ::-1], m[..., 1], m[:, None, 0]


@case("subscript")
def subscript_negative_step(x):
    return x[::-2], x[-1:0:-1]


@case("subscript")
def subscript_mask(x):
    return x[x > 0.5]


@case("subscript", lambda rng, k: (rng.random(5), rng.integers(0, 5, 3)))
def subscript_fancy(x, idx):
    return x[idx]


@case("subscript")
def subscript_runtime_index(x):
    i = int(x.argmin())
    return x[i], x[i:]


@case("subscript")
def subscript_containers(x):
    t = (x, x * 2, x * 3)
    return t[1], t[-1], [1, 2, 3][1:], "abc"[::-1]


@case("attribute", mat())
def attribute_array(m):
    return m.shape, m.ndim, m.size, m.dtype, m.T


@case("attribute")
def attribute_static_object(x):
    return x * CONFIG.scale + len(CONFIG.layers)


@case("attribute")
def attribute_module(x):
    return x * np.pi + math.e


@case("display")
def display_tuple_list(x):
    return (x, [x[0], x[1]], ())


@case("display")
def display_dict(x):
    d = {"a": x, "b": 2}
    return d["a"] * d["b"]


@case("display")
def display_nested(x):
    return [[x[0]], (x[1], [x[2]])]


@case("comprehension")
def comprehension_list(x):
    return [x[i] * i for i in range(3)]


@case("comprehension")
def comprehension_dict(x):
    d = {k: x * k for k in (1, 2)}
    return d[1] + d[2]


@case("comprehension")
def comprehension_generator_sum(x):
    return sum(x[i] for i in range(4))


@case("comprehension")
def comprehension_filter(x):
    return [x[i] for i in range(4) if i % 2 == 0]


@case("comprehension", mat())
def comprehension_nested(m):
    return [m[i, j] for i in range(2) for j in range(2)]


@case("comprehension")
def comprehension_any(x):
    return any(v > 0.9 for v in (x[0], x[1])), all(v > 0.1 for v in x)


@case("lambda")
def lambda_simple(x):
    f = lambda v: v * 2 + 1  # noqa: E731
    return f(x)


@case("lambda")
def lambda_default(x):
    f = lambda v, k=3: v * k  # noqa: E731
    return f(x), f(x, 2)


@case("lambda")
def lambda_closure(x):
    c = x.mean()
    g = lambda v: v - c  # noqa: E731
    return g(x)


@case("fstring_static", with_static("a", "bb"))
def fstring_static(x, name):
    label = f"{name}:{x.shape[0]:03d}"
    print(label)
    return x


@case("fstring_static")
def fstring_of_unrolled_index(x):
    for i in range(3):
        assert x[i] < 1.5, f"element {i} is too large"
        print(f"step {i}")
    return x


@case("fstring_static")
def fstring_static_return(x):
    return f"n={x.ndim} shape={x.shape!r}"


@case("fstring_static")
def fstring_self_documenting(x):
    n = x.shape[0]
    return f"{n=}", f"{ n = :>3}", f"{n=!s}"


# =================================================================================================
# expressions, COMPATIBLE and LAX
# =================================================================================================

@case("fstring_runtime")
def fstring_runtime(x):
    msg = f"sum={x.sum():.3f}"  # <- GJ221:11
    return msg


@case("fstring_runtime")
def str_runtime(x):
    return str(x[0])  # <- GJ221:12


@case("in_runtime", lambda rng, k: (np.array([0.25, 0.5, 0.75]) + 0.1 * k,))
def in_runtime(x):
    return 0.5 in x  # <- GJ222:12


@case("in_runtime")
def not_in_runtime(x):
    return x[0] not in (0.0, 1.0)  # <- GJ222:12


@case("walrus")
def walrus_if(x):
    if (n := x.sum()) > 3:  # <- GJ320:9
        return n
    return -n


@case("walrus")
def walrus_in_comprehension(x):
    return [y for v in (x[0], x[1], x[2]) if (y := v * 2) > 1.0]  # <- GJ320:47


@case("set")
def set_display(x):
    s = {1, 2, 2}  # <- GJ321:9
    return x * len(s)


@case("set")
def set_comprehension(x):
    s = {i % 2 for i in range(4)}  # <- GJ321:9
    return x + len(s)


@case("set")
def set_builtin(x):
    s = set((1, 2, 1))  # <- GJ321:9
    return x + len(s)


@case("starred_call")
def starred_runtime_sequence(x):
    return np.add(*np.split(x, 2))  # <- GJ322:19


@case("starred_call")
def starred_runtime_tuple(x):
    return max(*np.nonzero(x > 0.5))  # <- GJ322:16


# =================================================================================================
# builtins
# =================================================================================================

@case("builtin_len")
def builtin_len(x):
    return len(x) + len((x, x)) + len("abc")


@case("builtin_len")
def builtin_len_runtime_list(x):
    return len(np.split(x, 2)), len(x.shape), len({"a": 1})


@case("builtin_isinstance", with_static(3, 2.5))
def builtin_isinstance(x, n):
    if isinstance(n, int) and isinstance(x, np.ndarray):
        return x * n
    return x


@case("builtin_isinstance")
def builtin_isinstance_runtime_scalar(x):
    s = x.sum()
    return isinstance(s, float), isinstance(s, np.ndarray), isinstance(x, np.ndarray), type(x) is np.ndarray


@case("builtin_range")
def builtin_range_step(x):
    acc = 0.0
    for i in range(3, -1, -2):
        acc = acc + x[i]
    return acc, list(range(5))[1::2]


@case("builtin_range")
def builtin_range_runtime_start(x):
    start = int(x[0] * 3)
    acc = 0
    for i in range(start, -1, -1):
        acc = acc + i
    return acc, len(range(2, 9, 3)), range(5)[-1]


@case("builtin_zip")
def builtin_zip_enumerate_reversed(x):
    out = []
    for i, (a, b) in enumerate(zip(x, reversed(x)), start=1):
        out.append(a * i - b)
    return out


@case("builtin_zip")
def builtin_zip_uneven_and_dict(x):
    pairs = list(zip((1, 2, 3), (x[0], x[1])))
    keys = [k for k, _ in enumerate({"a": 1, "b": 2})]
    return pairs, keys, list(reversed([x[0], x[1]]))


@case("builtin_minmax")
def builtin_min_max(x):
    return min(x[0], x[1]), max(x[2], x[3], 0.5), max((1, 5, 2)), min(3, 4)


@case("builtin_minmax")
def builtin_abs_sum_round(x):
    return abs(x - 0.5), sum(x), sum((x, x)), round(float(x[0]) * 10), round(2.567, 1)


@case("builtin_anyall")
def builtin_any_all(x):
    return any(x > 0.9), all(x > 0.1), any((False, 0)), all(())


@case("builtin_anyall")
def builtin_any_all_generators(x):
    return any(v > 1.0 for v in x), all(v < 2.0 for v in (x[0], x[1])), any([])


@case("builtin_map")
def builtin_map_filter(x):
    doubled = list(map(lambda v: v * 2, (x[0], x[1])))
    kept = list(filter(None, (0, 1, 2)))
    return doubled, kept


@case("builtin_map")
def builtin_sorted(x):
    order = sorted([3, 1, 2], key=lambda v: -v)
    return x[order[0]], sorted((2, 1)), sorted(x)


@case("builtin_convert")
def builtin_convert(x):
    return int(x.sum()), float(x[0]), bool(x.any()), tuple(x[:2]), list((1, 2))


@case("builtin_convert")
def builtin_convert_static_and_rows(x):
    m = x.reshape(2, 2)
    return float(3), int(True), bool([]), list(m), tuple(range(3)), int(x[0] * 10)


@case("builtin_getattr")
def builtin_getattr_hasattr(x):
    shape = getattr(x, "shape")
    scale = getattr(CONFIG, "missing", 3.0)
    return x * scale + len(shape), hasattr(CONFIG, "scale"), hasattr(CONFIG, "nothing")


@case("builtin_getattr")
def builtin_hasattr_array(x):
    return hasattr(x, "shape"), hasattr(x, "nope"), getattr(x, "ndim"), getattr(x, "T")


@case("builtin_iter")
def builtin_iter_next(x):
    it = iter((x, x * 2))  # <- GJ330:10
    first = next(it)  # <- GJ330:13
    return first + x


@case("builtin_iter")
def builtin_next_with_default(x):
    first = next(iter({"a": 1}), None)  # <- GJ330:13
    return x, first


@case("builtin_dynamic")
def builtin_eval(x):
    k = eval("2 + 1")  # <- GJ331:9
    return x * k


@case("builtin_dynamic")
def builtin_globals(x):
    g = globals()  # <- GJ331:9
    return x * g["SCALE"]


@case("builtin_setattr")
def builtin_setattr(x):
    setattr(BOX, "count", 7)  # <- GJ231:5
    return x


@case("builtin_setattr")
def builtin_setattr_runtime_value(x):
    setattr(BOX, "total", float(x.sum()))  # <- GJ231:5
    return x


@case("builtin_setattr")
def builtin_setattr_then_read(x):
    setattr(BOX, "total", 5.0)  # <- GJ231:5
    return x * getattr(BOX, "total") + BOX.total


# =================================================================================================
# container methods
# =================================================================================================

@case("list_methods")
def list_append_pop_insert(x):
    xs = [x]
    xs.append(x * 2)
    xs.extend([x * 3])
    last = xs.pop()
    xs.insert(0, last)
    return xs


@case("list_methods")
def list_index_count_reverse(x):
    names = ["a", "b", "a"]
    items = [x[0], x[1], x[2]]
    items.reverse()
    return x * names.count("a") + names.index("b"), items


@case("list_methods")
def list_append_in_range_loop(x):
    xs = []
    for i in range(3):
        xs.append(x[i] * i)
    return xs


@case("list_methods")
def list_same_length_in_runtime_if(x):
    xs = [x[0], x[1]]
    if x.sum() > 3:
        xs[0] = x[2]
    else:
        xs.reverse()
    return xs


@case("list_methods", mat())
def list_append_per_row(m):
    sums = []
    for row in m:
        sums.append(row.sum())
    return sums


@case("list_methods")
def list_sort_remove_copy_clear(x):
    xs = [3, 1, 2]
    xs.sort()
    ys = ["bb", "a", "ccc"]
    ys.sort(key=lambda v: len(v), reverse=True)
    zs = [x[0], x[1]]
    ws = zs.copy()
    ws.clear()
    vs = [1, 2, 1]
    vs.remove(1)
    return xs, ys, zs, ws, vs


@case("dict_methods")
def dict_get_keys_values(x):
    d = {"a": x, "b": x * 2}
    total = d.get("a") + d.get("c", 1.0)
    return total, list(d.keys()), sum(d.values())


@case("dict_methods")
def dict_update_pop_setdefault(x):
    d = {"a": 1}
    d.update({"b": 2})
    d.setdefault("c", 3)
    b = d.pop("b")
    return x * b + len(d), [k for k, v in d.items()]


@case("dict_methods")
def dict_item_in_runtime_if(x):
    d = {"a": x[0], "b": 1.0}
    if x[0] > 0.5:
        d["a"] = x[1]
        d.update({"b": 2.0})
    return d["a"] * d["b"], d.get("b")


@case("dict_methods")
def dict_popitem_clear_copy(x):
    d = {"a": x[0], "b": 1}
    c = d.copy()
    c["z"] = 3
    key, value = d.popitem()
    d.clear()
    return len(c), key, value, len(d)


@case("str_methods", with_static("Relu", "tanh"))
def str_methods(x, name):
    if name.lower().startswith("relu"):
        return np.maximum(x, 0.5)
    return np.tanh(x), "-".join(["a", name.upper()])


@case("str_methods", with_static("conv_3x3", "dense_8"))
def str_methods_parse(x, spec):
    kind, size = spec.split("_")
    width = int(size.split("x")[0])
    return x[:width], kind.upper(), spec.replace("_", "-"), "{}/{}".format(kind, width), spec.startswith("conv")


# =================================================================================================
# data types
# =================================================================================================

@case("type_scalar")
def type_scalars(x):
    return x * 2, 3, 2.5, True, None, 1j


@case("type_scalar", with_static(2, 3.5))
def type_scalar_argument(x, n):
    return x + n, n * 2, -n


@case("type_str")
def type_str(x):
    s = "abc" + "def"
    return s, s * 2, x


@case("type_str", with_static("ab", "xyz"))
def type_str_operations(x, s):
    t = s + "!" * 2
    return t, t[1:], len(t), "b" in s, s < "b", x


@case("type_containers")
def type_containers(x):
    return (1, [2, 3], {"a": 4}), x


@case("type_containers")
def type_containers_nested(x):
    data = {"rows": [[1, 2], [3]], "pair": (x[0], [x[1]])}
    data["rows"][1].append(4)
    return data["rows"], data["pair"], len(data)


@case("type_containers")
def type_dict_from_pairs(x):
    d = dict(zip(("a", "b"), (x[0], x[1])))
    e = dict(a=x[2], b=2)
    return d["a"] + e["a"] * e["b"], list(d), sorted(e)


@case("type_ndarray")
def type_ndarray_dtypes(x):
    y = x.astype(np.float32)
    return y * np.float32(2), (x > 0.5).astype(np.int64) + 1, x.astype(np.complex128) * 1j


@case("type_ndarray")
def type_ndarray_scalar(x):
    s = x.sum()
    return s, s * 2, np.float32(s)


@case("return_dict")
def return_dict(x):
    return {"sum": x.sum(), "n": 3}  # <- GJ251:5


@case("return_dict")
def return_dict_in_branch(x):
    if x.sum() > 3:
        return {"big": x.max()}  # <- GJ251:9
    return {"small": 0}


# =================================================================================================
# call targets
# =================================================================================================

@case("call_numpy", mat())
def call_numpy_functions(m):
    return np.exp(-m).sum(axis=1) + np.linalg.norm(m) + m.reshape(-1).mean(), np.concatenate([m, m]).shape


@case("call_numpy")
def call_numpy_random(x):
    return x + np.random.rand(4)


@case("call_numpy")
def call_array_methods_and_attributes(x):
    y = x.copy()
    y.sort()
    return x.round(2), x.tolist(), y.searchsorted(0.5), x.nbytes, x.itemsize, x.real, x.astype(complex).imag


@case("call_numpy")
def call_numpy_generator(x):
    rng = np.random.default_rng(0)
    return x + rng.random(4), rng.integers(0, 10, 3)


@case("call_numpy")
def call_math(x):
    return x * math.sqrt(2.0) + math.floor(2.7)


@case("call_python")
def call_python_helper(x):
    return _scale(x) + _scale(x, k=0.5)


@case("call_python")
def call_python_varargs(x):
    return _combine(x, x * 2, weight=3.0, a=x[0], b=1.0)


@case("call_python")
def call_python_recursion(x):
    return _power(x, 3)


@case("call_jit")
def call_jitted(x):
    return _jitted_double(x) + 1


@case("call_jit")
def call_cells(x):
    return DENSE(x) + AFFINE(x).sum()


@case("call_class")
def call_class_static(x):
    p = Point(3, -4)
    return x * p.norm1()


@case("call_class")
def call_cell_built_inside(x):
    act = nn.ReLU()
    return act(x - 0.5)


@case("call_opaque")
def call_opaque_operator(x):
    return operator.mul(x, 2.0)  # <- GJ261:12


@case("call_opaque")
def call_opaque_reduce(x):
    return functools.reduce(operator.add, (x, x, x))  # <- GJ261:12


@case("call_opaque")
def call_library_functions(x):
    text = json.dumps({"s": round(float(x.sum()), 3)})  # <- GJ261:12
    y = copy.deepcopy(x)  # <- GJ261:9
    y[0] = 0.0
    m = statistics.mean([float(x[0]), float(x[1])])  # <- GJ261:9
    return text, y, m
