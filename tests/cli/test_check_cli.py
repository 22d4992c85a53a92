"""`graphjit check`: every problem in one run, four formats, exit statuses, no file executed."""

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from graphjit.cli import main

from locations import REPO as ROOT

SAMPLES = ROOT / "samples"
UNSUPPORTED = SAMPLES / "unsupported.py"


def check(*args):
    result = CliRunner().invoke(main, ["check", *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


def test_strict_lists_every_problem_at_once():
    code, out, _ = check(UNSUPPORTED, "--level", "strict", "--format", "gcc")
    assert code == 1
    lines = out.strip().splitlines()
    codes = [line.split("[")[1].split("]")[0] for line in lines]
    assert codes == ["GJ202", "GJ201", "GJ301", "GJ302", "GJ321"]
    assert lines[2].startswith(f"{UNSUPPORTED}:27:5: error: [GJ301]")


def test_levels_accept_more():
    assert check(UNSUPPORTED, "--level", "compatible", "--format", "gcc")[0] == 1
    code, out, _ = check(UNSUPPORTED, "--level", "lax", "--format", "gcc")
    assert code == 0 and ": warning: [GJ301]" in out


@pytest.mark.parametrize("name", ["network", "jit_function", "jit_transform", "jit_construct", "graph_mode"])
def test_samples_are_clean_at_strict(name):
    code, out, _ = check(SAMPLES / f"{name}.py", "--level", "strict")
    assert code == 0, out
    assert "no problems found" in out


def test_json_validates_against_documented_schema():
    jsonschema = pytest.importorskip("jsonschema")
    code, out, _ = check(UNSUPPORTED, "--level", "strict", "--format", "json")
    doc = json.loads(out)
    schema = json.loads((ROOT / "docs" / "diagnostics.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(doc)
    assert doc["summary"] == {"errors": 5, "warnings": 0}
    first = doc["diagnostics"][2]
    assert (first["code"], first["line"], first["column"], first["function"]) == ("GJ301", 27, 5, "normalize")


def test_sarif_has_what_code_scanning_needs():
    code, out, _ = check(UNSUPPORTED, "--level", "strict", "--format", "sarif")
    sarif = json.loads(out)
    assert sarif["version"] == "2.1.0" and "sarif" in sarif["$schema"]
    run = sarif["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "graphjit"
    rule_ids = [r["id"] for r in driver["rules"]]
    assert len(run["results"]) == 5
    for result in run["results"]:
        assert result["ruleId"] in rule_ids
        assert rule_ids[result["ruleIndex"]] == result["ruleId"]
        assert result["level"] == "error"
        assert result["message"]["text"]
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"].endswith("samples/unsupported.py")
        assert location["region"]["startLine"] >= 1 and location["region"]["startColumn"] >= 1


def test_text_is_plain_when_not_a_terminal():
    code, out, _ = check(UNSUPPORTED, "--level", "strict")
    assert "\033[" not in out
    assert "error[GJ301] (level: strict): `try` is not supported in a graph" in out
    assert "27 |     try:" in out and "5 errors" in out


def test_usage_and_input_errors_exit_2(tmp_path):
    assert check(tmp_path / "missing.py")[0] == 2
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n")
    assert check(bad)[0] == 1   # a Python syntax error is a problem found in the file, not an input error
    result = CliRunner().invoke(main, ["check", str(UNSUPPORTED), "--level", "bogus"])
    assert result.exit_code == 2


def test_check_does_not_run_the_file(tmp_path):
    marker = tmp_path / "ran"
    path = tmp_path / "m.py"
    path.write_text(f"import graphjit as ms\nopen({str(marker)!r}, 'w')\n@ms.jit\ndef f(x):\n    return x + 1\n")
    assert check(path, "--level", "strict")[0] == 0
    assert not marker.exists()


def test_pre_commit_hook_declared():
    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert "id: graphjit-check" in text and "entry: graphjit check" in text


def test_console_entry_point():
    proc = subprocess.run([sys.executable, "-m", "graphjit", "check", str(UNSUPPORTED), "--level", "strict",
                           "--format", "gcc"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
