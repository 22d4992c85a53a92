"""What the docs generators (docs/gen_ops.py, docs/gen_syntax.py) share: table cells and the
`--check` / write command line."""

from __future__ import annotations

import argparse
import pathlib
import sys
from typing import Callable


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell (a `|` would end the cell, even inside code)."""
    return text.replace("|", "\\|").replace("\n", " ")


def main(output: pathlib.Path, render: Callable[[], str], script: str, description: str, argv=None) -> int:
    """Write `render()` to `output`, or with `--check` exit 1 when `output` differs from it."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true", help=f"exit 1 if {output.name} differs from render()")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = output.read_text() if output.exists() else None
        if current != text:
            print(f"{output} is out of date; run `python docs/{script}`", file=sys.stderr)
            return 1
        print(f"{output} is up to date")
        return 0
    output.write_text(text)
    print(f"wrote {output}")
    return 0
