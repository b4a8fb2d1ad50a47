"""The templates in templates/ run as written: Gradescope's run_autograder with a temporary
AUTOGRADER_ROOT (results.json checked against the Gradescope JSON Schema), and the GitHub Classroom
workflow's Grade command with GITHUB_STEP_SUMMARY and GITHUB_OUTPUT in temporary files (the
Classroom result checked against its schema). These are also the end-to-end tests of
``grader check --format gradescope`` and ``--format github`` through the CLI; ``--format junit``
is checked end to end in tests/test_batch.py (a batch's junit.xml) and below.
"""
from __future__ import annotations

import base64
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from grader import __version__  # the templates pin the grader they were written for
import yaml

from .conftest import ROOT, SUBMISSIONS, run_grader

GRADESCOPE = ROOT / "templates" / "gradescope"
WORKFLOW = ROOT / "templates" / "github-classroom" / ".github" / "workflows" / "autograding.yml"
GS_SCHEMA = json.loads((ROOT / "grader" / "schemas" / "gradescope_results.schema.json").read_text())
CLASSROOM_SCHEMA = json.loads((ROOT / "grader" / "schemas" / "github_classroom.schema.json").read_text())
CORRECT = (SUBMISSIONS / "correct_numpy.py").read_text()
WRONG = (SUBMISSIONS / "wrong_tolerance_softmax.py").read_text()
#: right values, returned as float32 in every dtype: a partial score (its float32 cases pass)
PARTIAL = (SUBMISSIONS / "wrong_dtype_float32.py").read_text()
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
    assert (tmp_path / "work" / "submission" / "my_answer.py").read_text() == WRONG


def test_gradescope_grades_from_a_folder_of_its_own_and_names_the_file_as_submitted(tmp_path):
    """The grader runs from an empty folder of the autograder's, not from the folder of the
    learner's files (where a library could read a file as its configuration); results.json
    names the file as it was submitted, never the copy's absolute path."""
    log = tmp_path / "cwd.log"
    wrapper = tmp_path / "bin" / "grader"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\npwd > {log}\nls -A >> {log}\nexec {GRADER} "$@"\n')
    wrapper.chmod(0o755)
    results = run_autograder(tmp_path / "root", {"my_answer.py": WRONG}, GRADER_BIN=str(wrapper))
    where, *listed = log.read_text().splitlines()
    assert Path(where) != (tmp_path / "root" / "work" / "submission").resolve() and listed == [], (where, listed)
    text = json.dumps(results)
    assert "my_answer.py" in text and str(tmp_path / "root" / "work") not in text


def test_gradescope_run_autograder_full_marks(tmp_path):
    results = run_autograder(tmp_path, {"-solution.py": CORRECT})  # a file, though its name looks like a flag
    assert results["score"] == 10 and all(t["status"] == "passed" for t in results["tests"])


@pytest.mark.parametrize("files,env,message", [
    ({}, {}, "No .py file or .ipynb notebook was submitted"),
    ({"a.py": CORRECT, "b.py": CORRECT}, {},
     "Several files were submitted: a.py b.py, and more than one of them defines tied_lm_head(). Submit only one"),
    ({"a.py": "def helper():\n    return 1\n", "b.ipynb": "{}"}, {},
     "Several files were submitted: a.py b.ipynb, and none of them defines tied_lm_head(). Submit the file"),
    ({"a.py": CORRECT}, {"GRADER_SUBMISSION_FILE": "solution.py"}, "The file solution.py was not submitted"),
    ({"a.py": CORRECT}, {"GRADER_PROBLEM": "no_such_problem"},
     "could not grade this submission (exit 2): grader: error: unknown problem 'no_such_problem'"),
    ({"a.py": CORRECT, "helper.py": "X = 1\n"}, {"GRADER_PROBLEM": "no_such_problem"},  # while choosing the file
     "could not grade this submission (exit 2): grader: error: unknown problem 'no_such_problem'"),
    ({"a.py": CORRECT, "helper.py": "X = 1\n"}, {"GRADER_ARGS": "--no-such-flag"},
     "could not grade this submission (exit 2): grader: error: unrecognized arguments: --no-such-flag"),
    # 600 files of long names: the list in one argument passed Linux's 128 KiB, and no results.json
    ({f"{i:04d}_{'a' * 240}.py": "x = 1\n" for i in range(600)}, {},
     f"Several files were submitted: 0000_{'a' * 240}.py"),
], ids=["none", "several-define", "none-defines", "chosen-missing", "unknown-problem", "unknown-problem-choosing",
        "bad-flag-choosing", "many-long-names"])
def test_gradescope_run_autograder_explains_what_it_cannot_grade(tmp_path, files, env, message):
    results = run_autograder(tmp_path, files, **env)
    assert results["score"] == 0 and results["tests"] == [] and message in results["output"]
    assert "has been told" not in results["output"]
    if len(files) > 20:
        assert "and 580 more, and none of them defines tied_lm_head()" in results["output"]


