"""Literal values in graph text: constants, static attributes, slice indices, access paths.

Printing and parsing are exact inverses over a closed set of values (numbers, strings, None,
booleans, tuples, slices, `...`, NumPy dtypes and scalars, operand references `$k`), and the
parser evaluates nothing: it walks Python's `ast` and builds only those values, so graph text
from a file can never run code.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from .loadable import MAX_LITERAL_CHARS, MAX_LITERAL_DEPTH
from .types import SHORT_DTYPE_NAMES


@dataclass(frozen=True)
class OperandRef:
    """`$k` in an index or attribute: the node's operand number k."""

    index: int

    def __repr__(self) -> str:
        return f"${self.index}"


class Index(tuple):
    """A subscript `[a, 1:, None, ...]` whose items may be `OperandRef`s."""


def is_literal(value: Any) -> bool:
    """True when `format_literal` can print `value` and `parse_literal` can read it back."""
    if value is None or value is Ellipsis or isinstance(value, (bool, int, float, complex, str, OperandRef)):
        return True
    if isinstance(value, np.generic):
        return value.dtype.name in SHORT_DTYPE_NAMES and value.dtype.kind != "c"
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        return np.dtype(value).name in SHORT_DTYPE_NAMES
    if isinstance(value, slice):
        return all(is_literal(p) for p in (value.start, value.stop, value.step))
    if isinstance(value, tuple):
        return all(is_literal(v) for v in value)
    return False


def format_literal(value: Any) -> str:
    if isinstance(value, Index):
        if not value:
            return "[()]"
        return "[" + ", ".join(_format_index_item(v) for v in value) + "]"
    if isinstance(value, np.generic):  # before float: np.float64 is a float subclass
        return f"np.{value.dtype.name}({format_literal(value.item())})"
    if value is Ellipsis:
        return "..."
    if isinstance(value, bool) or value is None or isinstance(value, (int, str, OperandRef)):
        return repr(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, complex):
        # `-2j` reads back as complex(-0.0, -2.0), `(-0-2j)` as complex(0.0, -2.0), `(nan+1j)` not at
        # all: where repr does not give back the same bits, spell both parts
        text = repr(value)
        return text if _same_complex(_complex_of(text), value) else \
            f"complex({format_literal(value.real)}, {format_literal(value.imag)})"
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        return f"np.{np.dtype(value).name}"
    if isinstance(value, slice):
        return f"slice({format_literal(value.start)}, {format_literal(value.stop)}, {format_literal(value.step)})"
    if isinstance(value, tuple):
        if len(value) == 1:
            return f"({format_literal(value[0])},)"
        return "(" + ", ".join(format_literal(v) for v in value) + ")"
    raise ValueError(f"not a literal: {value!r}")


def _complex_of(text: str) -> Optional[complex]:
    try:
        value = _eval(ast.parse(text, mode="eval").body)
    except (SyntaxError, ValueError):
        return None
    return complex(value) if isinstance(value, (int, float, complex)) else None


def _same_complex(a: Optional[complex], b: complex) -> bool:
    """The same bits: equal parts with the same signs of zero (NaN parts never read back here)."""
    return a is not None and all(x == y and math.copysign(1.0, x) == math.copysign(1.0, y)
                                 for x, y in ((a.real, b.real), (a.imag, b.imag)))


def _format_index_item(item: Any) -> str:
    if isinstance(item, slice):
        parts = ["" if p is None else format_literal(p) for p in (item.start, item.stop, item.step)]
        return f"{parts[0]}:{parts[1]}" + (f":{parts[2]}" if item.step is not None else "")
    return format_literal(item)


def parse_literal(text: str) -> Any:
    """Inverse of `format_literal`; raises ValueError on anything else (including a literal longer or
    deeper than `loadable.MAX_LITERAL_CHARS` / `MAX_LITERAL_DEPTH`, checked before Python's parser runs)."""
    text = _operand_refs_to_names(text.strip())
    _check_size(text)
    try:
        return _parse(text)
    except (RecursionError, MemoryError):
        raise ValueError(f"literal too deep or too big ({len(text)} characters)") from None


