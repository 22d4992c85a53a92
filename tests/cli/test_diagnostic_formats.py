"""The four `graphjit check` output formats (cli/diagnostic_formats.py): text, JSON against its schema,
SARIF field by field as GitHub code scanning reads it, gcc lines; color rules; the pre-commit hook
file; and the examples in docs/diagnostics.md, which must be what the code prints."""

import io
import json
import linecache
import re

import pytest

from graphjit.cli.diagnostic_formats import FORMATS, render, to_gcc, to_json, to_sarif, to_text, use_color
from graphjit.graph.diagnostics import Diagnostic
from graphjit.graph.spans import SourceSpan
from graphjit.transpiler.rules import BY_CODE

from locations import REPO as ROOT

DOCS = ROOT / "docs"
SCHEMA = json.loads((DOCS / "diagnostics.schema.json").read_text())

SOURCE = '''import numpy as np


def step(x, w):
    y = x @ w
    del w
    return {"y": y}
'''


def _from_rule(code, file, line, col, end_line, end_col, severity="error", level="STRICT"):
    rule = BY_CODE[code]
    return Diagnostic(code, severity, rule.message, SourceSpan(file, line, col, end_line, end_col),
                      "step", rule.hint, level)


@pytest.fixture
def model(tmp_path, monkeypatch):
    """A source file `pkg/model.py` under a temporary directory, which is made the current one."""
    (tmp_path / "pkg").mkdir()
    path = tmp_path / "pkg" / "model.py"
    path.write_text(SOURCE)
    monkeypatch.chdir(tmp_path)
    linecache.clearcache()
    yield path
    linecache.clearcache()


@pytest.fixture
def diags(model):
    """Two errors with spans, one warning without a location (a lowering error, GJ001)."""
    file = str(model)
    return [
        _from_rule("GJ303", file, 6, 5, 6, 10),
        _from_rule("GJ251", file, 7, 12, 7, 20),
        Diagnostic("GJ001", "warning", "cannot infer the type of `z`", None, "step", "", "COMPATIBLE"),
    ]


# --- text -------------------------------------------------------------------------------------

def test_text_is_every_block_then_a_summary(diags):
    out = to_text(diags, color=False)
    assert "\033[" not in out
    blocks = out.split("\n\n")
    assert blocks[:3] == [d.render(False) for d in diags]
    assert blocks[3] == "2 errors, 1 warning"
    assert "6 |     del w" in out and "  |     ^^^^^" in out     # the excerpt from the temp file
    assert not out.endswith("\n")


def test_text_colored_has_ansi_codes(diags):
    out = to_text(diags, color=True)
    assert "\033[31m" in out and "\033[0m" in out
    assert re.sub(r"\033\[[0-9;]*m", "", out) == to_text(diags, color=False)


@pytest.mark.parametrize("severities, summary", [
    ((), "no problems found"),
    (("error",), "1 error"),
    (("warning",), "1 warning"),
    (("warning", "warning"), "2 warnings"),
    (("error", "error", "warning"), "2 errors, 1 warning"),
])
def test_text_summary(severities, summary):
    ds = [Diagnostic("GJ000", s, "m", None) for s in severities]
    assert to_text(ds).split("\n\n")[-1] == summary


class FakeStream(io.StringIO):
    def __init__(self, tty):
        super().__init__()
        self.tty = tty

    def isatty(self):
        return self.tty


@pytest.mark.parametrize("tty, env, expected", [
    (True, {}, True),
    (False, {}, False),
    (True, {"NO_COLOR": "1"}, False),
    (True, {"NO_COLOR": "0"}, False),            # any non-empty value disables color
    (True, {"NO_COLOR": ""}, True),              # empty means unset
    (True, {"TERM": "dumb"}, False),
    (False, {"NO_COLOR": ""}, False),
])
def test_use_color(monkeypatch, tty, env, expected):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert use_color(FakeStream(tty)) is expected


