"""Security round four, classes 5 and 8: what a learner is handed back names their files as they
have them and no path of the grading machine; and what a submission printed before a timeout,
a crash or a kill is in the report.

Class 5, "paths in handed-back feedback": a helper's ``__file__`` and the main file's folder came
back as the instructor's absolute class path, ``/proc/self/mountinfo`` named the venv and the
install, a crash's stderr named ``grader/_child.py``, the gradebook's message (an LMS's feedback
text) carried the class path, and ``--problems-dir ABS`` put ABS in learners' replay lines.
Class 8, "output lost on a kill": the child ran under ``-I``, which ignores PYTHONUNBUFFERED, so a
learner's prints before a timeout or an abort were lost.

Two grader runs in all (about 2 CPU-s each, plus one call waiting for its wall-clock backstop):
one ``grader grade`` of a class of five learners in a temporary folder with an absolute path, whose
reports every learner format renders in process; one ``check`` in process (its submission in the
sandboxed child, tier ``rlimits``) with an absolute ``--problems-dir``.
"""
from __future__ import annotations

import csv
import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

import grader
from grader.batch.gradebook import report_path
from grader.reports import FORMATS, reporter
from grader.results import Report

from .conftest import ROOT, run_grader

#: run_grader runs grader.cli.main in this process (tests/conftest.py): these tests read the
#: CLI's findings, exit codes and reports; each submission still runs in its sandboxed child
pytestmark = pytest.mark.cli_in_process

FAST = ["--max-examples", "4", "--no-shrink", "--timeout", "2"]

HELPER = """\
    import numpy as np
    print("HELPER_FILE", __file__)


    def project_onto_rows(vectors, table):
        raise ValueError("boom in " + __file__)
    """

MAIN = """\
    import os
    import sys
    from helper import project_onto_rows

    print("MAIN_DIR", os.path.dirname(__file__))
    print("SYS_PATH", sys.path)
    print("MOUNTINFO", open("/proc/self/mountinfo").read())


    def tied_lm_head(hidden, embedding_matrix):
        return project_onto_rows(hidden, embedding_matrix)
    """

ABORTS = """\
    import os


    def tied_lm_head(hidden, embedding_matrix):
        print("PRINTED_BEFORE_THE_ABORT", __file__)
        os.abort()
    """

SLEEPS = """\
    import time


    def tied_lm_head(hidden, embedding_matrix):
        print("PRINTED_BEFORE_THE_TIMEOUT")
        time.sleep(600)
    """

IMPORT_FAILS = """\
    import os
    raise RuntimeError("cannot start in " + os.path.dirname(os.path.abspath(__file__)))


    def tied_lm_head(hidden, embedding_matrix):
        pass
    """


def machine_paths(*more: Path | str) -> dict[str, str]:
    """The grading machine's paths no learner may be handed: name -> path (and its real path)."""
    package = Path(grader.__file__).resolve().parent
    out = {"repository": str(ROOT), "package": str(package), "sys.prefix": sys.prefix,
           **{f"given {i}": str(p) for i, p in enumerate(more)}}
    if sys.base_prefix not in ("/usr", "/usr/local", "/"):
        out["sys.base_prefix"] = sys.base_prefix
    return {**out, **{f"{k} (real)": os.path.realpath(v) for k, v in out.items()}}


