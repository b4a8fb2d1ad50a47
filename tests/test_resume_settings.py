"""The settings record of a ``grader grade --out`` folder (``settings.json``): ``--resume`` into a
folder graded with other settings is refused (exit 2, one line naming what differs, nothing of
the folder changed); ``grader merge`` refuses an incomplete, repeated or disagreeing set of shards;
and a learner's main file that does not parse, passed over for another, is named in their row,
report and feedback.

Kept fast: one small class graded once per module (``--max-examples 2 --no-shrink``); the
refusals run in process (they happen before anything is graded).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader import cli
from grader.batch import discovery, gradebook
from grader.batch.settings import SETTINGS

from .conftest import SUBMISSIONS, run_grader

#: run_grader runs grader.cli.main in this process (tests/conftest.py): these tests read the
#: CLI's findings, exit codes and reports; each submission still runs in its sandboxed child
pytestmark = pytest.mark.cli_in_process

CORRECT = (SUBMISSIONS / "correct_numpy.py").read_text()
SYNTAX = (SUBMISSIONS / "wrong_import_syntax.py").read_text()
FAST = ["--max-examples", "2", "--no-shrink", "--timeout", "5"]
BROKEN_DEF = "import numpy as np\n\ndef tied_lm_head(hidden, embedding_matrix)\n    return hidden @ embedding_matrix.T\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative path -> bytes)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def main(argv: list[str], capsys) -> tuple[int, str, str]:
    try:
        code = cli.main(argv)
    except SystemExit as exc:
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def klass(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("klass")
    write(root / "class" / "alice.py", CORRECT)
    write(root / "class" / "carol.py", SYNTAX)
    return root / "class"


@pytest.fixture(scope="module")
def graded(tmp_path_factory, klass) -> Path:
    """The class graded once, unsharded (exit 1: carol's file does not parse)."""
    out = tmp_path_factory.mktemp("graded") / "r1"
    run = run_grader("grade", str(klass), "--problem", "tied_lm_head", "--out", str(out), *FAST)
    assert run.code == 1, run.stderr
    return out


@pytest.fixture(scope="module")
def shards(tmp_path_factory, klass) -> list[Path]:
    """The class graded as --shard 1/2 and 2/2."""
    root = tmp_path_factory.mktemp("shards")
    found = []
    for i in (1, 2):
        out = root / f"shard{i}"
        run = run_grader("grade", str(klass), "--problem", "tied_lm_head", "--shard", f"{i}/2", "--out", str(out),
                         *FAST)
        assert run.code in (0, 1), run.stderr
        found.append(out)
    return found


@pytest.fixture
def r1(graded, tmp_path) -> Path:
    """A private copy of the graded folder, for a test to resume into."""
    return Path(shutil.copytree(graded, tmp_path / "r1"))


def test_the_folder_records_the_settings_that_decide_grades(graded):
    record = json.loads((graded / SETTINGS).read_text())
    settings = record["settings"]
    assert settings["problem"] == "tied_lm_head" and settings["max_examples"] == 2 and settings["seed"] == 0
    assert settings["seed_secret"] is False and settings["shard"] is None and settings["audience"] == "instructor"
    assert settings["timeout"] == 5 and settings["memory_mb"] == 4096 and settings["siblings"] is True
    assert len(settings["spec"]) == 64 and settings["grader"]
    assert "jobs" not in settings and "verbosity" not in settings


CHANGED = [
    (["--problem", "masked_mean_pool"], ["--problem tied_lm_head there, masked_mean_pool now"]),
    (["--seed", "5", "--max-examples", "3"], ["--seed 0 there, 5 now", "--max-examples 2 there, 3 now"]),
    (["--timeout", "7"], ["--timeout 5 there, 7 now"]),
    (["--memory-mb", "2048"], ["--memory-mb 4096 there, 2048 now"]),
    (["--audience", "learner"], ["--audience instructor there, learner now"]),
    (["--no-siblings"], ["siblings"]),
    (["--framework", "numpy"], ["--framework"]),
    (["--shard", "1/3"], ["--shard none there, 1/3 now"]),
]


@pytest.mark.parametrize("extra,says", CHANGED, ids=[" ".join(e) for e, _ in CHANGED])
def test_resume_with_other_settings_is_refused_and_changes_nothing(r1, klass, extra, says, capsys):
    before = snapshot(r1)
    base = ["grade", str(klass), "--out", str(r1), "--resume", *FAST]
    if "--problem" not in extra:
        base += ["--problem", "tied_lm_head"]
    code, out, err = main(base + extra, capsys)
    assert code == 2 and err.count("\n") == 1 and err.startswith("grader: error: "), err
    assert "other settings" in err and all(s in err for s in says), err
    assert out == "" and snapshot(r1) == before


def test_resume_with_a_seed_secret_is_refused_and_never_shows_it(r1, klass, tmp_path, capsys):
    secret = write(tmp_path / "secret.txt", "hunter2-very-secret")
    before = snapshot(r1)
    code, _, err = main(["grade", str(klass), "--problem", "tied_lm_head", "--out", str(r1), "--resume",
                         "--seed-secret", str(secret), *FAST], capsys)
    assert code == 2 and err.count("\n") == 1 and "seed secret" in err and "hunter2" not in err, err
    assert snapshot(r1) == before


def test_resume_with_the_same_settings_ignores_jobs_and_verbosity(r1, klass, capsys):
    mtimes = {p: p.stat().st_mtime_ns for p in (r1 / "reports").iterdir()}
    code, out, err = main(["grade", str(klass), "--problem", "tied_lm_head", "--out", str(r1), "--resume",
                           "--jobs", "3", "-q", *FAST], capsys)
    assert code == 1, err
    assert "graded 2 submissions" in out
    assert {p: p.stat().st_mtime_ns for p in (r1 / "reports").iterdir()} == mtimes  # nothing regraded


def test_an_old_folder_without_a_record_is_checked_against_its_reports(r1, klass, capsys):
    """A folder written before the record: its reports tell the problem, grader version, seed
    and max-examples; a resume that agrees is kept (and the record written), one that does not
    is refused."""
    (r1 / SETTINGS).unlink()
    before = snapshot(r1)
    code, _, err = main(["grade", str(klass), "--problem", "tied_lm_head", "--out", str(r1), "--resume",
                         "--max-examples", "3", "--no-shrink", "--timeout", "5"], capsys)
    assert code == 2 and err.count("\n") == 1 and "--max-examples 2 there, 3 now" in err, err
    assert snapshot(r1) == before
    code, out, err = main(["grade", str(klass), "--problem", "tied_lm_head", "--out", str(r1), "--resume", *FAST],
                          capsys)
    assert code == 1 and "graded 2 submissions" in out, err
    assert f"no {SETTINGS}" in err
    assert json.loads((r1 / SETTINGS).read_text())["settings"]["max_examples"] == 2


def test_a_broken_record_is_refused(r1, klass, capsys):
    (r1 / SETTINGS).write_text("{not json")
    code, _, err = main(["grade", str(klass), "--problem", "tied_lm_head", "--out", str(r1), "--resume", *FAST],
                        capsys)
    assert code == 2 and err.count("\n") == 1 and SETTINGS in err, err


# -- merge -----------------------------------------------------------------------------------

def test_merge_refuses_a_missing_shard(shards, tmp_path, capsys):
    code, out, err = main(["merge", str(shards[0]), "--out", str(tmp_path / "m")], capsys)
    assert code == 2 and err.count("\n") == 1 and "shard 2/2 is missing" in err, err
    assert not (tmp_path / "m").exists()


def test_merge_refuses_a_repeated_shard(shards, tmp_path, capsys):
    again = shutil.copytree(shards[0], tmp_path / "again")
    code, _, err = main(["merge", str(shards[0]), str(again), str(shards[1]), "--out", str(tmp_path / "m")], capsys)
    assert code == 2 and err.count("\n") == 1 and "shard 1/2 is given twice" in err, err
    assert not (tmp_path / "m").exists()


def test_merge_refuses_shards_of_other_settings_or_counts(shards, graded, tmp_path, capsys):
    other = Path(shutil.copytree(shards[1], tmp_path / "other"))
    record = json.loads((other / SETTINGS).read_text())
    record["settings"]["max_examples"] = 3
    (other / SETTINGS).write_text(json.dumps(record))
    code, _, err = main(["merge", str(shards[0]), str(other), "--out", str(tmp_path / "m")], capsys)
    assert code == 2 and err.count("\n") == 1 and "different settings" in err and "--max-examples 2" in err, err
    # a shard with a whole (unsharded) run
    code, _, err = main(["merge", str(shards[0]), str(graded), "--out", str(tmp_path / "m")], capsys)
    assert code == 2 and err.count("\n") == 1 and "not a shard" in err, err
    # shards of another count
    record = json.loads((shards[1] / SETTINGS).read_text())
    record["settings"]["shard"] = "2/3"
    (other / SETTINGS).write_text(json.dumps(record))
    code, _, err = main(["merge", str(shards[0]), str(other), "--out", str(tmp_path / "m")], capsys)
    assert code == 2 and err.count("\n") == 1 and "1/2" in err and "2/3" in err, err
    assert not (tmp_path / "m").exists()


def test_merge_of_every_shard_records_the_whole_run(shards, graded, tmp_path, capsys):
    code, out, err = main(["merge", str(shards[0]), str(shards[1]), "--out", str(tmp_path / "m")], capsys)
    assert code == 1, err
    assert "merged 2 submissions" in out
    merged = json.loads((tmp_path / "m" / SETTINGS).read_text())["settings"]
    assert merged == json.loads((graded / SETTINGS).read_text())["settings"]  # shard: none


def test_unsharded_folders_without_a_record_merge_as_before(graded, tmp_path, capsys):
    old = Path(shutil.copytree(graded, tmp_path / "old"))
    (old / SETTINGS).unlink()
    code, out, err = main(["merge", str(old), "--out", str(tmp_path / "m")], capsys)
    assert code == 1 and "merged 2 submissions" in out, err
    assert not (tmp_path / "m" / SETTINGS).exists()


# -- the Slurm template ----------------------------------------------------------------------

def test_slurm_rerun_with_another_shard_count_is_refused(klass, tmp_path):
    """The template always resumes: a 3-task rerun into the folders of a 2-task run stops at once
    (exit 2, the merge never runs) instead of keeping the 2-shard rows."""
    script = Path(__file__).resolve().parent.parent / "templates" / "slurm" / "grade-shard.sbatch"
    out = tmp_path / "grades"
    env = {**os.environ, "GRADER_SUBMISSIONS": str(klass), "GRADER_OUT": str(out), "GRADER_PROBLEM": "tied_lm_head",
           "GRADER": f"{sys.executable} -I -m grader", "GRADER_ARGS": " ".join(FAST), "SLURM_ARRAY_TASK_MIN": "0",
           "SLURM_ARRAY_TASK_ID": "0"}

    def task(count: int) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                              env={**env, "SLURM_ARRAY_TASK_COUNT": str(count)})

    assert task(2).returncode == 0
    before = snapshot(out / "shard-1")
    again = task(3)
    assert again.returncode == 2 and "--shard 1/2 there, 1/3 now" in again.stderr, again.stderr
    assert snapshot(out / "shard-1") == before


