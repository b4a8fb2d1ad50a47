"""The templates in templates/ run as written: Gradescope's run_autograder with a temporary
AUTOGRADER_ROOT (results.json checked against the Gradescope JSON Schema), and the GitHub Classroom
workflow's Grade command with GITHUB_STEP_SUMMARY and GITHUB_OUTPUT in temporary files (the
Classroom result checked against its schema). These are also the end-to-end tests of
``grader check --format gradescope`` and ``--format github`` through the CLI; ``--format junit``
is checked end to end in tests/test_batch.py (a batch's junit.xml) and below.
"""
from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
import yaml

from .conftest import ROOT, SUBMISSIONS, run_grader

GRADESCOPE = ROOT / "templates" / "gradescope"
WORKFLOW = ROOT / "templates" / "github-classroom" / ".github" / "workflows" / "autograding.yml"
GS_SCHEMA = json.loads((ROOT / "grader" / "schemas" / "gradescope_results.schema.json").read_text())
CLASSROOM_SCHEMA = json.loads((ROOT / "grader" / "schemas" / "github_classroom.schema.json").read_text())
CORRECT = (SUBMISSIONS / "correct_numpy.py").read_text()
WRONG = (SUBMISSIONS / "wrong_tolerance_softmax.py").read_text()
GRADER = f"{sys.executable} -m grader"  # the grader under test, whatever is first on PATH
FAST = "--max-examples 4 --no-shrink"


def run_autograder(root: Path, files: dict[str, str], **env: str) -> dict:
    (root / "submission").mkdir(parents=True)
    for name, text in files.items():
        (root / "submission" / name).write_text(text)
    result = subprocess.run(["bash", str(GRADESCOPE / "run_autograder")], capture_output=True, text=True,
                            timeout=120, env={**os.environ, "AUTOGRADER_ROOT": str(root), "GRADER_BIN": GRADER,
                                              "GRADER_ARGS": FAST, **env})
    assert result.returncode == 0, result.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(results, GS_SCHEMA)
    assert {p.name for p in (root / "submission").iterdir()} == set(files)  # left as submitted
    return results


def test_gradescope_run_autograder_grades_the_submission(tmp_path):
    results = run_autograder(tmp_path, {"my_answer.py": WRONG})
    assert 0 <= results["score"] < 10
    assert results["score"] == pytest.approx(sum(t["score"] for t in results["tests"]))
    assert sum(t["max_score"] for t in results["tests"]) == 10
    assert any(t["status"] == "failed" for t in results["tests"])
    assert (tmp_path / "work" / "my_answer.py").read_text() == WRONG


def test_gradescope_run_autograder_full_marks(tmp_path):
    results = run_autograder(tmp_path, {"solution.py": CORRECT})
    assert results["score"] == 10 and all(t["status"] == "passed" for t in results["tests"])


@pytest.mark.parametrize("files,env,message", [
    ({}, {}, "No .py file was submitted"),
    ({"a.py": CORRECT, "b.py": CORRECT}, {}, "Several .py files were submitted: a.py b.py."),
    ({"a.py": CORRECT}, {"GRADER_SUBMISSION_FILE": "solution.py"}, "The file solution.py was not submitted"),
    ({"a.py": CORRECT}, {"GRADER_PROBLEM": "no_such_problem"},
     "could not grade this submission (exit 2): grader: error: unknown problem 'no_such_problem'"),
])
def test_gradescope_run_autograder_explains_what_it_cannot_grade(tmp_path, files, env, message):
    results = run_autograder(tmp_path, files, **env)
    assert results["score"] == 0 and results["tests"] == [] and message in results["output"]


def test_gradescope_setup_script_is_valid_bash():
    for name in ("setup.sh", "run_autograder"):
        path = GRADESCOPE / name
        assert os.access(path, os.X_OK), f"{name} must be executable"
        subprocess.run(["bash", "-n", str(path)], check=True)


def test_classroom_workflow_names_fit_the_reporter():
    flow = yaml.safe_load(WORKFLOW.read_text())
    assert flow["name"] == "Autograding Tests" and list(flow["jobs"]) == ["run-autograding-tests"]
    steps = flow["jobs"]["run-autograding-tests"]["steps"]
    grade = next(s for s in steps if "grader check" in s.get("run", ""))
    reporter = next(s for s in steps
                    if s.get("uses", "").startswith("classroom-resources/autograding-grading-reporter@"))
    assert grade["continue-on-error"] is True and steps.index(grade) < steps.index(reporter)
    assert reporter["with"]["runners"] == grade["id"]
    assert reporter["env"] == {f"{grade['id'].upper()}_RESULTS": f"${{{{ steps.{grade['id']}.outputs.result }}}}"}
    install = next(s for s in steps if "pip install" in s.get("run", ""))
    assert "$GRADER_PIP_SPEC" in install["run"] and flow["env"]["GRADER_PIP_SPEC"]
    # the working directory is the learner's repository: every Python runs isolated (issue 9, class 1)
    runs = [s["run"] for s in steps if "python" in s.get("run", "")]
    assert runs and all(run.startswith("python -I ") for run in runs), runs


