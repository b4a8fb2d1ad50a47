"""``grader grade --roster`` (issue 37): every learner on the class list gets a row; a learner
who submitted nothing is "no submission" with 0 points instead of vanishing from the gradebook
and every export; a submission of someone not on the list is graded and named in a warning."""
from __future__ import annotations

import csv

import pytest

from .conftest import ROOT, SUBMISSIONS, run_grader


#: run_grader runs grader.cli.main in this process (tests/conftest.py): these tests read the
#: CLI's findings, exit codes and reports; each submission still runs in its sandboxed child
pytestmark = pytest.mark.cli_in_process
FAST = ["--max-examples", "2", "--no-shrink", "--problem", "tied_lm_head"]
CANVAS = ("Student,ID,SIS User ID,SIS Login ID,Section\n"
          "    Points Possible,,,,\n"
          "Alice L,1,S1,alice,A\n"
          "Bob B,2,S2,Bob,A\n"
          "Carol C,3,S3,carol,A\n")


def test_every_roster_learner_has_a_row_and_strangers_are_named(tmp_path):
    klass = tmp_path / "class"
    klass.mkdir()
    (klass / "alice.py").write_text((SUBMISSIONS / "correct_numpy.py").read_text())
    (klass / "bob.py").write_text((SUBMISSIONS / "wrong_tolerance_softmax.py").read_text())
    (klass / "zed.py").write_text((SUBMISSIONS / "correct_numpy.py").read_text())
    (tmp_path / "roster.csv").write_text(CANVAS)
    out = tmp_path / "out"
    run = run_grader("grade", str(klass), "--roster", str(tmp_path / "roster.csv"), "--out", str(out), *FAST)
    assert run.code == 1, run.stderr
    with open(out / "gradebook.csv", newline="") as fh:
        rows = {r["learner"]: r for r in csv.DictReader(fh)}
    assert set(rows) == {"alice", "bob", "carol", "zed"}
    assert rows["carol"]["score"] == "0" and rows["carol"]["passed"] == "false" and rows["carol"]["submission"] == ""
    assert "no submission" in rows["carol"]["message"]
    # nothing submitted is its own kind, never a failure of code (an instructor read "import")
    assert rows["carol"]["kinds"] == "missing" and rows["zed"]["kinds"] == ""
    assert rows["alice"]["passed"] == "true" and rows["zed"]["passed"] == "true"
    warning = [line for line in run.stderr.splitlines() if "not on the roster" in line]
    assert len(warning) == 1 and "zed" in warning[0] and "alice" not in warning[0]
    feedback = next((out / "feedback").glob("carol-*.txt")).read_text()
    assert "None" not in feedback and "no submission" in feedback
    assert feedback.splitlines()[0].endswith("  (no submission)"), feedback   # not a header ending in spaces
    # summary.md counts carol as "with no submission", never among the failure kinds (a
    # newcomer's instructor read her as a failure of kind "import")
    summary = (out / "summary.md").read_text()
    kinds = summary.split("## Most common failure kinds", 1)[1].split("##", 1)[0]
    assert "1 submitted nothing" in summary and "import" not in kinds and "carol" not in kinds, kinds
    # carol is no submission that failed: 4 learners, and one sent none (summary.html's words)
    assert "4 learners: **2 passed**, 1 failed, 1 submitted nothing." in summary, summary
    # the statistics are over the 4 learners, carol at 0 (as the distribution and summary.html):
    # said so, not read as the submissions' own mean (a trial)
    scores = sorted(float(r["score"]) for r in rows.values())
    mean = sum(scores) / 4
    assert "Score of all 4 learners (the learner who submitted nothing counted as 0): mean " in summary, summary
    from grader.reports.common import points
    assert f"nothing counted as 0): mean {points(mean)}, " in summary, (mean, summary)
    assert "graded 3 submissions: 2 passed, 1 failed (0 could not be graded); 1 learner submitted nothing" \
        in run.stdout, run.stdout
    slowest = summary.split("## Slowest submissions", 1)[1]
    assert "carol" not in slowest and "import" not in slowest, slowest
    # summary.html marks zed, whom the LMS exports leave out (a newcomer's instructor saw an
    # ordinary row: the warning was on stderr only), from the record submitted.json keeps
    from grader.batch.times import off_roster
    assert off_roster(out) == ["zed"]
    page = (out / "summary.html").read_text()
    assert "4 learners: <b>2 passed</b>, 1 failed, 1 submitted nothing, 1 not on the roster." in page
    assert 'id="off-roster"' in page and page.count("(not on the roster)") == 1
    marked = [line for line in page.splitlines() if "(not on the roster)" in line]
    assert len(marked) == 1 and ">zed</a>" in marked[0], marked


def test_the_shards_learners_not_on_the_roster_are_merged(tmp_path):
    """``grader merge`` joins the shards' records of who is not on the roster, as their times."""
    from grader.batch import times
    from grader.batch.discovery import Submission
    first, second, merged = tmp_path / "a", tmp_path / "b", tmp_path / "m"
    for folder in (first, second, merged):
        folder.mkdir()
    times.record(first, [Submission(learner="zed", path=None), Submission(learner="alice", path=None)], None,
                 not_on_roster=["zed", "yan"])    # yan is in the other shard: not this one's
    times.record(second, [Submission(learner="yan", path=None)], None, not_on_roster=["zed", "yan"])
    assert times.off_roster(first) == ["zed"] and times.off_roster(second) == ["yan"]
    times.merge(merged, [first, second])
    assert times.off_roster(merged) == ["yan", "zed"]
    times.record(first, [Submission(learner="zed", path=None)], None)   # no roster: nothing recorded
    assert times.off_roster(first) == []


def test_a_roster_without_an_id_column_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "alice.py").write_text("x = 1\n")
    (tmp_path / "class" / "bob.py").write_text("x = 2\n")
    (tmp_path / "roster.csv").write_text("Name,Section\nAlice,A\n")
    run = run_grader("grade", str(tmp_path / "class"), "--roster", str(tmp_path / "roster.csv"),
                     "--out", str(tmp_path / "out"), *FAST)
    assert run.code == 2 and run.stderr.count("\n") == 1 and "--key" in run.stderr
    plain = tmp_path / "plain.csv"
    plain.write_text("Name,Section\nalice,A\nbob,B\n")
    run = run_grader("grade", str(tmp_path / "class"), "--roster", str(plain), "--key", "Name",
                     "--out", str(tmp_path / "out2"), *FAST)
    assert run.code == 1 and "not on the roster" not in run.stderr, run.stderr


def test_grade_says_which_bundled_problem_a_problems_dir_replaces(tmp_path, capsys, monkeypatch):
    """A fresh instructor graded with a spec copy in --problems-dir and was not told it replaced
    the bundled one (check and problems say it, once, on stderr); grade now says it too."""
    import argparse
    import shutil

    from grader import flags
    from grader.batch import pool
    mine = tmp_path / "mine"
    mine.mkdir()
    shutil.copy(ROOT / "problems" / "tied_lm_head.yaml", mine / "tied_lm_head.yaml")
    monkeypatch.setattr(flags, "_said_replaced", set())
    args = argparse.Namespace(assignment=None, problem="tied_lm_head", problems_dir=str(mine), paths=[str(tmp_path)])
    try:
        pool._problem(args)
    except Exception:  # noqa: BLE001 - the note comes before the spec is loaded
        pass
    assert "replaces the bundled one" in capsys.readouterr().err
