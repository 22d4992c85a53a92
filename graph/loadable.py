"""What a graph read from a file (`graphjit.load`) may name, and how big it may be: closed tables.

The loader checks every name against these tables before anything is resolved, imported or
allocated. Names are looked up in the table, never imported or walked attribute by attribute, so
the file decides nothing but which entry of a table it wants. docs/security.md explains the limits.
"""

from __future__ import annotations

import string
from typing import Any

# --- sizes ------------------------------------------------------------------------------------------
# The archive (export_load.py): members, and how many bytes each may expand to.
MAX_MEMBERS = 3                       # manifest.json, graph.txt, params.npz; nothing else
MAX_CENTRAL_DIRECTORY = 64 << 10      # bytes of the zip's table of contents
MAX_MANIFEST_BYTES = 1 << 20
MAX_GRAPH_TEXT_BYTES = 32 << 20
MAX_PARAMS_BYTES = 16 << 30           # what params.npz may hold in all
NPY_OVERHEAD = 64 << 10               # per stored array: its .npy header and the npz's zip records
MAX_PARAM_ENTRIES = 100_000

# Graph text (graph/parser.py, graph/literals.py).
MAX_LINES = 200_000
MAX_LINE_CHARS = 1 << 20
MAX_NODES = 100_000
MAX_REGION_DEPTH = 256                # if/for/while nested in one another (an elif chain nests one per branch)
MAX_LITERAL_CHARS = 1 << 20           # one constant or attribute value
MAX_LITERAL_DEPTH = 16                # brackets and signs nested in one literal
MAX_RANK = 32                         # NumPy's own limit is 64

# Values a loaded graph may hold: one array, and the scratch buffers of one function together.
ARRAY_BYTES_FLOOR = 1 << 30           # always allowed (1 GiB), whatever the archive declares
ARRAY_BYTES_FACTOR = 64               # or 64 x what the inputs and parameters declare together
MAX_ARRAY_BYTES = 64 << 30            # never more than this
MAX_STRING_CHARS = 1 << 20            # a string a loaded graph builds (`format`, `'a' * n`)
MAX_INT_BITS = 4096                   # a Python int a loaded graph computes (`10 ** n`, `1 << n`)
MAX_FORMAT_WIDTH = 1000               # width and precision in a `format` template
MAX_STEPS = 100_000_000               # nodes one call of a loaded graph runs, loop iterations included


def array_bytes_limit(declared_bytes: int) -> int:
    """The most one array of a loaded graph may take, given the bytes its inputs and parameters declare."""
    return min(MAX_ARRAY_BYTES, max(ARRAY_BYTES_FLOOR, ARRAY_BYTES_FACTOR * declared_bytes))


# --- names -----------------------------------------------------------------------------------------
# `raise` nodes: the builtin exceptions compiled code raises (Exception's subclasses only: a loaded
# graph cannot raise SystemExit, KeyboardInterrupt or GeneratorExit).
EXCEPTIONS = frozenset(f"builtins.{name}" for name in """
    ArithmeticError AssertionError AttributeError BufferError EOFError Exception FloatingPointError
    IndexError KeyError LookupError NameError NotImplementedError OverflowError RecursionError
    ReferenceError RuntimeError StopIteration TypeError UnboundLocalError ValueError ZeroDivisionError
    UnicodeError UnicodeDecodeError UnicodeEncodeError MemoryError OSError
    Warning UserWarning DeprecationWarning FutureWarning RuntimeWarning
""".split())

# `isinstance` nodes: the classes the front end names (transpiler/lower/builtin_calls.py).
CLASSES = frozenset([f"builtins.{n}" for n in "bool int float complex str tuple list dict slice".split()]
                    + [f"numpy.{n}" for n in """
    ndarray generic number integer signedinteger unsignedinteger inexact floating complexfloating bool_
    bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 float32 float64 complex64 complex128
    intp uintp longlong ulonglong double single half cdouble csingle
""".split()])

