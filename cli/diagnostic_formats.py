"""Rendering diagnostics for the CLI in four formats: text, JSON, SARIF 2.1.0 and gcc-style lines.

`graphjit check --format text|json|sarif|gcc` hands its list of `graph.diagnostics.Diagnostic`
objects to `render`; nothing here finds problems or decides exit statuses, it only formats them.

- text: each diagnostic's `render(color)` (header, location, source excerpt with carets, hint),
  separated by blank lines, then a summary line (`2 errors, 1 warning`).
- json: a stable, versioned document described by docs/diagnostics.schema.json.
- sarif: SARIF 2.1.0 as GitHub code scanning (`github/codeql-action/upload-sarif`) accepts it.
- gcc: `file:line:col: severity: [code] message`, one a line, for editors and grep.

docs/diagnostics.md documents every format. No output ends with a newline: the caller adds one.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path, PurePath
from typing import Optional
from urllib.parse import quote

FORMATS = ("text", "json", "sarif", "gcc")

JSON_SCHEMA_VERSION = 1
SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL_NAME = "graphjit"

# Codes that do not come from the rule table (transpiler.rules): what `Diagnostic.from_error`
# gives a front-end error that has no rule row.
_SYNTHETIC_RULES = {
    "GJ000": ("UnsupportedConstruct", "graphjit cannot compile this code",
              "graphjit met code it cannot compile into a graph."),
    "GJ001": ("LoweringError", "the front end could not lower this code into graph nodes",
              "a construct graphjit supports could not be turned into graph nodes "
              "(an unknown name, a type it cannot infer, ...)."),
}


def render(diagnostics: list, fmt: str, *, color: bool = False, tool_version: str = "") -> str:
    """The diagnostics in `fmt` (one of FORMATS); `color` is used by the text format only."""
    diags = list(diagnostics)
    if fmt == "text":
        return to_text(diags, color)
    if fmt == "json":
        return to_json(diags)
    if fmt == "sarif":
        return to_sarif(diags, tool_version)
    if fmt == "gcc":
        return to_gcc(diags)
    raise ValueError(f"unknown diagnostic format {fmt!r}: expected one of {', '.join(FORMATS)}")


def use_color(stream) -> bool:
    """Whether to color output to `stream`: a terminal, NO_COLOR unset or empty, TERM not `dumb`.

    https://no-color.org: any non-empty NO_COLOR disables color.
    """
    if os.environ.get("NO_COLOR", ""):
        return False
    if os.environ.get("TERM", "") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    if isatty is None:
        return False
    try:
        return bool(isatty())
    except (ValueError, OSError):      # a closed or detached stream
        return False


# --- text and gcc -----------------------------------------------------------------------------

def summary_line(diags: list) -> str:
    """`2 errors, 1 warning`, or `no problems found`."""
    errors, warnings = _counts(diags)
    others = len(diags) - errors - warnings
    parts = []
    for count, word in ((errors, "error"), (warnings, "warning"), (others, "note")):
        if count:
            parts.append(f"{count} {word}{'s' if count != 1 else ''}")
    return ", ".join(parts) if parts else "no problems found"


def to_text(diags: list, color: bool = False) -> str:
    """Each diagnostic's text form, a blank line between them, then the summary line."""
    blocks = [d.render(color) for d in diags]
    summary = summary_line(diags)
    if color:
        errors, _ = _counts(diags)
        tint = "\033[31m" if errors else ("\033[33m" if diags else "\033[32m")
        summary = f"\033[1m{tint}{summary}\033[0m"
    blocks.append(summary)
    return "\n\n".join(blocks)


def to_gcc(diags: list) -> str:
    """`file:line:col: severity: [code] message`, one diagnostic a line."""
    return "\n".join(d.gcc() for d in diags)


# --- JSON -------------------------------------------------------------------------------------