def test_use_color_without_isatty_or_closed(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("TERM", raising=False)
    assert use_color(object()) is False
    closed = io.StringIO()
    closed.close()
    assert use_color(closed) is False


# --- JSON -------------------------------------------------------------------------------------

DIAGNOSTIC_KEYS = ["code", "severity", "message", "file", "line", "column", "end_line", "end_column",
                   "function", "hint", "level", "rule"]


def test_json_fields(diags, model):
    text = to_json(diags)
    doc = json.loads(text)
    assert list(doc) == ["version", "tool", "diagnostics", "summary"]
    assert doc["version"] == 1 and doc["tool"] == "graphjit"
    assert doc["summary"] == {"errors": 2, "warnings": 1}
    first, _, unlocated = doc["diagnostics"]
    assert list(first) == DIAGNOSTIC_KEYS
    assert first == {
        "code": "GJ303", "severity": "error", "message": BY_CODE["GJ303"].message,
        "file": str(model), "line": 6, "column": 5, "end_line": 6, "end_column": 10,
        "function": "step", "hint": BY_CODE["GJ303"].hint, "level": "strict",
        "rule": {"construct": "`del`", "category": "statement", "lowest_level": "lax"},
    }
    assert list(first["rule"]) == ["construct", "category", "lowest_level"]
    assert unlocated["file"] is None and unlocated["line"] is None and unlocated["end_column"] is None
    assert unlocated["rule"] is None and unlocated["hint"] is None and unlocated["level"] == "compatible"
    assert text.split("\n")[1].startswith('  "version"')        # indent=2
    assert to_json(list(diags)) == text                        # deterministic


def test_json_empty():
    assert json.loads(to_json([])) == {"version": 1, "tool": "graphjit", "diagnostics": [],
                                       "summary": {"errors": 0, "warnings": 0}}


def test_json_unknown_end_is_null():
    d = Diagnostic("GJ000", "error", "m", SourceSpan("f.py", 3, 2))
    entry = json.loads(to_json([d]))["diagnostics"][0]
    assert (entry["line"], entry["column"], entry["end_line"], entry["end_column"]) == (3, 2, None, None)


def test_json_validates_against_the_schema(diags):
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator
    validator.check_schema(SCHEMA)
    for ds in (diags, [], [Diagnostic("GJ000", "error", "m", SourceSpan("f.py", 0, 0))]):
        jsonschema.validate(json.loads(to_json(ds)), SCHEMA, cls=validator)


@pytest.mark.parametrize("corrupt", [
    lambda doc: doc["diagnostics"][0].update(line=0),
    lambda doc: doc["diagnostics"][0].pop("hint"),
    lambda doc: doc["diagnostics"][0].update(severity="fatal"),
    lambda doc: doc["diagnostics"][0].update(code="E1"),
    lambda doc: doc["diagnostics"][0].update(level="STRICT"),
    lambda doc: doc["diagnostics"][0]["rule"].update(extra=1),
    lambda doc: doc.update(version=2),
    lambda doc: doc["summary"].pop("warnings"),
])
def test_schema_rejects_other_documents(diags, corrupt):
    jsonschema = pytest.importorskip("jsonschema")
    doc = json.loads(to_json(diags))
    corrupt(doc)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, SCHEMA, cls=jsonschema.Draft202012Validator)


def test_schema_categories_and_levels_match_the_rule_table():
    from graphjit.transpiler.rules import LEVELS, RULES
    rule_schema = SCHEMA["$defs"]["diagnostic"]["properties"]["rule"]["oneOf"][0]
    assert {r.category for r in RULES} <= set(rule_schema["properties"]["category"]["enum"])
    assert SCHEMA["$defs"]["level"]["enum"] == [level.lower() for level in LEVELS]
    assert SCHEMA["$defs"]["diagnostic"]["required"] == DIAGNOSTIC_KEYS


# --- SARIF ------------------------------------------------------------------------------------

def _sarif(diags, **kwargs):
    return json.loads(to_sarif(diags, "9.9.9", **kwargs))