def _notebook(*cells: str) -> str:
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                       "cells": [{"cell_type": "code", "metadata": {}, "source": src, "id": f"c{i}", "outputs": [],
                                  "execution_count": None} for i, src in enumerate(cells)]})


def _check_gradescope(folder: Path, name: str) -> dict:
    """``grader check NAME --format gradescope`` in ``folder``, as a learner or instructor would run it:
    the CLI in this process (``main_in_process``; the submission still in its sandboxed child), the
    verdicts the template's run is compared with (the template itself runs in a real shell)."""
    result = run_grader("check", name, "--problem", "tied_lm_head", "--format", "gradescope", *FAST.split(),
                        cwd=folder, process=False)
    assert result.code in (0, 1), result.stderr
    return json.loads(result.stdout)


def _verdicts(results: dict) -> tuple:
    return results["score"], [(t.get("name"), t.get("status"), t.get("score")) for t in results["tests"]]


@pytest.mark.parametrize("form", ["multifile", "notebook"])
def test_gradescope_run_autograder_grades_the_forms_check_grades(tmp_path, form):
    """The README's forms of a submission: the multi-file example (the file that defines the
    function is chosen, and the helper it imports goes along) and a notebook (here a wrong one, for
    a partial score) get the verdicts of `grader check` on the same files."""
    if form == "multifile":
        files = {p.name: p.read_text() for p in (SUBMISSIONS / "multifile").glob("*.py")}
        main = "solution.py"
        assert set(files) == {"solution.py", "helper.py"}
    else:
        files = {"answer.ipynb": _notebook("%matplotlib inline\nimport numpy as np", PARTIAL)}
        main = "answer.ipynb"
    results = run_autograder(tmp_path / "gs", files)
    (tmp_path / "learner").mkdir()
    for name, text in files.items():
        (tmp_path / "learner" / name).write_text(text)
    expected = _check_gradescope(tmp_path / "learner", main)
    assert _verdicts(results) == _verdicts(expected)
    assert results["score"] == (10 if form == "multifile" else expected["score"]) and results["tests"]
    if form == "notebook":
        assert 0 < results["score"] < 10


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
    assert runs and all(_isolated(run) for run in runs), runs


def _isolated(script: str) -> bool:
    """Every ``python`` command of a step's script runs with ``-I``."""
    calls = re.findall(r"(?:^|[\s;|&(])python3?(\s+\S+)?", script)
    return bool(calls) and all(arg.strip() == "-I" for arg in calls)


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
    # the CLI in this process (its --output file and empty stdout are the CLI's logic; the
    # submission still runs in its sandboxed child)
    result = run_grader("check", "solution.py", "--format", "junit", "--output", "r.xml", *FAST.split(), cwd=tmp_path,
                        process=False)
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


@pytest.mark.parametrize("problem,chosen", [("tied_lm_head", "solution.py"), ("no_such_problem", "solution.py"),
                                            ("tied_lm_head", "")], ids=["grades", "gives-up", "chooses"])
