"""The syntax rule table: every Python construct, the lowest level that compiles it, its code.

This table is the single source of truth for `jit_syntax_level`: the front end asks it whether a
construct is accepted at the chosen level, diagnostics take their code, message and hint from
it, and docs/syntax.md is generated from it (`python docs/gen_syntax.py`; a test keeps them equal).

Levels, lowest to highest: STRICT (everything that lowers fully into the graph), COMPATIBLE
(adds Python-object effects the graph orders but does not optimize), LAX (any Python: the rest
runs as fallback blocks in the interpreter).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

STRICT, COMPATIBLE, LAX = "STRICT", "COMPATIBLE", "LAX"
LEVELS = (STRICT, COMPATIBLE, LAX)
RANK = {level: k for k, level in enumerate(LEVELS)}


@dataclass(frozen=True)
class Rule:
    """One construct: the lowest `jit_syntax_level` compiling it, its diagnostic code, message and hint."""

    key: str          # stable identifier used by the front end
    category: str     # statement | expression | builtin | method | type | call
    construct: str    # what the user wrote, as shown in docs
    level: str        # lowest level that compiles it
    code: str         # stable diagnostic code
    message: str      # what the diagnostic says
    hint: str         # how to get past it

    def accepted_at(self, level: str) -> bool:
        return RANK[level] >= RANK[self.level]


def _r(key, category, construct, level, code, message, hint=""):
    return Rule(key, category, construct, level, code, message, hint)


_LAX_HINT = "run at jit_syntax_level=LAX (it becomes a fallback block), or move it out of the jitted function"
_COMPAT_HINT = "use jit_syntax_level=COMPATIBLE or LAX"

RULES: list[Rule] = [
    # --- statements ------------------------------------------------------------------------
    _r("assign", "statement", "`x = ...`, chained `a = b = ...`", STRICT, "GJ100", "assignment"),
    _r("unpack", "statement", "tuple unpacking `a, (b, c) = ...`, starred `a, *rest = ...`", STRICT, "GJ101",
       "unpacking assignment"),
    _r("augassign", "statement", "augmented assignment `x += ...` (in place on arrays)", STRICT, "GJ102",
       "augmented assignment"),
    _r("annassign", "statement", "annotated assignment `x: float = ...`", STRICT, "GJ103", "annotated assignment"),
    _r("setitem", "statement", "index and slice assignment `x[i, 1:] = v`", STRICT, "GJ104", "item assignment"),
    _r("if", "statement", "`if/elif/else` on compile-time or run-time values", STRICT, "GJ105", "`if` statement"),
    _r("for", "statement", "`for` over range/tuple/list/zip/enumerate/dict items/array rows", STRICT, "GJ106",
       "`for` loop"),
    _r("while", "statement", "`while` loop", STRICT, "GJ107", "`while` loop"),
    _r("break", "statement", "`break`", STRICT, "GJ108", "`break`"),
    _r("continue", "statement", "`continue`", STRICT, "GJ109", "`continue`"),
    _r("return", "statement", "`return` anywhere, also inside loops", STRICT, "GJ110", "`return`"),
    _r("pass", "statement", "`pass`, docstrings, expression statements", STRICT, "GJ111", "`pass`"),
    _r("def", "statement", "nested `def` and closures", STRICT, "GJ112", "nested function"),
    _r("print", "statement", "`print(...)` (an ordered effect)", STRICT, "GJ113", "`print`"),
    _r("assert", "statement", "`assert cond, msg` (an ordered effect)", STRICT, "GJ114", "`assert`"),
    _r("raise", "statement", "`raise Error(...)` (an ordered effect)", STRICT, "GJ115", "`raise`"),
    _r("setattr", "statement", "attribute assignment `self.count = ...`, `module.x = ...`", COMPATIBLE, "GJ201",
       "assigning to an attribute is a Python-object effect", _COMPAT_HINT + ", or keep the value in a local"),
    _r("global", "statement", "`global` names read and written at call time", COMPATIBLE, "GJ202",
       "`global` declares module state the graph must read and write at each call",
       _COMPAT_HINT + ", or pass the value in and return it"),
    _r("mutate_object", "statement", "mutating lists/dicts reached from globals or attributes", COMPATIBLE,
       "GJ203", "mutating a Python container held outside the function", _COMPAT_HINT),
    _r("try", "statement", "`try/except/finally`", LAX, "GJ301", "`try` is not supported in a graph", _LAX_HINT),
    _r("with", "statement", "`with`", LAX, "GJ302", "`with` is not supported in a graph", _LAX_HINT),
    _r("del", "statement", "`del`", LAX, "GJ303", "`del` is not supported in a graph",
       _LAX_HINT + "; rebinding the name is enough"),
    _r("match", "statement", "`match`", LAX, "GJ304", "`match` is not supported in a graph",
       _LAX_HINT + "; or use `if/elif`"),
    _r("nonlocal", "statement", "`nonlocal`", LAX, "GJ305", "`nonlocal` is not supported in a graph", _LAX_HINT),
    _r("class", "statement", "class definition inside the function", LAX, "GJ306",
       "a class definition inside a jitted function is not supported", "define the class at module level"),
    _r("import", "statement", "`import` inside the function", LAX, "GJ307",
       "`import` inside a jitted function is not supported", "import at module level"),
    _r("for_else", "statement", "`for ... else`", LAX, "GJ308", "`for ... else` is not supported in a graph",
       _LAX_HINT + "; or use a flag"),
    _r("while_else", "statement", "`while ... else`", LAX, "GJ309", "`while ... else` is not supported in a graph",
       _LAX_HINT + "; or use a flag"),
    _r("async", "statement", "`async def`, `async for`, `async with`, `await`", LAX, "GJ310",
       "asynchronous code is not supported in a graph", _LAX_HINT),
    _r("yield", "statement", "`yield`, `yield from` (generators)", LAX, "GJ311",
       "a generator cannot be compiled into a graph", "return a tuple or list instead"),
    _r("decorated_def", "statement", "decorated nested `def`", LAX, "GJ312",
       "a decorated nested function is not supported in a graph", "define it at module level"),
    _r("unroll_budget", "statement", "a `for` loop (or comprehension) over a compile-time sequence past the "
       "compile budget (transpiler/budget.py) that cannot stay a run-time loop", LAX, "GJ313",
       "this loop is past the compile budget for unrolling",
       _LAX_HINT + "; or loop over an array, or a `range` whose index is used as a run-time value"),
    # --- expressions -----------------------------------------------------------------------
    _r("arith", "expression", "arithmetic `+ - * / // % ** @`, bitwise `& | ^ ~ << >>`, unary `-x`", STRICT,
       "GJ120", "arithmetic"),
    _r("compare", "expression", "comparisons, chained comparisons, `is`/`is not` against constants", STRICT,
       "GJ121", "comparison"),
    _r("boolop", "expression", "`and`, `or`, `not`", STRICT, "GJ122", "boolean operator"),
    _r("ifexp", "expression", "conditional expression `a if c else b`", STRICT, "GJ123", "conditional expression"),
    _r("subscript", "expression", "indexing and slicing: negative steps, `None`, `...`, boolean masks, arrays",
       STRICT, "GJ124", "indexing"),
    _r("attribute", "expression", "attributes of arrays and compile-time objects", STRICT, "GJ125", "attribute"),
    _r("display", "expression", "tuple, list and dict displays", STRICT, "GJ126", "display"),
    _r("comprehension", "expression", "list/dict comprehensions, generator expressions consumed by builtins",
       STRICT, "GJ127", "comprehension"),
    _r("lambda", "expression", "`lambda`", STRICT, "GJ128", "lambda"),
    _r("fstring_static", "expression", "f-strings on compile-time values", STRICT, "GJ129", "f-string"),
    _r("fstring_runtime", "expression", "f-strings and `str()` of run-time values", COMPATIBLE, "GJ221",
       "formatting a run-time value builds a Python string at each call", _COMPAT_HINT),
    _r("in_runtime", "expression", "`in` / `not in` on run-time containers", COMPATIBLE, "GJ222",
       "`in` on a run-time value is a Python-level test", _COMPAT_HINT + ", or use np.isin / np.any(x == v)"),
    _r("walrus", "expression", "assignment expression `:=`", LAX, "GJ320",
       "the assignment expression `:=` is not supported in a graph", "assign on its own line"),
    _r("set", "expression", "set displays and set comprehensions", LAX, "GJ321",
       "sets are not supported in a graph", _LAX_HINT + "; or use a tuple / np.unique"),
    _r("starred_call", "expression", "`*` / `**` unpacking of run-time values in calls", LAX, "GJ322",
       "unpacking a run-time value into a call is not supported", "unpack compile-time tuples and dicts only"),
    # --- builtins --------------------------------------------------------------------------
    _r("builtin_len", "builtin", "`len`", STRICT, "GJ130", "`len`"),
    _r("builtin_isinstance", "builtin", "`isinstance`", STRICT, "GJ131", "`isinstance`"),
    _r("builtin_range", "builtin", "`range`", STRICT, "GJ132", "`range`"),
    _r("builtin_zip", "builtin", "`zip`, `enumerate`, `reversed`", STRICT, "GJ133", "`zip`"),
    _r("builtin_minmax", "builtin", "`min`, `max`, `abs`, `sum`, `round`", STRICT, "GJ134", "`min`/`max`"),
    _r("builtin_anyall", "builtin", "`any`, `all`", STRICT, "GJ135", "`any`/`all`"),
    _r("builtin_map", "builtin", "`map`, `filter`, `sorted`", STRICT, "GJ136", "`map`/`filter`/`sorted`"),
    _r("builtin_convert", "builtin", "`int`, `float`, `bool` of array values; `tuple`, `list`", STRICT, "GJ137",
       "conversion"),
    _r("builtin_getattr", "builtin", "`getattr`, `hasattr` with constant names", STRICT, "GJ138",
       "`getattr`/`hasattr`"),
    _r("builtin_iter", "builtin", "`iter`, `next`", LAX, "GJ330", "`iter`/`next` are not supported in a graph",
       "iterate with a `for` loop"),
    _r("builtin_dynamic", "builtin", "`eval`, `exec`, `globals`, `locals`, `vars`, `input`, `open`", LAX, "GJ331",
       "this builtin needs the Python interpreter", _LAX_HINT),
    _r("builtin_setattr", "builtin", "`setattr`, `delattr`", COMPATIBLE, "GJ231",
       "`setattr` is a Python-object effect", _COMPAT_HINT),
    # --- container methods -----------------------------------------------------------------
    _r("list_methods", "method", "list methods `append`, `extend`, `insert`, `pop`, `index`, `count`, `reverse`",
       STRICT, "GJ140", "list method"),
    _r("dict_methods", "method", "dict methods `get`, `keys`, `values`, `items`, `update`, `pop`, `setdefault`",
       STRICT, "GJ141", "dict method"),
    _r("str_methods", "method", "string methods on compile-time strings", STRICT, "GJ142", "string method"),
    # --- data types ------------------------------------------------------------------------
    _r("type_scalar", "type", "`int`, `float`, `bool`, `complex`, `None`", STRICT, "GJ150", "scalar"),
    _r("type_str", "type", "`str` (compile-time)", STRICT, "GJ151", "string"),
    _r("type_containers", "type", "`tuple`, `list`, `dict`", STRICT, "GJ152", "container"),
    _r("type_ndarray", "type", "NumPy arrays and scalars", STRICT, "GJ153", "array"),
    _r("return_dict", "type", "returning a dict holding run-time values", COMPATIBLE, "GJ251",
       "returning a dict builds a Python dict at each call", _COMPAT_HINT + ", or return a tuple"),
    # --- call targets ----------------------------------------------------------------------
    _r("call_numpy", "call", "NumPy functions, array methods, `math` functions, `np.random`", STRICT, "GJ160",
       "NumPy call"),
    _r("call_python", "call", "Python functions with source (inlined), recursion with compile-time depth",
       STRICT, "GJ161", "function call"),
    _r("call_jit", "call", "other jitted functions and Cells", STRICT, "GJ162", "jitted call"),
    _r("call_class", "call", "classes and Cells built from compile-time arguments", STRICT, "GJ163",
       "constructor call"),
    _r("inline_budget", "call", "a call past the inlining budget (transpiler/budget.py): calls nested deeper "
       "than the depth limit, or more graph nodes than the node limit", LAX, "GJ340",
       "this call is past the compile budget for inlining", _LAX_HINT + "; or write the recursion as a loop"),
    _r("call_opaque", "call", "other Python callables with run-time arguments (ordered opaque calls)",
       COMPATIBLE, "GJ261", "calling a Python function without source on run-time values",
       _COMPAT_HINT + ", or use NumPy"),
]

BY_KEY: dict[str, Rule] = {r.key: r for r in RULES}
BY_CODE: dict[str, Rule] = {r.code: r for r in RULES}
assert len(BY_KEY) == len(RULES) and len(BY_CODE) == len(RULES), "rule keys and codes must be unique"


# LibCST node kinds the front end does not lower, and the row that reports them.
STATEMENT_RULES = {
    "Try": "try", "TryStar": "try", "With": "with", "Del": "del", "Match": "match", "Nonlocal": "nonlocal",
    "ClassDef": "class", "Import": "import", "ImportFrom": "import",
}
EXPRESSION_RULES = {
    "NamedExpr": "walrus", "Set": "set", "SetComp": "set", "Await": "async", "Yield": "yield",
}
BUILTIN_RULES = {
    "iter": "builtin_iter", "next": "builtin_iter", "aiter": "builtin_iter", "anext": "builtin_iter",
    "eval": "builtin_dynamic", "exec": "builtin_dynamic", "globals": "builtin_dynamic",
    "locals": "builtin_dynamic", "vars": "builtin_dynamic", "input": "builtin_dynamic", "open": "builtin_dynamic",
    "compile": "builtin_dynamic", "breakpoint": "builtin_dynamic", "__import__": "builtin_dynamic",
    "set": "set", "frozenset": "set", "setattr": "builtin_setattr", "delattr": "builtin_setattr",
}


# Rows whose diagnostic depends on whether a value is known at compile time or only at run time
# (`f"{x}"` is fine for a compile-time x). `graphjit check`, which does not know the arguments,
# reports them as notes where they may come from an argument (docs/diagnostics.md).
VALUE_DEPENDENT = frozenset({"fstring_runtime", "in_runtime", "starred_call", "return_dict", "call_opaque"})


def hint_at(level: str, hint: str) -> str:
    """`hint` as shown at `level`: it never suggests the level in use (or a lower one)."""
    if not hint or not level:
        return hint
    level = level.upper()
    if level == LAX:
        hint = hint.replace(_LAX_HINT, "move it out of the jitted function")
        hint = hint.replace(_COMPAT_HINT + ", or ", "").replace(_COMPAT_HINT + "; ", "").replace(_COMPAT_HINT, "")
    elif level == COMPATIBLE:
        hint = hint.replace(_COMPAT_HINT, "use jit_syntax_level=LAX")
    return hint.strip("; ,")


def rule(key: str) -> Rule:
    return BY_KEY[key]


def counts_by_level() -> dict:
    """How many rows each level accepts (the issue note quotes these)."""
    return {level: sum(1 for r in RULES if r.accepted_at(level)) for level in LEVELS}


def level_of(text: Optional[str]) -> str:
    return (text or LAX).upper()