def test_sarif_log(diags):
    log = _sarif(diags)
    assert log["version"] == "2.1.0"
    assert log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert len(log["runs"]) == 1
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["name"] == "graphjit"
    assert driver["version"] == "9.9.9"
    if "informationUri" in driver:
        assert driver["informationUri"].startswith(("https://", "http://"))


def test_sarif_rules_cover_the_results(diags):
    run = _sarif(diags)["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert len(ids) == len(set(ids))
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
    assert {r["ruleId"] for r in run["results"]} <= set(ids)
    for rule in rules:
        assert rule["name"] and rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert rule["help"]["text"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
    by_id = {r["id"]: r for r in rules}
    assert by_id["GJ303"]["shortDescription"]["text"] == BY_CODE["GJ303"].message
    assert by_id["GJ303"]["help"]["text"] == BY_CODE["GJ303"].hint
    assert by_id["GJ303"]["defaultConfiguration"]["level"] == "error"
    assert by_id["GJ001"]["defaultConfiguration"]["level"] == "warning"     # synthesized


def test_sarif_results(diags):
    run = _sarif(diags)["runs"][0]
    results = run["results"]
    assert [r["ruleId"] for r in results] == ["GJ303", "GJ251"]      # GJ001 has no location
    first = results[0]
    assert first["level"] == "error"
    assert first["message"]["text"] == BY_CODE["GJ303"].message
    assert len(first["locations"]) == 1
    physical = first["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"] == {"uri": "pkg/model.py", "uriBaseId": "%SRCROOT%"}
    assert physical["region"] == {"startLine": 6, "startColumn": 5, "endLine": 6, "endColumn": 10}
    assert first["properties"] == {"function": "step", "hint": BY_CODE["GJ303"].hint, "level": "strict"}
    assert run["columnKind"] == "unicodeCodePoints"


def test_sarif_every_result_has_a_location_github_accepts(diags):
    """GitHub rejects the whole upload if one result has no location or a startLine below 1."""
    zero = Diagnostic("GJ000", "warning", "m", SourceSpan("pkg/model.py", 0, 0, 0, 0))
    run = _sarif(diags + [zero])["runs"][0]
    for result in run["results"]:
        assert result["level"] in ("error", "warning")
        (location,) = result["locations"]
        artifact = location["physicalLocation"]["artifactLocation"]
        assert artifact["uri"] and "\\" not in artifact["uri"]
        region = location["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        if "endLine" in region:
            assert (region["endLine"], region["endColumn"]) >= (region["startLine"], region["startColumn"])
    assert run["results"][-1]["locations"][0]["physicalLocation"]["region"] == {"startLine": 1, "startColumn": 1}


def test_sarif_diagnostic_without_location_is_a_notification(diags):
    run = _sarif(diags)["runs"][0]
    (invocation,) = run["invocations"]
    assert invocation["executionSuccessful"] is True
    (note,) = invocation["toolExecutionNotifications"]
    rules = run["tool"]["driver"]["rules"]
    assert note["level"] == "warning" and note["message"]["text"] == "cannot infer the type of `z`"
    assert rules[note["associatedRule"]["index"]]["id"] == note["associatedRule"]["id"] == "GJ001"


def test_sarif_uris(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    inside = Diagnostic("GJ303", "error", "m", SourceSpan(str(tmp_path / "a dir" / "m.py"), 1, 1))
    relative = Diagnostic("GJ303", "error", "m", SourceSpan("sub/m.py", 1, 1))
    outside = Diagnostic("GJ303", "error", "m", SourceSpan(str(tmp_path.parent / "elsewhere.py"), 1, 1))
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]
            for r in _sarif([inside, relative, outside])["runs"][0]["results"]]
    assert uris[0] == {"uri": "a%20dir/m.py", "uriBaseId": "%SRCROOT%"}
    assert uris[1] == {"uri": "sub/m.py", "uriBaseId": "%SRCROOT%"}
    assert uris[2] == {"uri": (tmp_path.parent / "elsewhere.py").as_uri()}
    # an explicit root instead of the current directory
    uri = _sarif([inside], root=str(tmp_path / "a dir"))["runs"][0]["results"][0]["locations"][0]
    assert uri["physicalLocation"]["artifactLocation"]["uri"] == "m.py"


def test_sarif_synthesizes_rules_outside_the_table():
    ds = [Diagnostic("GJ000", "error", "m", SourceSpan("f.py", 1, 1)),
          Diagnostic("GJ999", "error", "m", SourceSpan("f.py", 2, 1))]
    rules = _sarif(ds)["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["GJ000", "GJ999"]
    for rule in rules:
        assert rule["name"] and rule["help"]["text"] and rule["shortDescription"]["text"]


def test_sarif_empty_run():
    run = _sarif([])["runs"][0]
    assert run["results"] == [] and run["tool"]["driver"]["rules"] == []


# --- gcc --------------------------------------------------------------------------------------

GCC_LINE = re.compile(r"^(?P<file>.+):(?P<line>\d+):(?P<col>\d+): (?P<severity>error|warning): "
                      r"\[(?P<code>GJ\d{3})\] (?P<message>.+)$")


def test_gcc_lines(diags, model):
    lines = to_gcc(diags[:2]).split("\n")
    assert len(lines) == 2
    first = GCC_LINE.match(lines[0])
    assert first and first.group("file") == str(model)
    assert (first.group("line"), first.group("col"), first.group("severity"), first.group("code")) == \
        ("6", "5", "error", "GJ303")
    assert first.group("message") == BY_CODE["GJ303"].message
    assert GCC_LINE.match(lines[1]).group("code") == "GJ251"
    assert to_gcc([]) == ""
    assert to_gcc(diags[2:]) == "<unknown>: warning: [GJ001] cannot infer the type of `z`"


# --- dispatch ---------------------------------------------------------------------------------

def test_render_dispatches(diags):
    assert FORMATS == ("text", "json", "sarif", "gcc")
    assert render(diags, "text") == to_text(diags)
    assert render(diags, "text", color=True) == to_text(diags, True)
    assert render(diags, "json") == to_json(diags)
    assert render(diags, "sarif", tool_version="1.2.3") == to_sarif(diags, "1.2.3")
    assert render(diags, "gcc") == to_gcc(diags)
    for fmt in ("json", "sarif", "gcc"):
        assert "\033[" not in render(diags, fmt, color=True)
    with pytest.raises(ValueError, match="unknown diagnostic format"):
        render(diags, "xml")


# --- pre-commit hook --------------------------------------------------------------------------

def test_pre_commit_hook():
    yaml = pytest.importorskip("yaml")
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    (hook,) = [h for h in hooks if h["id"] == "graphjit-check"]
    assert hook["name"] == "graphjit check"
    assert hook["entry"] == "graphjit check"
    assert hook["language"] == "python"
    assert hook["types"] == ["python"]
    assert hook["args"] == []
    assert hook["require_serial"] is False


# --- docs/diagnostics.md shows real output ----------------------------------------------------

def _fences(kind):
    return re.findall(rf"```{kind}\n(.*?)\n```", (DOCS / "diagnostics.md").read_text(), re.S)


def test_docs_examples_are_real_output(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    python = _fences("python")[0] + "\n"
    assert python == SOURCE
    (tmp_path / "model.py").write_text(python)
    linecache.clearcache()
    ds = [_from_rule("GJ303", "model.py", 6, 5, 6, 10), _from_rule("GJ251", "model.py", 7, 12, 7, 20)]
    texts = _fences("text")
    assert to_text(ds) in texts
    assert to_gcc(ds) in texts
    documented = json.loads(_fences("json")[0])
    assert documented == json.loads(to_json(ds[:1]))
    documented_result = json.loads(_fences("json")[1])
    assert documented_result == {k: v for k, v in _sarif(ds)["runs"][0]["results"][0].items()
                                 if k != "properties"} | {"locations": [
        {"physicalLocation": _sarif(ds)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]}]}
    linecache.clearcache()