def test_slurm_submit_refuses_an_out_of_another_shard_count(tmp_path):
    script = Path(__file__).resolve().parent.parent / "templates" / "slurm" / "submit.sh"
    bin_dir, log = tmp_path / "bin", tmp_path / "sbatch.log"
    write(bin_dir / "sbatch", f'#!/bin/sh\necho "$@" >> {log}\necho 4242\n').chmod(0o755)
    write(bin_dir / "sinfo", '#!/bin/sh\necho 8\n').chmod(0o755)  # nodes of 8 CPUs: a task's 4 fit (a real cluster may have fewer)
    (tmp_path / "class").mkdir()
    write(tmp_path / "out" / "shard-1" / SETTINGS,
          json.dumps({"settings": {"shard": "1/2"}}, indent=2))  # as grade writes it
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}

    def submit(shards: int) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", str(script), "class", "out"], cwd=tmp_path, capture_output=True, text=True,
                              timeout=60, env={**env, "GRADER_SHARDS": str(shards)})

    for shards in (3, 1):
        bad = submit(shards)
        assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "another GRADER_SHARDS" in bad.stderr
        assert not log.exists()  # nothing queued
    assert submit(2).returncode == 0 and log.exists()


# -- a learner's main file that does not parse ------------------------------------------------

def test_discover_names_a_main_file_passed_over_because_it_does_not_parse(tmp_path):
    write(tmp_path / "class" / "dave" / "solution.py", BROKEN_DEF)
    write(tmp_path / "class" / "dave" / "old_draft.py", CORRECT)
    write(tmp_path / "class" / "eve" / "sol\x1b[31m\u202e.py", BROKEN_DEF)  # a hostile name
    write(tmp_path / "class" / "eve" / "draft.py", CORRECT)
    write(tmp_path / "class" / "fay" / "solution.py", CORRECT)  # a helper beside it: no note
    write(tmp_path / "class" / "fay" / "helper.py", "def scale(x):\n    return 2 * x\n")
    found = {s.learner: s for s in discovery.discover([str(tmp_path / "class")], ["tied_lm_head"])}
    dave = found["dave"]
    assert dave.path.name == "old_draft.py"
    assert "solution.py" in dave.note and "does not parse" in dave.note and "line 3" in dave.note, dave.note
    eve = found["eve"]
    assert eve.path.name == "draft.py" and "\x1b" not in eve.note and "\u202e" not in eve.note
    assert "sol\\x1b[31m\\u202e.py" in eve.note, eve.note
    assert found["fay"].note is None and found["fay"].path.name == "solution.py"