def leaks(text: str, paths: dict[str, str]) -> list[str]:
    return sorted({name for name, path in paths.items() if path in text})


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """One ``grader grade`` of alice (a main file and a helper printing their paths, the mount
    table and ``sys.path``, the call raising in the helper), bob (prints, then aborts), carol
    (prints, then sleeps past --timeout 2), dave (his import raises naming his folder) and erin
    (a folder without the function: a discovery note naming the folder)."""
    base = tmp_path_factory.mktemp("round4")
    klass = (base / "class").resolve()
    for learner, files in {"alice": {"solution": MAIN, "helper": HELPER}, "bob": {"solution": ABORTS},
                           "carol": {"solution": SLEEPS}, "dave": {"solution": IMPORT_FAILS},
                           "erin": {"notes": "X = 1\n", "more": "Y = 2\n"}}.items():
        (klass / learner).mkdir(parents=True)
        for name, text in files.items():
            (klass / learner / f"{name}.py").write_text(textwrap.dedent(text))
    out = base / "out"
    run = run_grader("grade", str(klass), "--out", str(out), "--problem", "tied_lm_head", "--jobs", "2", *FAST,
                     timeout=300)
    assert run.code == 1, run.stderr
    with open(out / "gradebook.csv", newline="") as fh:
        rows = {r["learner"]: r for r in csv.DictReader(fh)}
    reports = {learner: Report.from_json(json.loads(report_path(out, learner).read_text())) for learner in rows}
    return klass, out, reports, rows


def test_learner_formats_of_a_class_name_no_path_of_the_machine(graded):
    """Every format rendered for the learner from the class's reports (absolute paths, as under
    the Slurm template), the feedback files and the gradebook's messages hold none of the class
    folder, the repository, the grader's package, the venv or the Python install."""
    klass, out, reports, rows = graded
    paths = machine_paths(klass)
    assert set(reports) == {"alice", "bob", "carol", "dave", "erin"}
    for learner, report in reports.items():
        for fmt in FORMATS:
            text = reporter(fmt).render(report, audience="learner")
            text = text if isinstance(text, str) else json.dumps(text)
            assert not leaks(text, paths), (learner, fmt, leaks(text, paths))
    for path in (out / "feedback").iterdir():
        assert not leaks(path.read_text(), paths), (path.name, leaks(path.read_text(), paths))
    for learner, row in rows.items():
        assert not leaks(row["message"], paths), (learner, row["message"])
    # what an LMS import hands back: the gradebook's message
    from grader.batch.gradebook import read_gradebook
    from grader.export import generic_csv, moodle_csv
    gradebook = read_gradebook(out / "gradebook.csv")
    for text, _ in (moodle_csv(gradebook, None, "hw"), generic_csv(gradebook, None)):
        assert not leaks(text, paths), leaks(text, paths)


def test_learner_reports_name_files_relative_to_the_learners_folder(graded):
    """alice's helper and folder, her traceback and her mount table as she has them; the grader's
    own files by neutral names; the instructor's report keeps the full paths."""
    klass, _, reports, rows = graded
    learner = json.loads(reporter("json").render(reports["alice"], audience="learner"))
    stdout = learner["output"]["stdout"]
    assert "HELPER_FILE helper.py\n" in stdout and "MAIN_DIR .\n" in stdout, stdout[:400]
    assert learner["submission"] == "solution.py"
    details = "\n".join(c["failure"]["traceback"] for c in learner["cases"] if c.get("failure"))
    assert 'File "solution.py", line' in details and 'File "helper.py", line' in details, details[:600]
    assert "<site-packages>" in stdout, stdout   # sys.path, in every tier
    text = reporter("text").render(reports["alice"], audience="learner")
    assert "ValueError: boom in helper.py" in text, text
    # the instructor's report keeps the class's paths
    instructor = json.dumps(reports["alice"].to_json())
    assert f"boom in {klass / 'alice' / 'helper.py'}" in instructor
    # the gradebook's message (Moodle's feedback) of an import failure and of a discovery note
    assert "cannot start in ." in rows["dave"]["message"], rows["dave"]["message"]
    assert "erin" in rows["erin"]["message"] and str(klass) not in rows["erin"]["message"]