@pytest.mark.parametrize("source,code,status", [(CORRECT, 0, "pass"), (WRONG, 1, "fail")], ids=["correct", "wrong"])
def test_classroom_workflow_grade_step_runs_locally(tmp_path, source, code, status):
    flow = yaml.safe_load(WORKFLOW.read_text())
    steps = flow["jobs"]["run-autograding-tests"]["steps"]
    command = next(s["run"] for s in steps if "grader check" in s.get("run", ""))
    assert command.startswith("python -I -m grader check solution.py ")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "solution.py").write_text(source)
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    # as the runner would: the step's command in bash, with the Python under test as `python`
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
    (bin_dir / "python").chmod(0o755)
    env = {**os.environ, **flow.get("env", {}), "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(output),
           "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "GITHUB_ACTIONS": "true"}
    result = subprocess.run(["bash", "-e", "-c", f"{command} {FAST}"], cwd=repo, env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == code, result.stderr
    lines = result.stdout.splitlines()
    assert re.match(r"::notice file=solution\.py,line=[1-9][0-9]*,title=tied_lm_head%3A ", lines[-1]), lines[-1]
    assert all(line.startswith(("::error ", "::notice ")) for line in lines)
    assert ("::error " in result.stdout) == (status == "fail")
    assert "points" in summary.read_text()
    [line] = output.read_text().splitlines()
    key, _, value = line.partition("=")
    verdict = json.loads(base64.b64decode(value))
    jsonschema.validate(verdict, CLASSROOM_SCHEMA)
    assert key == "result" and verdict["status"] == status and verdict["max_score"] == 10
    assert (sum(t["score"] for t in verdict["tests"]) == 10) == (status == "pass")


def test_check_format_junit_end_to_end(tmp_path):
    (tmp_path / "solution.py").write_text(WRONG)
    result = run_grader("check", "solution.py", "--format", "junit", "--output", "r.xml", *FAST.split(), cwd=tmp_path)
    assert result.code == 1 and result.stdout == "", result.stderr
    suite = ET.parse(tmp_path / "r.xml").getroot()
    assert suite.tag == "testsuite" and int(suite.get("failures")) + int(suite.get("errors")) > 0
    from .test_report_formats import xsd_valid  # the XSDs but for a testcase's file and line
    for name in ("JUnit.xsd", "junit-10.xsd"):
        xsd_valid(name, (tmp_path / "r.xml").read_text())
    def_line = 1 + WRONG.splitlines().index(next(x for x in WRONG.splitlines() if x.startswith("def tied_lm_head")))
    assert {(tc.get("file"), tc.get("line")) for tc in suite.iter("testcase")} == {("solution.py", str(def_line))}


# -- hostile submissions (issue 9, classes 1 and 4) ------------------------------------------------
def _marker_module(markers: Path, name: str) -> str:
    """A learner file that records being imported by anything but the grader's sandboxed child."""
    return (f"if __name__ != 'submission':\n"
            f"    open({str(markers / name)!r}, 'w').write(__name__)\n")


@pytest.mark.parametrize("problem", ["tied_lm_head", "no_such_problem"], ids=["grades", "gives-up"])
def test_gradescope_never_imports_the_learners_modules(tmp_path, problem):
    """The default grader command and the give-up writer run in the folder of the learner's
    files: isolated mode keeps a learner's json.py / argparse.py / numpy.py out of both."""
    markers = tmp_path / "markers"
    markers.mkdir()
    files = {"solution.py": CORRECT, **{f"{m}.py": _marker_module(markers, m) for m in ("json", "argparse", "numpy")}}
    venv_bin = tmp_path / "root" / "venv" / "bin"       # as setup.sh leaves it: run_autograder's default
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
    (venv_bin / "python").chmod(0o755)
    (tmp_path / "root" / "submission").mkdir()
    for name, text in files.items():
        (tmp_path / "root" / "submission" / name).write_text(text)
    env = {k: v for k, v in os.environ.items() if k != "GRADER_BIN"}
    env.update(AUTOGRADER_ROOT=str(tmp_path / "root"), GRADER_ARGS=FAST, GRADER_SUBMISSION_FILE="solution.py",
               GRADER_PROBLEM=problem, GRADER_PYTHON=sys.executable)
    result = subprocess.run(["bash", str(GRADESCOPE / "run_autograder")], capture_output=True, text=True,
                            timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    results = json.loads((tmp_path / "root" / "results" / "results.json").read_text())
    assert list(markers.iterdir()) == [], "a learner's module was imported by the autograder"
    if problem == "tied_lm_head":
        assert results["score"] == 10, results
    else:
        assert results["score"] == 0 and "unknown problem" in results["output"]


@pytest.mark.parametrize("kind", ["link", "fifo"])
def test_gradescope_refuses_links_and_special_files(tmp_path, kind):
    """A submitted link is never followed (its target must not reach results.json) and a FIFO
    never read (cp would block on it)."""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET-4e1f = 1\n")
    sub = tmp_path / "submission"
    sub.mkdir()
    if kind == "link":
        (sub / "solution.py").symlink_to(secret)
    else:
        os.mkfifo(sub / "solution.py")
    result = subprocess.run(["bash", str(GRADESCOPE / "run_autograder")], capture_output=True, text=True,
                            timeout=60, env={**os.environ, "AUTOGRADER_ROOT": str(tmp_path), "GRADER_BIN": GRADER,
                                             "GRADER_ARGS": FAST})
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "results" / "results.json").read_text()
    results = json.loads(text)
    assert results["score"] == 0 and "TOPSECRET" not in text
    assert ("symbolic link" if kind == "link" else "not a regular file") in results["output"]


def test_gradescope_give_up_message_shows_file_names_as_visible_escapes(tmp_path):
    """Issue 9, class 11: a learner's file names in the give-up message carry no raw escape or bidi
    character (they reach the learner's results page and the autograder log)."""
    results = run_autograder(tmp_path, {"\x1b[2Ja\u202e.py": CORRECT, "b.py": CORRECT})
    assert "\\x1b[2Ja\\u202e.py" in results["output"]
    assert not any(c in results["output"] for c in ("\x1b", "\u202e"))


def test_gradescope_non_utf8_submission_says_what_to_fix(tmp_path):
    """Issue 12: a file the grader cannot read (exit 2) still gives results.json saying what to
    fix, and nobody claims the instructor was told."""
    (tmp_path / "submission").mkdir()
    (tmp_path / "submission" / "solution.py").write_bytes(b'x = "\xe9t\xe9"\n')
    result = subprocess.run(["bash", str(GRADESCOPE / "run_autograder")], capture_output=True, text=True,
                            timeout=120, env={**os.environ, "AUTOGRADER_ROOT": str(tmp_path), "GRADER_BIN": GRADER,
                                              "GRADER_ARGS": FAST})
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "results" / "results.json").read_text()
    results = json.loads(text)
    jsonschema.validate(results, GS_SCHEMA)
    assert results["score"] == 0 and "save the file as UTF-8" in results["tests"][0]["output"]
    assert "told" not in text


def test_gradescope_give_up_does_not_claim_the_instructor_was_told(tmp_path):
    results = run_autograder(tmp_path, {"solution.py": CORRECT}, GRADER_ARGS="--no-such-flag")
    assert results["score"] == 0 and "could not grade" in results["output"]
    assert "has been told" not in results["output"] and "tell your instructor" in results["output"]


def test_classroom_workflow_missing_solution_still_reports(tmp_path):
    """Issue 12: no solution.py in the learner's repository: exit 2, and still an annotation, a step
    summary and a Classroom result (status error) that say what to do."""
    flow = yaml.safe_load(WORKFLOW.read_text())
    steps = flow["jobs"]["run-autograding-tests"]["steps"]
    command = next(s["run"] for s in steps if "grader check" in s.get("run", ""))
    repo = tmp_path / "repo"
    repo.mkdir()
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
    (bin_dir / "python").chmod(0o755)
    env = {**os.environ, **flow.get("env", {}), "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(output),
           "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "GITHUB_ACTIONS": "true"}
    result = subprocess.run(["bash", "-e", "-c", f"{command} {FAST}"], cwd=repo, env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 2 and "does not exist" in result.stderr
    assert result.stdout.startswith("::error file=solution.py,line=1,")
    assert "submit (commit and push)" in summary.read_text()
    key, _, value = output.read_text().splitlines()[-1].partition("=")
    verdict = json.loads(base64.b64decode(value))
    jsonschema.validate(verdict, CLASSROOM_SCHEMA)
    assert verdict["status"] == "error" and "submit (commit and push)" in verdict["tests"][0]["test_code"]
