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


def _stalls(argv, submission, workdir):
    """A sandbox program that takes its time before starting the child (a busy machine's bwrap)."""
    return ["/bin/sh", "-c", "sleep 5"]


def test_a_start_cut_by_the_runs_own_deadline_is_the_runs_timeout():
    """Attack round 44: a restart cut by --total-timeout was called the sandbox's failure (exit 2)."""
    import time
    with Worker(str(SUBMISSIONS / "correct_numpy.py"), "tied_lm_head", "numpy", Limits(call_timeout=10),
                wrap=_stalls, deadline=time.monotonic() + 0.5) as w:
        out = w.start()
    assert out.status == "timeout" and "--total-timeout" in out.message, out
    with Worker(str(SUBMISSIONS / "correct_numpy.py"), "tied_lm_head", "numpy", Limits(call_timeout=10),
                wrap=_refused, deadline=time.monotonic() + 30) as w:
        assert w.start().status == "unconfined"   # a start that fails within the run's time is still the sandbox's


def test_a_restart_that_cannot_be_confined_is_the_machines_and_one_past_the_runs_end_its_timeout(monkeypatch):
    """Attack rounds 44 and 45: a restart whose wait was cut by --total-timeout is the run's
    timeout (it was "could not run", exit 2, for wrong code that crashed just before the end);
    a restart the sandbox cannot start is the machine's (exit 2), as the first start is: graded
    as the submission's crash, a full process budget of the machine scored a nearly right file
    0.0."""
    import time

    from grader.cases import Case
    from grader.results import ImportOutcome
    from grader.run import sandboxed
    monkeypatch.setattr("grader.sandbox.forget_tier", lambda tier: None)

    class Wrap:
        tier = "bwrap"

    class Broken:
        layers = []
        proc = None

        def __init__(self, status):
            self.status = status

        def wait_ready(self):
            return ImportOutcome(status=self.status, message="the sandbox (bwrap) could not start it")

        def close(self, keep_cache=True):
            pass

        def output(self):
            return {"stdout": "", "stderr": "", "stdout_bytes": 0, "stderr_bytes": 0, "truncated": False}

    def session(status, deadline):
        s = object.__new__(sandboxed._Session)
        s.wrap, s._launch_failure, s.saw_hidden, s.restarts, s.outputs = Wrap(), None, False, 0, []
        s.deadline, s.worker, s.versions, s.layers = deadline, None, {}, []
        s.launch = lambda: setattr(s, "worker", Broken(status))
        return s

    case = Case(name="c", group="g", inputs={}, sizes={}, dtype="float32")
    with pytest.raises(GraderError, match="did not run"):
        session("unconfined", time.monotonic() + 60).call(case)
    late = session("timeout", time.monotonic() - 1).call(case)
    assert late.status == "timeout" and late.limit == "total", late


def test_a_submission_that_imports_the_graders_check_is_graded(tmp_path):
    """A newcomer's trial: a file written as the README teaches a notebook (``from grader import
    check``, then ``check(fn)``) was graded FAIL 0.0 (ImportError: the package is not in the
    sandbox). Inside the child ``check`` does nothing, with either import form (in the sandbox's
    view, where the package is not importable), and its result has the README's attributes
    (attack round 48: ``assert check(f).passed`` was an AttributeError, FAIL 0.0)."""
    from grader.sandbox import choose_tier
    tier, wrap = choose_tier("auto")
    # a newcomer's hand-in formatted the score and read a nested key: TypeError at import, 0/10
    uses = ("check(tied_lm_head)", "assert check(tied_lm_head).passed\nr = check(tied_lm_head)\nprint(r.score, r.report['score'])",
            "r = check(tied_lm_head)\nprint(f\"{r.score:.1f} / {r.report['max_score']:.0f}\", r.report['environment']['framework'])\n"
            "assert r.score <= r.max_score")
    for n, (head, use) in enumerate([(h, u) for h in ("from grader import check\n", "import grader\ncheck = grader.check\n")
                                     for u in uses]):
        sub = tmp_path / f"uses_check_{n}.py"
        sub.write_text(head + textwrap.dedent("""
            def tied_lm_head(hidden, embedding_matrix):
                return hidden @ embedding_matrix.T

        """) + use + "\n")
        with Worker(str(sub), "tied_lm_head", "numpy", Limits(call_timeout=10), wrap=wrap) as w:
            out = w.start()
        assert out.status == "ok", (tier, out)
