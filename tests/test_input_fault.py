"""A fault of the grader's input (a missing submission): exit 2 and the one-line error on stderr,
and the format asked for still tells the learner what to fix (CI and Gradescope show the format's
output, not the grader's stderr). A submission that is not UTF-8 text is the submission's own
fault: a report (exit 1) whose hint says the same. In process, through cli.main."""
from __future__ import annotations

import base64
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from grader import cli
from grader.reports import gradescope

GS_SCHEMA = json.loads(gradescope.SCHEMA.read_text())


@pytest.fixture
def files(tmp_path):
    latin = tmp_path / "solution.py"
    latin.write_bytes(b'x = "\xe9t\xe9"\n')
    return {"missing": (str(tmp_path / "nothere.py"), "does not exist", "submit (commit and push)", 2),
            "latin1": (str(latin), "not UTF-8", "save the file as UTF-8", 1)}


@pytest.mark.parametrize("which", ["missing", "latin1"])
def test_every_format_says_what_to_fix(tmp_path, files, which, capsys, monkeypatch):
    path, why, fix, code = files[which]
    summary, output = tmp_path / "summary.md", tmp_path / "output"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    texts = {}
    for fmt in ("json", "junit", "gradescope", "github"):
        assert cli.main(["check", path, "--problem", "tied_lm_head", "--format", fmt]) == code
        out, err = capsys.readouterr()
        if code == 2:  # the grader's input: the one-line error too
            assert err.startswith("grader: error: ") and why in err and err.count("\n") == 1
        else:
            assert "error" not in err
        texts[fmt] = out
        assert why in out and fix in out, fmt
    data = json.loads(texts["json"])
    assert data["failure"]["kind"] == "import" and data["passed"] is False and data["max_score"] > 0
    results = json.loads(texts["gradescope"])
    jsonschema.validate(results, GS_SCHEMA)
    assert results["score"] == 0 and "told" not in texts["gradescope"]
    assert sum(t["max_score"] for t in results["tests"]) == pytest.approx(data["max_score"])
    tc = ET.fromstring(texts["junit"]).find("testcase")
    assert tc.find("error") is not None and tc.get("file") == path and tc.get("line") == "1"
    assert texts["github"].startswith("::error file=") and fix in summary.read_text()
    key, _, value = output.read_text().splitlines()[-1].partition("=")
    result = json.loads(base64.b64decode(value))
    assert key == "result" and result["status"] == "error" and fix in result["tests"][0]["test_code"]


def test_text_format_is_the_error_line(files, capsys):
    path, why, _, _ = files["missing"]
    assert cli.main(["check", path, "--problem", "tied_lm_head"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and why in err


def test_without_a_problem_the_report_is_still_written(files, capsys, monkeypatch):
    _, why, fix, _ = files["latin1"]
    path = str(Path(files["latin1"][0]).with_name("latin_solution.py"))
    Path(path).write_bytes(b'# caf\xe9\ndef tied_lm_head(hidden, embedding_matrix):\n    return hidden @ embedding_matrix.T\n')
    monkeypatch.delenv("GITHUB_OUTPUT", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert cli.main(["check", path, "--format", "gradescope"]) == 1  # its problem told by a scan
    out, _ = capsys.readouterr()
    results = json.loads(out)
    jsonschema.validate(results, GS_SCHEMA)
    assert fix in results["tests"][0]["output"]
