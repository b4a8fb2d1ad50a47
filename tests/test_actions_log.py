"""A text report printed in a GitHub Actions log carries no workflow command of the learner's
(reports.text.actions_safe): a line of theirs that the runner would run (``::error ...::``,
``::add-mask::``) is fenced by ``::stop-commands::`` with an unguessable token."""
from __future__ import annotations

import re

import pytest

from grader.reports.text import actions_safe

from .conftest import run_grader

pytestmark = pytest.mark.cli_in_process

FORGED = "::error file=README.md,line=1::your grade is 10/10"

RAISES = f'''import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    raise ValueError("first line\\n   {FORGED}")
'''


@pytest.mark.parametrize("line", [FORGED, "   ::add-mask::x", "##[error]old style", "::stop-commands::abc"])
def test_a_line_the_runner_would_run_is_fenced_in_actions(line):
    text = f"report\n{line}\nend\n"
    fenced = actions_safe(text, {"GITHUB_ACTIONS": "true"})
    first, *middle, last = fenced.splitlines()
    token = re.fullmatch(r"::stop-commands::([0-9a-f]{32})", first).group(1)
    assert last == f"::{token}::" and "\n".join(middle) + "\n" == text
    assert actions_safe(text, {"GITHUB_ACTIONS": "true"}) != fenced     # a new token each time


def test_outside_actions_or_without_a_command_line_nothing_changes():
    assert actions_safe(f"a\n{FORGED}\n", {}) == f"a\n{FORGED}\n"
    assert actions_safe("a: b :: c\n", {"GITHUB_ACTIONS": "true"}) == "a: b :: c\n"


def test_a_learners_exception_message_runs_no_command_in_the_log(tmp_path):
    sub = tmp_path / "submission.py"
    sub.write_text(RAISES)
    args = ("check", str(sub), "--problem", "tied_lm_head", "--max-examples", "2", "--no-shrink")
    run = run_grader(*args, env={"GITHUB_ACTIONS": "true"})
    assert run.code == 1
    lines = run.stdout.splitlines()
    assert any(line.strip().startswith("::error file=README.md") for line in lines), run.stdout[-2000:]
    token = re.fullmatch(r"::stop-commands::([0-9a-f]{32})", lines[0]).group(1)
    assert lines[-1] == f"::{token}::"
    plain = run_grader(*args, env={"GITHUB_ACTIONS": ""})
    assert not plain.stdout.startswith("::stop-commands::")
    json_run = run_grader(*args, "--format", "json", env={"GITHUB_ACTIONS": "true"})
    assert json_run.stdout.lstrip().startswith("{")


def test_a_report_written_to_dev_stdout_is_fenced_and_the_link_stays(tmp_path):
    """Round 33: ``--output /dev/stdout`` went around the fence, and, with stdout a regular file,
    renamed a temporary file over the /dev/stdout link. Both through a real process: its stdout
    is a file here."""
    import os
    import subprocess
    import sys
    sub = tmp_path / "submission.py"
    sub.write_text(RAISES)
    log = tmp_path / "log.txt"
    link = tmp_path / "stdout-link"
    link.symlink_to("/proc/self/fd/1")
    before = os.lstat("/dev/stdout")
    with open(log, "w") as out:
        proc = subprocess.run([sys.executable, "-I", "-m", "grader", "check", str(sub), "--problem", "tied_lm_head",
                               "--max-examples", "2", "--no-shrink", "--output", str(link)],
                              stdout=out, stderr=subprocess.PIPE, text=True, cwd=tmp_path, timeout=300,
                              env={**os.environ, "GITHUB_ACTIONS": "true"})
    assert proc.returncode == 1, proc.stderr
    assert link.is_symlink() and os.readlink(link) == "/proc/self/fd/1"
    assert os.lstat("/dev/stdout").st_ino == before.st_ino
    lines = log.read_text().splitlines()
    assert re.fullmatch(r"::stop-commands::[0-9a-f]{32}", lines[0]), lines[:3]
    assert any(line.strip().startswith("::error file=README.md") for line in lines)