def _check_size(text: str) -> None:
    """Refuse a literal too long, with brackets nested too deep, or with a run of signs (`----1`)."""
    if len(text) > MAX_LITERAL_CHARS:
        raise ValueError(f"literal of {len(text)} characters (at most {MAX_LITERAL_CHARS})")
    depth, signs, quote, k, previous = 0, 0, None, 0, ""
    while k < len(text):
        ch = text[k]
        if quote:
            if ch == "\\":
                k += 1
            elif ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
            signs = 0
            if depth > MAX_LITERAL_DEPTH:
                raise ValueError(f"literal nested more than {MAX_LITERAL_DEPTH} deep")
        elif ch in ")]}":
            depth -= 1
            signs = 0
        elif ch in ",:":
            signs = 0
        elif ch in "+-" and previous not in ("e", "E"):
            signs += 1
            if signs > 3:
                raise ValueError("literal with too many signs in one number")
        if not ch.isspace():
            previous = ch
        k += 1


def _parse(text: str) -> Any:
    if text.startswith("["):
        try:
            tree = ast.parse("_" + text, mode="eval").body
        except SyntaxError as e:
            raise ValueError(f"bad index {text!r}") from e
        if not isinstance(tree, ast.Subscript):
            raise ValueError(f"bad index {text!r}")
        items = tree.slice.elts if isinstance(tree.slice, ast.Tuple) else [tree.slice]
        return Index(_eval(item, allow_slice=True) for item in items)
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError as e:
        raise ValueError(f"bad literal {text!r}") from e
    return _eval(tree)


def _operand_refs_to_names(text: str) -> str:
    """`$3` -> `_op_3` outside string literals (a `$` inside a string stays as it is)."""
    out, quote, k = [], None, 0
    while k < len(text):
        ch = text[k]
        if quote:
            if ch == "\\":
                out.append(text[k:k + 2])
                k += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "$":
            out.append("_op_")
            k += 1
            continue
        out.append(ch)
        k += 1
    return "".join(out)


def _eval(node: ast.AST, allow_slice: bool = False) -> Any:
    if isinstance(node, ast.Constant) and (node.value is None or node.value is Ellipsis
                                           or isinstance(node.value, (bool, int, float, complex, str))):
        return node.value
    if isinstance(node, ast.Tuple):
        return tuple(_eval(e) for e in node.elts)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _eval(node.operand)
        if isinstance(value, (int, float, complex)) and not isinstance(value, bool):
            return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        left, right = _eval(node.left), _eval(node.right)  # complex literals: 1+2j
        if isinstance(right, complex):
            return left + right if isinstance(node.op, ast.Add) else left - right
    if isinstance(node, ast.Name):
        if node.id.startswith("_op_") and node.id[4:].isdigit():
            return OperandRef(int(node.id[4:]))
        if node.id in ("inf", "nan"):
            return float(node.id)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "np":
        if node.attr in SHORT_DTYPE_NAMES:
            return np.dtype(node.attr).type
    if isinstance(node, ast.Call) and not node.keywords:
        func = node.func
        if isinstance(func, ast.Name) and func.id == "slice" and len(node.args) == 3:
            return slice(*(_eval(a) for a in node.args))
        if isinstance(func, ast.Name) and func.id == "complex" and len(node.args) == 2:
            parts = [_eval(a) for a in node.args]
            if all(isinstance(p, float) for p in parts):
                return complex(*parts)
        if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "np"
                and func.attr in SHORT_DTYPE_NAMES and len(node.args) == 1):
            return np.dtype(func.attr).type(_eval(node.args[0]))
    if allow_slice and isinstance(node, ast.Slice):
        return slice(*(None if p is None else _eval(p) for p in (node.lower, node.upper, node.step)))
    raise ValueError(f"not a literal: {ast.unparse(node)!r}")