def test_gradescope_never_imports_the_learners_modules(tmp_path, problem, chosen):
    """The default grader command and the give-up writer run in the folder of the learner's
    files, and the one-liner that chooses the file among several reads them: isolated mode keeps a
    learner's json.py / argparse.py / numpy.py out of all three."""
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
    env.update(AUTOGRADER_ROOT=str(tmp_path / "root"), GRADER_ARGS=FAST, GRADER_SUBMISSION_FILE=chosen,
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
    """Issue 12: a file that is not UTF-8 text is the submission's failure (kind import, exit 1),
    whose results.json says what to fix, and nobody claims the instructor was told."""
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


# -- issue 12, item 3: the templates' commands, run locally ----------------------------------------
# Every step that installs packages is stubbed: a `python` (or the venv's python) that logs
# `-m pip ...` calls instead of running them, and runs anything else with the Python under test.
# The classes are tiny and graded with few generated cases: these tests are about plumbing.
CLASS_FLAGS = "--max-examples 2 --no-shrink --jobs 2"
CLASS_WORKFLOW = ROOT / "templates" / "github-class" / ".github" / "workflows" / "grade-class.yml"
SLURM = ROOT / "templates" / "slurm"


def _script(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def _python_stub(path: Path, pip_log: Path) -> Path:
    """A ``python`` whose ``-m pip`` calls are logged (one line each), everything else run by the
    Python under test."""
    return _script(path, f'#!/bin/sh\nif [ "$1 $2 $3" = "-I -m pip" ]; then\n'
                         f'  shift 3; printf "%s|" "$@" >> {pip_log}; echo >> {pip_log}; exit 0\nfi\n'
                         f'exec {sys.executable} "$@"\n')


def _pip_calls(pip_log: Path) -> list[list[str]]:
    return [line.rstrip("|").split("|") for line in pip_log.read_text().splitlines()] if pip_log.exists() else []


def _resolve(value: str, known: dict[str, str]) -> str:
    """A workflow value with its ``${{ ... }}`` expressions replaced as the runner would for the
    few this test knows (``known``); secrets are empty, as for a repository without them."""
    def one(m: re.Match[str]) -> str:
        expr = m.group(1).strip()
        if expr.startswith("secrets."):
            return ""
        return known[expr]
    return re.sub(r"\$\{\{(.*?)\}\}", one, str(value))


def _run_step(step: dict, cwd: Path, env: dict[str, str], known: dict[str, str]) -> subprocess.CompletedProcess:
    step_env = {k: _resolve(v, known) for k, v in (step.get("env") or {}).items()}
    # GitHub runs `run:` with bash -e {0} (and -o pipefail for the default shell)
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=cwd,
                          env={**env, **step_env}, capture_output=True, text=True, timeout=300)


def _gradebook(folder: Path) -> list[dict[str, str]]:
    import csv
    with open(folder / "gradebook.csv", newline="", encoding="utf-8") as fh:
        rows = [{k: Path(v).name if k == "submission" else v for k, v in row.items() if k != "seconds"}
                for row in csv.DictReader(fh)]
    return sorted(rows, key=lambda r: r["learner"])


@pytest.fixture(scope="module")
def tiny_class(tmp_path_factory):
    """Two learners (a correct and a wrong NumPy file) in ``<dir>/class``, named so that they fall in
    different shards of 2, and the unsharded ``grader grade`` of them in ``<dir>/whole``."""
    from grader.batch.discovery import in_shard

    base = tmp_path_factory.mktemp("class")
    names = [f"learner{i}" for i in range(50)]
    first = next(n for n in names if in_shard(n, 1, 2))
    second = next(n for n in names if in_shard(n, 2, 2))
    (base / "class").mkdir()
    (base / "class" / f"{first}.py").write_text(CORRECT)
    (base / "class" / f"{second}.py").write_text(WRONG)
    # the gradebook the templates' runs are compared with: the CLI in this process (each learner's
    # check is still a process of its own, as grade starts them)
    result = run_grader("grade", "class", "--problem", "tied_lm_head", "--out", "whole", *CLASS_FLAGS.split(),
                        cwd=base, process=False)
    assert result.code == 1, result.stderr
    assert [r["passed"] for r in _gradebook(base / "whole")] in (["true", "false"], ["false", "true"])
    return base


def _fake_interpreter(path: Path, kind: str) -> Path:
    if kind == "good":
        return _script(path, f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    if kind == "good-no-ensurepip":
        # the Python under test, whose `-m venv` makes a real venv that reaches pip through the
        # base interpreter's site-packages instead of installing its own copy (ensurepip: about
        # 4 CPU-s); for a test about which interpreter is chosen, not how a venv gets pip (that is
        # test_gradescope_setup_chooses_an_interpreter_by_running_it's, with a full venv)
        return _script(path, f'#!/bin/sh\nif [ "$1 $2 $3" = "-I -m venv" ]; then\n'
                             f'  exec {sys.executable} -I -m venv --system-site-packages --without-pip "$4"\nfi\n'
                             f'exec {sys.executable} "$@"\n')
    if kind == "old":   # runs, but is a 3.10 (Ubuntu 22.04's python3)
        return _script(path, "#!/bin/sh\necho 'AssertionError' >&2\nexit 1\n")
    return _script(path, "#!/bin/sh\necho 'error while loading shared libraries: libpython3.13.so' >&2\nexit 127\n")


def _setup_env(root: Path, bin_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GRADER_BIN", "GRADER_PYTHON", "VIRTUAL_ENV")}
    env.update(AUTOGRADER_ROOT=str(root), PATH=f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin", **extra)
    return env


def test_gradescope_setup_chooses_an_interpreter_by_running_it(tmp_path):
    """A python3.13 that does not start and a python3.12 / python3 older than 3.11 are skipped (never
    an exit 100); the first candidate that runs, is 3.11+ and makes a venv with pip is used."""
    bin_dir = tmp_path / "bin"
    _fake_interpreter(bin_dir / "python3.13", "broken")
    _fake_interpreter(bin_dir / "python3.12", "old")
    _fake_interpreter(bin_dir / "python3.11", "good")
    _fake_interpreter(bin_dir / "python3", "old")
    _script(bin_dir / "apt-get", f"#!/bin/sh\necho \"$@\" >> {tmp_path / 'apt.log'}\nexit 100\n")
    root = tmp_path / "autograder"
    result = subprocess.run(["bash", str(GRADESCOPE / "setup.sh")], capture_output=True, text=True, timeout=300,
                            env=_setup_env(root, bin_dir, GRADER_SETUP_STEPS="python"))
    assert result.returncode == 0, result.stderr
    assert "skipping python3.13: it does not run" in result.stderr
    assert "skipping python3.12" in result.stderr and "using python3.11 (3." in result.stderr
    assert not (tmp_path / "apt.log").exists()  # nothing installed: a usable Python was there
    check = subprocess.run([str(root / "venv" / "bin" / "python"), "-I", "-m", "pip", "--version"],
                           capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stderr


def test_gradescope_setup_installs_python311_when_none_runs(tmp_path):
    """Ubuntu 22.04 (python3 is 3.10): apt installs python3.11 and python3.11-venv, which is then used."""
    bin_dir = tmp_path / "bin"
    _fake_interpreter(bin_dir / "python3.13", "broken")
    _fake_interpreter(bin_dir / "python3.11", "old")  # hides this machine's own python3.11
    _fake_interpreter(bin_dir / "python3", "old")
    good = _fake_interpreter(tmp_path / "good-python", "good-no-ensurepip")
    apt_log = tmp_path / "apt.log"
    _script(bin_dir / "apt-get", f'#!/bin/sh\necho "$@" >> {apt_log}\n'
                                 f'case "$*" in *"install"*python3.11*) cp {good} {bin_dir / "python3.11"};; esac\n')
    root = tmp_path / "autograder"
    result = subprocess.run(["bash", str(GRADESCOPE / "setup.sh")], capture_output=True, text=True, timeout=300,
                            env=_setup_env(root, bin_dir, GRADER_SETUP_STEPS="python"))
    assert result.returncode == 0, result.stderr
    calls = apt_log.read_text().splitlines()
    assert calls[0] == "update" and "python3.11 python3.11-venv" in calls[1]
    assert "using python3.11" in result.stderr and (root / "venv" / "bin" / "python").exists()


def test_gradescope_setup_installs_torch_and_warms_the_caches(tmp_path):
    """The install step (pip stubbed) takes torch's CPU build and the grader's torch extra when the
    course uses torch; the warm step grades the solutions with run_autograder's settings into
    $AUTOGRADER_ROOT/cache, the folder run_autograder then reads (a learner's check reuses the
    cached cases)."""
    root = tmp_path / "autograder"
    pip_log = tmp_path / "pip.log"
    _python_stub(root / "venv" / "bin" / "python", pip_log)   # the venv the python step would make
    (root / "source" / "solutions").mkdir(parents=True)
    (root / "source" / "solutions" / "solution_numpy.py").write_text(CORRECT)
    env = _setup_env(root, tmp_path / "bin", GRADER_SETUP_STEPS="install warm", GRADER_FRAMEWORKS="numpy torch",
                     GRADER_ARGS=FAST, GRADER_PYTHON=sys.executable)
    env.pop("GRADER_CACHE_DIR", None)  # the default: $AUTOGRADER_ROOT/cache, in both scripts
    result = subprocess.run(["bash", str(GRADESCOPE / "setup.sh")], capture_output=True, text=True, timeout=300,
                            env=env)
    assert result.returncode == 0, result.stderr
    calls = _pip_calls(pip_log)
    assert calls[0] == ["install", "--upgrade", "pip"]
    assert calls[1] == ["install", "torch==2.13.0", "--index-url", "https://download.pytorch.org/whl/cpu"]
    assert calls[2] == ["install", f"grader[torch] @ git+https://github.com/YOUR-ORG/grader.git@v{__version__}"]
    assert "warmed the caches with solution_numpy.py" in result.stderr
    cache = root / "cache"
    cached = {p.name: p.stat().st_mtime_ns for p in cache.glob("cases-*.bin")}
    assert cached and cache.stat().st_uid == os.getuid()
    # a learner graded as run_autograder does: the case set comes from the cache, not rewritten
    (root / "submission").mkdir()
    (root / "submission" / "solution.py").write_text(WRONG)
    env.pop("GRADER_SETUP_STEPS")
    graded = subprocess.run(["bash", str(GRADESCOPE / "run_autograder")], capture_output=True, text=True,
                            timeout=300, env=env)
    assert graded.returncode == 0, graded.stderr
    assert json.loads((root / "results" / "results.json").read_text())["score"] < 10
    assert {p.name: p.stat().st_mtime_ns for p in cache.glob("cases-*.bin")} == cached


def test_gradescope_setup_refuses_a_solution_that_fails(tmp_path):
    root = tmp_path / "autograder"
    _python_stub(root / "venv" / "bin" / "python", tmp_path / "pip.log")
    (root / "source" / "solutions").mkdir(parents=True)
    (root / "source" / "solutions" / "mine.py").write_text(WRONG)
    env = _setup_env(root, tmp_path / "bin", GRADER_SETUP_STEPS="warm", GRADER_ARGS=FAST, GRADER_PYTHON=sys.executable)
    result = subprocess.run(["bash", str(GRADESCOPE / "setup.sh")], capture_output=True, text=True, timeout=300,
                            env=env)
    assert result.returncode == 1 and "the solution mine.py does not pass" in result.stderr


def _workflow_env(tmp_path: Path, flow: dict, **extra: str) -> tuple[dict[str, str], Path]:
    bin_dir = tmp_path / "bin"
    pip_log = tmp_path / "pip.log"
    _python_stub(bin_dir / "python", pip_log)
    (tmp_path / "home").mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "GRADER_CACHE_DIR"}
    env.update({k: str(v) for k, v in flow.get("env", {}).items()})
    env.update(PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", HOME=str(tmp_path / "home"), GITHUB_ACTIONS="true",
               GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"), GITHUB_OUTPUT=str(tmp_path / "output.txt"), **extra)
    return env, pip_log


def _outputs(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line) if path.exists() else {}


def test_classroom_workflow_runs_every_step_and_caches_pip_and_the_grader(tmp_path):
    """Every `run:` step in order (pip stubbed), with the `uses:` steps' settings checked: pip's
    cache keyed by this workflow, and the grader's cache keyed by its version and the problem's
    spec hash, the folder the Grade step uses."""
    import hashlib

    import grader
    from grader.spec import find_problem

    flow = yaml.safe_load(WORKFLOW.read_text())
    steps = flow["jobs"]["run-autograding-tests"]["steps"]
    setup = next(s for s in steps if s.get("uses", "").startswith("actions/setup-python@"))
    assert setup["with"]["cache"] == "pip"
    assert (ROOT / "templates" / "github-classroom" / setup["with"]["cache-dependency-path"]).is_file()
    cache = next(s for s in steps if s.get("uses", "").startswith("actions/cache@"))
    assert "steps.cache-key.outputs.key" in cache["with"]["key"] and "steps.cache-key.outputs.dir" in cache["with"]["path"]
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "solution.py").write_text(CORRECT)
    env, pip_log = _workflow_env(tmp_path, flow, GRADER_TORCH="true")
    known: dict[str, str] = {}
    for step in steps:
        if "run" not in step:
            continue
        known.update({f"steps.cache-key.outputs.{k}": v for k, v in _outputs(tmp_path / "output.txt").items()})
        command = step["run"] + (f" {FAST}" if step.get("id") == "grader" else "")
        result = _run_step({**step, "run": command}, repo, env, known)
        assert result.returncode == 0, (step["name"], result.stderr)
    calls = _pip_calls(pip_log)
    assert calls == [["install", "torch==2.13.0", "--index-url", "https://download.pytorch.org/whl/cpu"],
                     ["install", f"grader[torch] @ git+https://github.com/YOUR-ORG/grader.git@v{__version__}"]]
    out = _outputs(tmp_path / "output.txt")
    spec = hashlib.sha256(find_problem("tied_lm_head").read_bytes()).hexdigest()[:16]
    assert out["key"] == f"grader-{grader.__version__}-tied_lm_head-{spec}"
    assert out["dir"] == str(tmp_path / "home" / ".cache" / "grader")
    assert list(Path(out["dir"]).glob("cases-*.bin")), "the Grade step did not use the cached folder"
    assert json.loads(base64.b64decode(out["result"]))["status"] == "pass"


def test_class_matrix_workflow_shards_and_merges_like_one_run(tmp_path, tiny_class):
    """Each matrix job's `run:` steps (pip stubbed) grade one shard; their folders, handed over as
    the artifacts would be, are merged by the last job into the gradebook of an unsharded run."""
    flow = yaml.safe_load(CLASS_WORKFLOW.read_text())
    grade, merge = flow["jobs"]["grade"], flow["jobs"]["merge"]
    shards = grade["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, int(flow["env"]["SHARDS"]) + 1)) and merge["needs"] == "grade"
    upload = next(s for s in grade["steps"] if s.get("uses", "").startswith("actions/upload-artifact@"))
    download = next(s for s in merge["steps"] if s.get("uses", "").startswith("actions/download-artifact@"))
    env, pip_log = _workflow_env(tmp_path, flow, SUBMISSIONS="class", GRADER_ARGS=CLASS_FLAGS)
    workspace = tmp_path / "workspace"
    shutil.copytree(tiny_class / "class", workspace / "class")
    artifacts = tmp_path / "artifacts"
    for shard in shards:
        known = {"matrix.shard": str(shard)}
        for step in grade["steps"]:
            if "run" in step:
                result = _run_step(step, workspace, env, known)
                assert result.returncode == 0, (shard, step["name"], result.stderr)
        name = _resolve(upload["with"]["name"], known)
        shutil.copytree(workspace / _resolve(upload["with"]["path"], known), artifacts / name)
    assert len(_pip_calls(pip_log)) == len(shards)
    # download-artifact with a pattern: one folder per artifact under its path
    merged = tmp_path / "merge-job"
    shutil.copytree(artifacts, merged / download["with"]["path"])
    assert all(fnmatch.fnmatch(p.name, download["with"]["pattern"]) for p in (merged / "shards").iterdir())
    for step in merge["steps"]:
        if "run" in step:
            result = _run_step(step, merged, env, {})
            assert result.returncode == 0, (step["name"], result.stderr)
    assert _gradebook(merged / "grades") == _gradebook(tiny_class / "whole")
    step = (tmp_path / "summary.md").read_text()
    assert "## " in step and "](reports/" not in step     # no link the job summary cannot open
    assert "](reports/" in (merged / "grades" / "summary.md").read_text()  # the artifact's keeps them


def test_slurm_array_tasks_and_merge_give_one_runs_gradebook(tmp_path, tiny_class):
    """grade-shard.sbatch run as each task of a 3-task array (SLURM_ARRAY_TASK_ID 0..2; one shard
    is empty), then merge.sbatch: the gradebook of an unsharded run; a task whose learners fail
    still exits 0, so that the afterok merge runs."""
    out = tmp_path / "grades"
    env = {**os.environ, "GRADER_SUBMISSIONS": str(tiny_class / "class"), "GRADER_OUT": str(out),
           "GRADER": f"{sys.executable} -I -m grader", "GRADER_PROBLEM": "tied_lm_head", "GRADER_ARGS": CLASS_FLAGS,
           "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "2"}
    for task in range(3):
        result = subprocess.run(["bash", str(SLURM / "grade-shard.sbatch")], cwd=tmp_path, capture_output=True,
                                text=True, timeout=300, env={**env, "SLURM_ARRAY_TASK_ID": str(task)})
        assert result.returncode == 0, result.stderr
        assert (out / f"shard-{task + 1}" / "gradebook.csv").is_file()
    result = subprocess.run(["bash", str(SLURM / "merge.sbatch")], cwd=tmp_path, capture_output=True, text=True,
                            timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    assert _gradebook(out / "merged") == _gradebook(tiny_class / "whole")


def test_slurm_submit_chains_the_merge_after_the_array(tmp_path):
    bin_dir = tmp_path / "bin"
    log = tmp_path / "sbatch.log"
    _script(bin_dir / "sbatch", f'#!/bin/sh\necho "$@" >> {log}\n'
                                f'case "$*" in *--array*) echo "4242;cluster";; *) echo 4243;; esac\n')
    _script(bin_dir / "sinfo", '#!/bin/sh\nprintf "8\\n16\\n"\n')   # nodes of 8 and 16 CPUs: a task's 4 fit
    (tmp_path / "class").mkdir()
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "GRADER_SHARDS": "3",
           "SBATCH_ARGS": "--partition=short"}
    result = subprocess.run(["bash", str(SLURM / "submit.sh"), "class", "out"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=60, env=env)
    assert result.returncode == 0, result.stderr
    array, merge = log.read_text().splitlines()
    assert "--array=0-2" in array and "--partition=short" in array and array.endswith("grade-shard.sbatch")
    assert "--dependency=afterok:4242" in merge and merge.endswith("merge.sbatch")
    assert "job 4242" in result.stdout and "job 4243" in result.stdout
    bad = subprocess.run(["bash", str(SLURM / "submit.sh"), "class"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=60, env={**env, "GRADER_SHARDS": "0"})
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "GRADER_SHARDS" in bad.stderr


def test_slurm_submit_refuses_tasks_that_no_node_can_run(tmp_path):
    """Issue 37: on a cluster whose nodes have 2 CPUs, --cpus-per-task=4 left the array pending
    forever while submit.sh printed "submitted". It asks sinfo (for the partition SBATCH_ARGS
    names) and refuses, saying what to pass; a request that fits is submitted."""
    bin_dir = tmp_path / "bin"
    log = tmp_path / "sbatch.log"
    _script(bin_dir / "sbatch", f'#!/bin/sh\necho "$@" >> {log}\necho 4242\n')
    _script(bin_dir / "sinfo", f'#!/bin/sh\necho "$@" >> {tmp_path / "sinfo.log"}\nprintf "2\\n2\\n"\n')
    (tmp_path / "class").mkdir()
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "GRADER_SHARDS": "2",
           "SBATCH_ARGS": "-p short"}
    refused = subprocess.run(["bash", str(SLURM / "submit.sh"), "class", "out"], cwd=tmp_path, capture_output=True,
                             text=True, timeout=60, env=env)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "asks for 4 CPUs" in refused.stderr and "partition short has more than 2" in refused.stderr
    assert 'SBATCH_ARGS="--cpus-per-task=2"' in refused.stderr and "submitted" not in refused.stdout
    assert not log.exists() and "--partition short" in (tmp_path / "sinfo.log").read_text()
    fits = subprocess.run(["bash", str(SLURM / "submit.sh"), "class", "out"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, env={**env, "SBATCH_ARGS": "-p short --cpus-per-task 2"})
    assert fits.returncode == 0 and "submitted" in fits.stdout, fits.stderr


@pytest.mark.parametrize("path", ["gradescope/setup.sh", "gradescope/run_autograder", "slurm/submit.sh",
                                  "slurm/grade-shard.sbatch", "slurm/merge.sbatch"])
def test_template_scripts_are_executable_bash(path):
    script = ROOT / "templates" / path
    assert os.access(script, os.X_OK)
    subprocess.run(["bash", "-n", str(script)], check=True)


@pytest.mark.parametrize("workflow", [WORKFLOW, CLASS_WORKFLOW], ids=["classroom", "class"])
def test_workflows_run_python_isolated(workflow):
    flow = yaml.safe_load(workflow.read_text())
    runs = [s["run"] for job in flow["jobs"].values() for s in job["steps"] if "python" in s.get("run", "")]
    assert runs and all(_isolated(run) for run in runs), runs


# ---------------------------------------------------------------- PrairieLearn

PRAIRIELEARN = ROOT / "templates" / "prairielearn"
PL_SCHEMA = json.loads((ROOT / "grader" / "schemas" / "prairielearn_results.schema.json").read_text())


def run_prairielearn(root: Path, files: dict[str, str], **env: str) -> dict:
    """run.sh as PrairieLearn runs it: the student's files in root/student, results.json read
    from root/results (which run.sh must create)."""
    (root / "student").mkdir(parents=True)
    for name, text in files.items():
        (root / "student" / name).write_text(text)
    result = subprocess.run(["bash", str(PRAIRIELEARN / "run.sh")], capture_output=True, text=True, timeout=180,
                            env={**os.environ, "PL_GRADE_ROOT": str(root), "GRADER_BIN": GRADER,
                                 "GRADER_ARGS": FAST, **env})
    assert result.returncode == 0, result.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(results, PL_SCHEMA)
    return results


def test_prairielearn_memory_limit_is_the_containers(tmp_path):
    """Issue 37: PrairieLearn's container had 2 GiB but run.sh left --memory-mb at 4096, so a
    memory bomb was killed by the kernel (a vague SIGKILL crash). run.sh reads the cgroup's
    memory.max and gives the submission three quarters of it: a 3 GiB allocation is a memory
    failure the student can read. No limit ("max"): the grader's default stands."""
    log = tmp_path / "argv.log"
    wrapper = _script(tmp_path / "bin" / "grader-logged", f'#!/bin/sh\necho "$@" >> {log}\nexec {GRADER} "$@"\n')
    cgroup = tmp_path / "cgroup"
    cgroup.mkdir()
    (cgroup / "memory.max").write_text(f"{2 << 30}\n")
    bomb = ("import numpy as np\n\ndef tied_lm_head(hidden, embedding_matrix):\n"
            "    big = np.ones(3 << 27)  # 3 GiB of float64\n    return hidden @ embedding_matrix.T + big[0] * 0\n")
    results = run_prairielearn(tmp_path / "a", {"solution.py": bomb}, GRADER_BIN=str(wrapper),
                               GRADER_CGROUP_DIR=str(cgroup))
    assert "--memory-mb 1536" in log.read_text()
    assert results["score"] == 0 and "memory" in json.dumps(results).lower(), results["message"]
    (cgroup / "memory.max").write_text("max\n")
    run_prairielearn(tmp_path / "b", {"solution.py": CORRECT}, GRADER_BIN=str(wrapper), GRADER_CGROUP_DIR=str(cgroup))
    assert "--memory-mb" not in log.read_text().splitlines()[-1]
    run_prairielearn(tmp_path / "c", {"solution.py": CORRECT}, GRADER_BIN=str(wrapper), GRADER_MEMORY_MB="900")
    assert "--memory-mb 900" in log.read_text().splitlines()[-1]


def test_prairielearn_run_sh_grades_right_and_wrong(tmp_path):
    right = run_prairielearn(tmp_path / "a", {"solution.py": CORRECT})
    assert (tmp_path / "a" / "results" / "results.json").stat().st_mode & 0o777 == 0o644
    assert right["gradable"] is True and right["score"] == 1.0 and right["message"].startswith("PASS")
    wrong = run_prairielearn(tmp_path / "b", {"solution.py": WRONG})
    assert wrong["gradable"] is True and 0 <= wrong["score"] < 1 and wrong["message"].startswith("FAIL")
    assert any(t["points"] < t["max_points"] for t in wrong["tests"])
    assert "solution.py" in wrong["output"] and str(tmp_path) not in wrong["output"]  # named as submitted


def test_prairielearn_without_a_course_secret_makes_one_for_the_run(tmp_path):
    """Round five: the image carried one secret, mode 0644, made when it was built; an image in
    a registry publishes it, and a sandbox user could read it. Without a course secret run.sh
    now makes one for the run alone (0600) and removes it."""
    wrapper = tmp_path / "grader.sh"
    wrapper.write_text(f'#!/bin/bash\nprev=""\nfor a in "$@"; do [ "$prev" = --seed-secret ] && '
                       f'stat -c %a "$a" > {tmp_path}/mode; prev="$a"; done\nexec {GRADER} "$@"\n')
    wrapper.chmod(0o755)
    (tmp_path / "tmp").mkdir()
    results = run_prairielearn(tmp_path / "a", {"solution.py": CORRECT}, GRADER_BIN=str(wrapper),
                               TMPDIR=str(tmp_path / "tmp"))
    assert results["score"] == 1.0
    assert (tmp_path / "mode").read_text().strip() == "600"
    assert not list((tmp_path / "tmp").glob("grader-seed-secret*"))
    assert "grader-seed-secret" not in (PRAIRIELEARN / "Dockerfile").read_text()


@pytest.mark.parametrize("files,env,says", [
    ({"solution.py": "def tied_lm_head(h, E)\n    return h\n"}, {}, "import: "),
    ({}, {}, "No .py file or .ipynb notebook was submitted"),
    ({"a.py": "x = 1\n", "b.py": "y = 2\n"}, {}, "Several files were submitted"),
    ({"solution.py": "x = 1\n"}, {"GRADER_SUBMISSION_FILE": "answer.py"}, "The file answer.py was not submitted"),
    ({"solution.py": "x = 1\n"}, {"GRADER_ARGS": "--no-such-flag"}, "The autograder could not grade this submission"),
])
def test_prairielearn_what_cannot_be_graded_costs_no_attempt(tmp_path, files, env, says):
    results = run_prairielearn(tmp_path, files, **env)
    assert results["gradable"] is False and "score" not in results
    assert says in results["format_errors"][0], results


def test_prairielearn_refuses_a_link(tmp_path):
    (tmp_path / "student").mkdir()
    (tmp_path / "student" / "solution.py").symlink_to("/etc/passwd")
    result = subprocess.run(["bash", str(PRAIRIELEARN / "run.sh")], capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PL_GRADE_ROOT": str(tmp_path), "GRADER_BIN": GRADER})
    results = json.loads((tmp_path / "results" / "results.json").read_text())
    assert result.returncode == 0 and results["gradable"] is False and "symbolic link" in results["message"]
    assert "root:" not in json.dumps(results)


def test_prairielearn_grades_an_assignment_from_one_file(tmp_path):
    lookup = (SUBMISSIONS / "embedding_lookup" / "correct_numpy.py").read_text()
    results = run_prairielearn(tmp_path, {"solution.py": lookup}, GRADER_ASSIGNMENT="lesson1")
    names = {t["name"].split("/")[0] for t in results["tests"]}
    assert {"embedding_lookup", "masked_mean_pool", "tied_lm_head"} <= names
    lookup_points = sum(t["points"] for t in results["tests"] if t["name"].startswith("embedding_lookup/"))
    assert lookup_points == pytest.approx(3) and results["score"] == pytest.approx(0.3)


def test_prairielearn_scripts_are_valid_bash_and_json():
    assert subprocess.run(["bash", "-n", str(PRAIRIELEARN / "run.sh")]).returncode == 0
    info = json.loads((PRAIRIELEARN / "info.json").read_text())
    assert info["externalGradingOptions"]["entrypoint"] == "/grade/serverFilesCourse/grader/run.sh"


def _nested(root: Path, files: dict[str, str]) -> dict:
    for name, text in files.items():
        (root / "submission" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "submission" / name).write_text(text)
    result = subprocess.run(["bash", str(GRADESCOPE / "run_autograder")], capture_output=True, text=True,
                            timeout=120, env={**os.environ, "AUTOGRADER_ROOT": str(root), "GRADER_BIN": GRADER,
                                              "GRADER_ARGS": FAST})
    assert result.returncode == 0, result.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(results, GS_SCHEMA)
    return results


def test_gradescope_grades_a_zip_of_a_folder_and_a_repository(tmp_path):
    """A zip of submission/src/ or a GitHub repository (files below a folder, a .git folder
    beside them) once got 0 points with "No .py file"."""
    zipped = _nested(tmp_path / "zip", {"src/solution.py": CORRECT})
    assert zipped["score"] == pytest.approx(10) and zipped["tests"]
    repo = _nested(tmp_path / "repo", {".git/hooks/x.py": "import os\n", "README.md": "hi\n",
                                       "hw/solution.py": CORRECT, "hw/deep/er/other.py": "x = 1\n"})
    assert repo["score"] == pytest.approx(10)
    two = _nested(tmp_path / "two", {"a/solution.py": CORRECT, "b/solution.py": CORRECT})
    assert two["score"] == 0 and "several folders hold some" in two["output"]
