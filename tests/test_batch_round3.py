"""The batch side of round three, found by an attacker helper after the fixes: what a learner's
file names and folder layout could do to other learners' rows and to the grader's outputs."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from grader.batch import discovery, pool
from grader.check import load_submission
from grader.errors import GraderError

#: run_grader runs grader.cli.main in this process (tests/conftest.py): these tests read the
#: CLI's findings, exit codes and reports; each submission still runs in its sandboxed child
pytestmark = pytest.mark.cli_in_process

CORRECT = "def tied_lm_head(hidden, embedding_matrix):\n    return hidden @ embedding_matrix.T\n"


def test_a_folder_swapped_for_a_link_after_discovery_is_refused(tmp_path, monkeypatch):
    cls = tmp_path / "class"
    (cls / "zed" / "reference").mkdir(parents=True)
    (cls / "zed" / "reference" / "tied_lm_head.py").write_text("def tied_lm_head(h, e):\n    return 0\n")
    (cls / "alice").mkdir()
    (cls / "alice" / "solution.py").write_text(CORRECT)
    elsewhere = tmp_path / "instructor" / "reference"
    elsewhere.mkdir(parents=True)
    (elsewhere / "tied_lm_head.py").write_text(CORRECT)
    subs = {s.learner: s for s in discovery.enumerate_learners([str(cls)])}
    zed = subs["zed"]
    path = discovery.anchored(zed)
    os.rename(cls / "zed" / "reference", cls / "zed" / "old")        # the learner's swap, after discovery
    os.symlink(elsewhere, cls / "zed" / "reference")
    monkeypatch.setenv("GRADER_STRICT_PATHS", "1")
    loaded = load_submission(path)
    assert not loaded.data and "replaced by a symbolic link" in (loaded.fault or ""), loaded.fault
    honest = load_submission(discovery.anchored(subs["alice"]))
    assert honest.fault is None and honest.data == CORRECT.encode()


def test_a_learner_given_by_path_keeps_their_id(tmp_path):
    cls = tmp_path / "class"
    for name in ("alice", "bob"):
        (cls / name).mkdir(parents=True)
        (cls / name / "solution.py").write_text(CORRECT)
    (cls / "aaron" / "bob").mkdir(parents=True)
    (cls / "aaron" / "aaron.py").write_text(CORRECT)
    (cls / "aaron" / "alice.py").write_text("def tied_lm_head(h, e):\n    return 0\n")
    (cls / "aaron" / "bob" / "s.py").write_text("raise SystemExit\n")
    paths = [str(cls / n) + "/" for n in ("aaron", "alice", "bob")]        # grade class/*/
    subs = {s.learner: s for s in discovery.enumerate_learners(paths)}
    assert subs["alice"].path == cls / "alice" / "solution.py", subs["alice"]
    assert subs["bob"].path == cls / "bob" / "solution.py", subs["bob"]
    assert "alice-2" in subs and subs["alice-2"].path == cls / "aaron" / "alice.py"


def test_learner_ids_cannot_collide_through_escaping():
    assert discovery.learner_id("lat\\xe9") != discovery.learner_id("lat\udce9")
    assert discovery.learner_id("lat\udce9") == "lat\\xe9"


def test_the_output_folder_is_no_learner_and_holds_no_link(tmp_path):
    cls = tmp_path / "class"
    for name in ("alice", "grades"):
        (cls / name).mkdir(parents=True)
        (cls / name / "solution.py").write_text(CORRECT)
    ids = [s.learner for s in discovery.enumerate_learners([str(cls)], exclude=[str(cls / "grades")])]
    assert ids == ["alice"]
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, cls / "grades" / "feedback")
    with pytest.raises(GraderError, match="symbolic link"):
        pool._refuse_links(cls / "grades")
    os.unlink(cls / "grades" / "feedback")
    os.mkfifo(cls / "grades" / "settings.json")
    with pytest.raises(GraderError, match="special file"):
        pool._refuse_links(cls / "grades")


def test_grade_refuses_an_output_folder_with_links_in_one_line(tmp_path):
    cls = tmp_path / "class"
    (cls / "alice").mkdir(parents=True)
    (cls / "alice" / "solution.py").write_text(CORRECT)
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(tmp_path / "nowhere.csv", out / "gradebook.csv")
    from .conftest import run_grader   # in process: refused before any check starts
    res = run_grader("grade", str(cls), "--problem", "tied_lm_head", "--out", str(out), timeout=120, cwd=tmp_path)
    assert res.code == 2 and "symbolic link" in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert not (tmp_path / "nowhere.csv").exists()