def test_a_crash_names_the_graders_files_by_neutral_names(graded):
    """faulthandler's frames of an abort name ``_child.py`` and the standard library: neither by
    the machine's path."""
    _, _, reports, _ = graded
    stderr = json.loads(reporter("json").render(reports["bob"], audience="learner"))["output"]["stderr"]
    assert "Fatal Python error: Aborted" in stderr
    assert '"<grader>/_child.py"' in stderr and 'File "solution.py", line' in stderr, stderr[:800]


def test_prints_before_an_abort_or_a_timeout_reach_the_report(graded):
    """The child's stdout is unbuffered (``python -I -u``): what was printed before the process
    was killed (at a timeout) or died (an abort) is in the report. Before, both were empty."""
    _, _, reports, _ = graded
    bob, carol = reports["bob"], reports["carol"]
    assert "crash" in bob.failure_kinds and "timeout" in carol.failure_kinds
    assert "PRINTED_BEFORE_THE_ABORT" in bob.output["stdout"], bob.output
    assert "PRINTED_BEFORE_THE_TIMEOUT" in carol.output["stdout"], carol.output
    for report in (bob, carol):   # and the learner is shown it
        assert "PRINTED_BEFORE_THE" in reporter("text").render(report, audience="learner")


def test_a_check_in_the_fallback_tier_with_an_absolute_problems_dir(tmp_path, monkeypatch):
    """``grader check`` of a multi-file submission at an absolute path, in the ``rlimits`` tier
    (no namespace: the child sees the host's mount table and paths), with ``--problems-dir ABS``:
    the learner's JSON and text name the problems folder by its last part and no machine path."""
    from grader import cli, flags
    from grader.check import check_submission
    from grader.spec import find_problem, load_problem

    folder = (tmp_path / "course" / "alice").resolve()
    folder.mkdir(parents=True)
    (folder / "helper.py").write_text(textwrap.dedent(HELPER))
    (folder / "solution.py").write_text(textwrap.dedent(MAIN))
    problems = ROOT / "problems"
    monkeypatch.setenv("GRADER_SANDBOX_TIER", "rlimits")
    # as the platform templates run it: the file's absolute path, and --shown naming it as submitted
    args = cli.build_parser().parse_args(["check", str(folder / "solution.py"), "--problem", "tied_lm_head",
                                          "--problems-dir", str(problems), "--max-examples", "1", "--no-shrink",
                                          "--shown", "solution.py"])
    opts = flags.options_from_args(args)
    opts.submission_shown, opts.submission_named = args.shown, True      # what cmd_check makes of --shown
    report = check_submission(args.submission, load_problem(find_problem(args.problem, args.problems_dir)), opts)
    assert report.environment["sandbox"] == "rlimits"
    paths = machine_paths(folder.parent, problems)
    data = json.loads(reporter("json").render(report, audience="learner"))
    text = reporter("text").render(report, audience="learner")
    for rendered in (json.dumps(data), text):
        assert not leaks(rendered, paths), leaks(rendered, paths)
    replays = [c["replay"] for c in data["cases"] if c.get("replay")]
    assert replays and all(" --problems-dir problems " in r and r.startswith("grader check solution.py ")
                           for r in replays), replays
    assert "HELPER_FILE helper.py\n" in data["output"]["stdout"]


def test_the_graders_temporary_folder_is_named_neutrally(monkeypatch, tmp_path):
    """An attacker's finding: with TMPDIR=/srv/SECRETCLASS_2026_tmp the rlimits tier's working
    folders (the child's cwd, HOME and TMPDIR) came back in feedback 14 times."""
    import tempfile
    from grader.reports.view import learner_paths
    secret = tmp_path / "SECRETCLASS_2026_tmp"
    secret.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(secret))
    text = f"cwd: {secret}/grader-run-1234-abcd\nHOME={secret}/grader-run-1234-abcd"
    out = learner_paths(text, "class/alice/solution.py", by_name=True)
    # the run's own working folder by its role (attack round 31), under any TMPDIR
    assert "SECRETCLASS" not in out and out == "cwd: <workdir>\nHOME=<workdir>", out