def test_the_passed_over_file_is_named_in_row_report_and_feedback(tmp_path):
    write(tmp_path / "class" / "dave" / "solution.py", BROKEN_DEF)
    write(tmp_path / "class" / "dave" / "old_draft.py", CORRECT)
    write(tmp_path / "class" / "zed.py", CORRECT)
    out = tmp_path / "out"
    run = run_grader("grade", str(tmp_path / "class"), "--problem", "tied_lm_head", "--out", str(out), *FAST)
    assert run.code == 0, run.stderr
    rows = {r.learner: r for r in gradebook.read_gradebook(out / "gradebook.csv")}
    assert rows["dave"].submission.endswith("old_draft.py") and rows["dave"].passed
    assert "solution.py" in rows["dave"].message and "does not parse" in rows["dave"].message
    assert "note" not in rows["zed"].message
    env = json.loads(gradebook.report_path(out, "dave").read_text())["environment"]
    assert "solution.py" in env["discovery_note"]
    feedback = (out / "feedback" / gradebook.feedback_name("dave")).read_text()
    assert "solution.py" in feedback and "does not parse" in feedback


# -- --resume keeps a row only for the files it graded -----------------------------------------

def test_resume_grades_again_exactly_the_learners_whose_files_changed(tmp_path, capsys):
    """A row is kept by --resume only while the learner's files are those it graded (the digest
    of the main file and the helpers it took along, ``environment.submission_sha256``): a changed
    main file or helper is graded again, an unchanged learner is not, and a report that records
    no digest is graded again. (Before: every row whose report existed was kept.)"""
    klass = tmp_path / "class"
    write(klass / "alice.py", CORRECT)
    write(klass / "carol.py", SYNTAX)
    write(klass / "bob" / "solution.py", "from helper import scale\n" + CORRECT)
    write(klass / "bob" / "helper.py", "def scale(x):\n    return 2 * x\n")
    out = tmp_path / "out"
    argv = ["grade", str(klass), "--problem", "tied_lm_head", "--out", str(out), "--jobs", "2", *FAST]
    code, _, err = main(argv, capsys)
    assert code == 1, err

    def mtimes() -> dict[str, int]:
        return {name: gradebook.report_path(out, name).stat().st_mtime_ns for name in ("alice", "bob", "carol")}

    first = mtimes()
    digests = {name: json.loads(gradebook.report_path(out, name).read_text())["environment"].get("submission_sha256")
               for name in first}
    write(klass / "carol.py", CORRECT)                                    # the main file changed
    write(klass / "bob" / "helper.py", "def scale(x):\n    return 3 * x\n")  # only a helper changed
    code, out_text, err = main(argv + ["--resume"], capsys)
    assert code == 0, err
    second = mtimes()
    assert second["alice"] == first["alice"]
    assert second["bob"] != first["bob"] and second["carol"] != first["carol"]
    assert "grader: note: grading carol again: the submission changed since it was graded" in err
    assert "grading bob again" in err and "grading alice again" not in err
    rows = {r.learner: r for r in gradebook.read_gradebook(out / "gradebook.csv")}
    assert rows["carol"].passed and len(rows) == 3 and "graded 3 submissions: 3 passed" in out_text

    assert len({d for d in digests.values() if d}) == 3  # one digest per learner's files
    code, _, err = main(argv + ["--resume"], capsys)  # nothing changed: nothing graded again
    assert code == 0 and mtimes() == second and "grader: note: grading" not in err, err

    report = json.loads(gradebook.report_path(out, "alice").read_text())
    del report["environment"]["submission_sha256"]  # as an older grader wrote it
    gradebook.report_path(out, "alice").write_text(json.dumps(report))
    code, _, err = main(argv + ["--resume"], capsys)
    assert code == 0 and "grading alice again: its report records no digest" in err, err
    assert mtimes()["alice"] != second["alice"] and mtimes()["bob"] == second["bob"]
