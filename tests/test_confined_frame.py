"""The child says it is confined before any of the submission's code runs (attack round 41).

A process that dies, stalls or reports a sandbox error before that frame failed in the
machine's sandbox: the check is not graded (exit 2, the tier named) and the tier's remembered
probe is forgotten. Under a Landlock domain bubblewrap's mounts were refused and a correct file
was graded FAIL 0.0 as an import failure. A submission that exits while being imported is still
the submission's own failure.
"""
from __future__ import annotations

import textwrap

import pytest

from grader.errors import GraderError
from grader.options import Limits
from grader.runner import Worker

from .conftest import SUBMISSIONS


def _refused(argv, submission, workdir):
    """A stand-in for a sandbox program that fails before starting the child, as bubblewrap did."""
    return ["/bin/sh", "-c", "echo 'bwrap: Failed to make / slave: Operation not permitted' >&2; exit 1"]


def test_a_sandbox_that_never_starts_the_child_is_the_machines_failure():
    with Worker(str(SUBMISSIONS / "correct_numpy.py"), "tied_lm_head", "numpy", Limits(call_timeout=10),
                wrap=_refused) as w:
        out = w.start()
    assert out.status == "unconfined" and "Failed to make / slave" in out.message, out


def test_a_submission_that_exits_while_imported_is_its_own_failure(tmp_path):
    sub = tmp_path / "leaves.py"
    sub.write_text(textwrap.dedent("""
        import os
        os._exit(1)
    """))
    with Worker(str(sub), "tied_lm_head", "numpy", Limits(call_timeout=10)) as w:
        out = w.start()
    assert out.status == "crash" and "exited with code 1" in out.message, out
    with Worker(str(SUBMISSIONS / "correct_numpy.py"), "tied_lm_head", "numpy", Limits(call_timeout=10)) as w:
        assert w.start().status == "ok"


def test_an_unconfined_start_is_exit_2_and_forgets_the_tier(monkeypatch):
    """The executor raises (the CLI's exit 2) and drops the tier's memo, so the next check probes again."""
    from grader.results import ImportOutcome
    from grader.run import sandboxed
    forgot = []
    monkeypatch.setattr("grader.sandbox.forget_tier", forgot.append)

    class Wrap:
        tier = "bwrap"

    executor = object.__new__(sandboxed._Session)
    executor.wrap, executor._launch_failure = Wrap(), None

    class Broken:
        layers = []

        def wait_ready(self):
            return ImportOutcome(status="unconfined", message="the sandbox (bwrap) could not start it")

    executor.worker = Broken()
    with pytest.raises(GraderError, match="did not run"):
        executor.ready()
    assert forgot == ["bwrap"]


def test_forgetting_a_tier_removes_its_memo_on_disk(monkeypatch, tmp_path):
    from grader import sandbox
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path))
    program = sandbox._program("bwrap")
    if program is None:
        pytest.skip("no bubblewrap here")
    memo = sandbox._memo_path("bwrap", program)
    memo.parent.mkdir(parents=True, exist_ok=True)
    memo.write_text('{"ok": true}')
    sandbox.forget_tier("bwrap")
    assert not memo.exists()