def to_json(diags: list) -> str:
    """The documented JSON document (docs/diagnostics.schema.json), keys in a fixed order."""
    errors, warnings = _counts(diags)
    doc = {
        "version": JSON_SCHEMA_VERSION,
        "tool": TOOL_NAME,
        "diagnostics": [_json_diagnostic(d) for d in diags],
        "summary": {"errors": errors, "warnings": warnings},
    }
    return json.dumps(doc, indent=2, ensure_ascii=False)


def _json_diagnostic(d) -> dict:
    span = d.span
    rule = _table_rule(d.code)
    end_line, end_col = _end(span)
    return {
        "code": d.code,
        "severity": d.severity,
        "message": d.message,
        "file": span.file if span is not None else None,
        "line": max(1, span.line) if span is not None else None,
        "column": max(1, span.col) if span is not None else None,
        "end_line": end_line,
        "end_column": end_col,
        "function": d.function or None,
        "hint": d.hint or None,
        "level": d.level.lower() if d.level else None,
        "rule": None if rule is None else {
            "construct": rule.construct,
            "category": rule.category,
            "lowest_level": rule.level.lower(),
        },
    }


def _end(span) -> tuple:
    """(end_line, end_column) when the span has a usable end after its start, else (None, None)."""
    if span is None or not span.end_line or not span.end_col:
        return None, None
    line, col = max(1, span.line), max(1, span.col)
    if span.end_line < line or (span.end_line == line and span.end_col < col):
        return None, None
    return span.end_line, span.end_col


# --- SARIF ------------------------------------------------------------------------------------

def to_sarif(diags: list, tool_version: str = "", *, root: Optional[str] = None) -> str:
    """A SARIF 2.1.0 log with one run, as GitHub code scanning accepts it.

    Locations are relative to `root` (default: the current directory) with `uriBaseId`
    `%SRCROOT%`, so run `graphjit check` from the repository root. GitHub rejects a whole file if
    any result lacks a location, so a diagnostic without a source span is reported as a tool
    execution notification of the run's invocation instead of a result.
    """
    root = os.path.abspath(root if root is not None else os.getcwd())
    located = [d for d in diags if d.span is not None]
    unlocated = [d for d in diags if d.span is None]

    codes = sorted({d.code for d in diags})
    index = {code: k for k, code in enumerate(codes)}
    rules = [_sarif_rule(code, [d for d in diags if d.code == code]) for code in codes]

    driver = {"name": TOOL_NAME}
    version = tool_version or _package_version()
    if version:
        driver["version"] = version
    info = _information_uri()
    if info:
        driver["informationUri"] = info
    driver["rules"] = rules

    run = {
        "tool": {"driver": driver},
        "invocations": [{
            "executionSuccessful": True,
            "toolExecutionNotifications": [_sarif_notification(d, index[d.code]) for d in unlocated],
        }],
        "columnKind": "unicodeCodePoints",   # LibCST columns count code points, not UTF-16 units
        "results": [_sarif_result(d, index[d.code], root) for d in located],
    }
    log = {"version": SARIF_VERSION, "$schema": SARIF_SCHEMA, "runs": [run]}
    return json.dumps(log, indent=2, ensure_ascii=False)


def sarif_level(severity: str) -> str:
    return severity if severity in ("error", "warning") else "note"


def _sarif_result(d, rule_index: int, root: str) -> dict:
    result = {
        "ruleId": d.code,
        "ruleIndex": rule_index,
        "level": sarif_level(d.severity),
        "message": {"text": d.message},
        "locations": [_sarif_location(d, root)],
    }
    properties = _sarif_properties(d)
    if properties:
        result["properties"] = properties
    return result


def _sarif_properties(d) -> dict:
    """What SARIF has no field for: the enclosing function, the hint, the level checked at."""
    out = {}
    if d.function:
        out["function"] = d.function
    if d.hint:
        out["hint"] = d.hint
    if d.level:
        out["level"] = d.level.lower()
    return out


