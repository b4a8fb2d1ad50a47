"""Shared fixtures: paths, and a helper that runs the grader CLI as a learner or CI would."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# One cache folder for the whole session (never the user's ~/.cache): cases, expected values
# and JAX compilations made by one test are reused by the next, as on a learner's machine.
os.environ.setdefault("GRADER_CACHE_DIR", tempfile.mkdtemp(prefix="grader-test-cache-"))
SUBMISSIONS = ROOT / "submissions"
PROBLEMS = ROOT / "problems"


@dataclass
class Run:
    """One finished CLI run: exit code, stdout and stderr text."""

    code: int
    stdout: str
    stderr: str

    def json(self) -> dict:
        return json.loads(self.stdout)


def run_grader(*args: str, timeout: float = 180, cwd: Path | None = None, env: dict | None = None) -> Run:
    """Run ``python -m grader ARGS`` in a subprocess and return its :class:`Run`."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    proc = subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd or ROOT, env=full_env, stdin=subprocess.DEVNULL)
    return Run(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def grader():
    """The :func:`run_grader` helper."""
    return run_grader


@pytest.fixture(autouse=True)
def _unharden_the_test_process():
    """A test that runs ``grader check`` or ``grade`` in process (``cli.main``) lets the CLI make
    the test worker the grader's own (``runner.harden_grader_process``: a child subreaper whose
    every child counts as the grader's). Undo it after the test, so that a later test in the same
    worker sees a library caller's process, as a notebook kernel is."""
    yield
    from grader import runner
    if runner._whole_process:
        runner._prctl(runner.PR_SET_CHILD_SUBREAPER, 0)
        runner._prctl(runner.PR_SET_DUMPABLE, 1)
        runner._whole_process = False