# `call` nodes: functions whose result is no bigger than their array arguments broadcast together
# (or than a matrix product of them), that read and write nothing outside them, and take no
# callables. Anything that sizes its result from a number (`zeros`, `arange`, `tile`, `repeat`,
# `histogram(bins=n)`, `math.factorial`) or multiplies sizes (`einsum`, `inner`, `cov`,
# `percentile(a, q)`), formats strings of any width, or reads, writes or configures, is left out.
CALLS = frozenset(
    [f"numpy.{n}" for n in """
    abs absolute acos acosh add all allclose amax amin angle any arccos arccosh arcsin arcsinh arctan
    arctan2 arctanh argmax argmin argpartition argsort argwhere around array_equal array_equiv asin asinh
    atan atan2 atanh average cbrt ceil clip conj conjugate copysign cos cosh count_nonzero
    cross cumprod cumsum deg2rad degrees diagonal diff divide divmod dot equal exp exp2 expm1 fabs
    fix flatnonzero flip fliplr flipud float_power floor floor_divide fmax fmin fmod frexp gcd greater
    greater_equal heaviside hypot imag interp isclose iscomplex isfinite isinf isnan isneginf
    isposinf isreal lcm ldexp less less_equal log log10 log1p log2 logaddexp logaddexp2 logical_and
    logical_not logical_or logical_xor matmul max maximum mean median min minimum mod modf moveaxis
    multiply nan_to_num nanargmax nanargmin nancumprod nancumsum nanmax nanmean nanmedian nanmin
    nanprod nanstd nansum nanvar negative nextafter nonzero not_equal
    polyval positive power prod ptp rad2deg radians ravel real reciprocal remainder
    rint round searchsorted sign signbit sin sinc sinh sort spacing sqrt square squeeze std subtract sum
    swapaxes take take_along_axis tan tanh trace transpose true_divide trunc unique var vdot where
    """.split()]
    + [f"numpy.linalg.{n}" for n in """
    cholesky cond det eig eigh eigvals eigvalsh inv lstsq matrix_rank multi_dot norm pinv qr slogdet
    solve svd svdvals""".split()]
    + [f"math.{n}" for n in """
    acos acosh asin asinh atan atan2 atanh cbrt ceil copysign cos cosh degrees dist erf erfc exp exp2 expm1
    fabs floor fmod frexp fsum gamma gcd hypot isclose isfinite isinf isnan isqrt ldexp lgamma log log10
    log1p log2 modf nextafter radians remainder sin sinh sqrt tan tanh trunc ulp""".split()]
    + [f"builtins.{n}" for n in "abs min max round len divmod sum any all".split()])

# The modules those names live in: the only ones a loaded graph's names are looked up in, all of
# them imported by graphjit itself (the op table uses numpy.linalg), so a lookup imports nothing.
MODULES = ("numpy", "numpy.linalg", "math", "builtins")


def lookup(qualified: str) -> Any:
    """The object a table name denotes: one attribute of a module graphjit has imported itself."""
    import sys
    module, _, name = qualified.rpartition(".")
    if qualified not in CALLS | CLASSES | EXCEPTIONS or module not in MODULES:
        raise KeyError(qualified)
    return getattr(sys.modules[module], name)


# --- format templates ----------------------------------------------------------------------------------
_SPEC_CHARS = set("<>=^+- #0,_.%" + string.digits + "bcdeEfFgGnosxX")


def check_format_template(template: Any, operands: int) -> None:
    """A `format` template may hold only plain fields (`{}`, `{0}`, `{!r}`, `{:>8.3f}`): no attribute
    or item access, no nested fields, width and precision at most MAX_FORMAT_WIDTH. Raises ValueError."""
    if not isinstance(template, str):
        raise ValueError("its template is not a string")
    if len(template) > MAX_LITERAL_CHARS:
        raise ValueError("its template is too long")
    try:
        fields = list(string.Formatter().parse(template))
    except ValueError as e:
        raise ValueError(f"its template is malformed ({e})") from None
    automatic = 0
    for _, field, spec, conversion in fields:
        if field is None:
            continue
        if field == "":
            index = automatic
            automatic += 1
        elif field.isdigit() and len(field) <= 6:
            index = int(field)
        else:
            raise ValueError(f"its template field {{{field}}} reads an attribute, an item or a name")
        if index >= operands:
            raise ValueError(f"its template field {{{field}}} has no value")
        if conversion not in (None, "r", "s", "a"):
            raise ValueError(f"its template conversion !{conversion} is unknown")
        body = spec[2:] if spec and len(spec) > 1 and spec[1] in "<>=^" and spec[0] not in "{}" else spec
        if body and ("{" in body or "}" in spec or not set(body) <= _SPEC_CHARS):
            raise ValueError(f"its template format spec {spec!r} is not a plain one")
        for number in "".join(c if c.isdigit() else " " for c in body or "").split():
            if len(number) > 4 or int(number) > MAX_FORMAT_WIDTH:
                raise ValueError(f"its template format spec {spec!r} asks for more than "
                                 f"{MAX_FORMAT_WIDTH} characters")