def _sarif_location(d, root: str) -> dict:
    span = d.span
    artifact = _artifact_location(span.file, root)
    region = {"startLine": max(1, span.line), "startColumn": max(1, span.col)}
    end_line, end_col = _end(span)
    if end_line is not None:
        region["endLine"] = end_line
        region["endColumn"] = end_col
    location = {"physicalLocation": {"artifactLocation": artifact, "region": region}}
    if d.function:
        location["logicalLocations"] = [{"name": d.function.rsplit(".", 1)[-1],
                                         "fullyQualifiedName": d.function, "kind": "function"}]
    return location


def _artifact_location(file: str, root: str) -> dict:
    """`{"uri": "pkg/model.py", "uriBaseId": "%SRCROOT%"}`, or an absolute file URI outside root."""
    path = os.path.abspath(file)
    try:
        rel = os.path.relpath(path, root)
    except ValueError:                 # another drive on Windows
        rel = None
    if rel is not None and rel != os.pardir and not rel.startswith(os.pardir + os.sep):
        return {"uri": quote(PurePath(rel).as_posix(), safe="/"), "uriBaseId": "%SRCROOT%"}
    return {"uri": Path(path).as_uri()}


def _sarif_notification(d, rule_index: int) -> dict:
    notification = {
        "level": sarif_level(d.severity),
        "message": {"text": d.message},
        "associatedRule": {"id": d.code, "index": rule_index},
    }
    properties = _sarif_properties(d)
    if properties:
        notification["properties"] = properties
    return notification


def _sarif_rule(code: str, diags: list) -> dict:
    rule = _table_rule(code)
    if rule is not None:
        name = _pascal(rule.key)
        short = rule.message
        full = (f"{_sentence(rule.message)} Construct: {rule.construct} "
                f"({rule.category}); the lowest syntax level that compiles it is {rule.level.lower()}.")
        help_text = rule.hint
        tags = [TOOL_NAME, rule.category, f"level-{rule.level.lower()}"]
    elif code in _SYNTHETIC_RULES:
        name, short, full = _SYNTHETIC_RULES[code]
        help_text = ""
        tags = [TOOL_NAME]
    else:
        name, short, full, help_text, tags = code, f"graphjit diagnostic {code}", \
            f"graphjit diagnostic {code}.", "", [TOOL_NAME]
    if not help_text:
        hints = sorted({d.hint for d in diags if d.hint})
        help_text = hints[0] if len(hints) == 1 else full
    levels = {sarif_level(d.severity) for d in diags}
    default = next((lv for lv in ("error", "warning", "note") if lv in levels), "error")
    return {
        "id": code,
        "name": name,
        "shortDescription": {"text": short},
        "fullDescription": {"text": full},
        "help": {"text": help_text},
        "defaultConfiguration": {"level": default},
        "properties": {"tags": tags},
    }


# --- helpers ----------------------------------------------------------------------------------

def _counts(diags: list) -> tuple:
    errors = sum(1 for d in diags if d.severity == "error")
    warnings = sum(1 for d in diags if d.severity == "warning")
    return errors, warnings


def _table_rule(code: str):
    from ..transpiler.rules import BY_CODE
    return BY_CODE.get(code)


def _pascal(key: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[_\W]+", key) if part)


def _sentence(text: str) -> str:
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def _package_version() -> str:
    try:
        from importlib.metadata import version
        return version(TOOL_NAME)
    except Exception:                  # not installed (running from a source tree)
        return ""


def _information_uri() -> str:
    """The project's home page from the installed package's metadata, if it declares one."""
    try:
        from importlib.metadata import metadata
        meta = metadata(TOOL_NAME)
    except Exception:
        return ""
    urls = [meta.get("Home-page") or ""]
    urls += [entry.split(",", 1)[-1].strip() for entry in (meta.get_all("Project-URL") or [])]
    return next((u for u in urls if u.startswith(("https://", "http://"))), "")
