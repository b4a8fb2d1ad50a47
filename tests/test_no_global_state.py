"""One check keeps no process state (issue 10, build item 5): the caller's JAX x64 flag and
environment are unchanged, only the grader's own children are reaped, the JAX cache folder is
an explicit option, and no module imports another's private helpers.

In process: a check with ``--max-examples 1`` and no shrinking (a few seconds).
"""
from __future__ import annotations

import ast
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import jax
import numpy as np
import pytest

from grader import processes, reference
from grader.check import CheckOptions, check_submission
from grader.spec import find_problem, load_problem

ROOT = Path(__file__).resolve().parent.parent
PROBLEM = load_problem(find_problem("tied_lm_head"))


def _opts(**kw) -> CheckOptions:
    return CheckOptions(max_examples=1, shrink=False, **kw)


@pytest.mark.parametrize("before", [False, True])
def test_reference_leaves_the_callers_x64_flag_alone(before):
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", before)
    try:
        rng = np.random.default_rng(0)
        inputs = {"hidden": rng.standard_normal((2, 3)).astype(np.float32),
                  "embedding_matrix": rng.standard_normal((5, 3)).astype(np.float32)}
        ref, scale = reference.evaluate(PROBLEM, inputs)
        assert ref.dtype == np.float64 and scale is not None
        # float64 on the inside: the exact value, not a float32 rounding of it
        exact = inputs["hidden"].astype(np.float64) @ inputs["embedding_matrix"].astype(np.float64).T
        assert np.array_equal(ref, exact)
        assert jax.config.jax_enable_x64 is before
        check_submission(ROOT / "submissions" / "correct_numpy.py", PROBLEM, _opts())
        assert jax.config.jax_enable_x64 is before
    finally:
        jax.config.update("jax_enable_x64", old)


def test_a_check_sets_no_environment_variable():
    before = dict(os.environ)
    report = check_submission(ROOT / "submissions" / "correct_numpy.py", PROBLEM, _opts())
    assert report.passed
    assert dict(os.environ) == before


def test_the_jax_cache_folder_is_an_option_not_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("GRADER_JAX_CACHE", raising=False)
    assert CheckOptions().jax_cache is None
    monkeypatch.setenv("GRADER_JAX_CACHE", str(tmp_path / "from-env"))
    assert CheckOptions().jax_cache == str(tmp_path / "from-env")     # read when the options are made
    monkeypatch.delenv("GRADER_JAX_CACHE")
    store = tmp_path / "store"
    report = check_submission(ROOT / "submissions" / "correct_jax.py", PROBLEM, _opts(jax_cache=str(store)))
    assert report.passed
    assert "GRADER_JAX_CACHE" not in os.environ
    # the submission's store is made in the folder given (its entries need a JAX whose CPU
    # persistent cache writes them: 0.10 does, 0.4.30 writes none)
    assert [p.parent.name for p in store.glob("*/*")] and all(p.is_dir() for p in store.glob("*/*"))
    off = check_submission(ROOT / "submissions" / "correct_jax.py", PROBLEM, _opts(jax_cache=""))
    assert off.passed


def test_reap_orphans_spares_the_callers_other_children():
    """A notebook kernel (or any caller) has children of its own: a check and the orphan sweep
    after it kill only what the grader started."""
    assert not processes.REGISTRY.whole_process, "no test may harden the test process"
    mine = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    same_group = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        report = check_submission(ROOT / "submissions" / "correct_numpy.py", PROBLEM, _opts())
        assert report.passed
        processes.reap_orphans()
        time.sleep(0.2)
        assert mine.poll() is None and same_group.poll() is None
    finally:
        for p in (mine, same_group):
            p.kill()
            p.wait()


def test_reap_orphans_kills_what_a_run_of_the_grader_left():
    """A leftover carrying a run's marker (as a submission's descendant inherits it) is reaped."""
    processes.track_marker("test-run-marker")
    env = dict(os.environ, GRADER_RUN="test-run-marker")
    left = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], env=env, start_new_session=True)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                             env=dict(os.environ, GRADER_RUN="someone-else"), start_new_session=True)
    try:
        time.sleep(0.3)   # the marker is read from /proc/PID/environ, written at exec
        assert processes.reap_orphans() >= 1
        assert left.poll() is not None
        assert other.poll() is None
    finally:
        for p in (left, other):
            p.kill()
            p.wait()


def test_reap_orphans_kills_what_runs_below_a_leftover_and_waits_until_it_is_gone():
    """A leftover's own children die with it, even ones that carry no marker (they would be
    re-parented away once it is gone), and the sweep returns only when none is alive."""
    processes.track_marker("test-run-below")
    spawn = ("import os, subprocess, sys, time\n"
             "env = {k: v for k, v in os.environ.items() if k != 'GRADER_RUN'}\n"
             "kid = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], env=env)\n"
             "print(kid.pid, flush=True)\n"
             "time.sleep(60)\n")
    left = subprocess.Popen([sys.executable, "-c", spawn], env=dict(os.environ, GRADER_RUN="test-run-below"),
                            stdout=subprocess.PIPE, start_new_session=True)
    grandchild = int(left.stdout.readline())
    try:
        assert processes.reap_orphans() >= 2
        assert left.poll() is not None
        state = (Path(f"/proc/{grandchild}/stat").read_text().rsplit(")", 1)[1].split() or ["?"])[0] \
            if Path(f"/proc/{grandchild}").exists() else "gone"
        assert state in ("gone", "Z"), f"the leftover's child is still {state}"
    finally:
        left.kill()
        left.wait()
        try:
            os.kill(grandchild, signal.SIGKILL)
        except OSError:
            pass


def test_the_orphan_barrier_keeps_a_child_it_picked_until_it_has_reaped_it():
    """A dying process's marker (its /proc environ) reads empty once its memory is released,
    before it is a zombie: ``select`` says no the second time. The barrier still waits for it
    and reaps it (it once returned with the leftover still exiting: a flaky
    test_reap_orphans_kills_what_runs_below_a_leftover_and_waits_until_it_is_gone)."""
    from grader.processes import kill_orphan_trees
    kid = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    seen: list[int] = []

    def once(pid: int, fields: list[str]) -> bool:
        if pid != kid.pid:
            return False
        seen.append(pid)
        return len(seen) == 1
    try:
        assert kill_orphan_trees(once, wait=10.0) >= 1
        assert not Path(f"/proc/{kid.pid}").exists(), "the barrier returned before it reaped the child"
    finally:
        kid.kill()
        kid.wait()


def test_no_module_imports_another_modules_private_names():
    """shrink, validate and check share grader.grading's public functions, not check's privates."""
    offenders = []
    for path in sorted((ROOT / "grader").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("grader")):
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} {alias.name}")
    assert offenders == []


def test_trusted_jax_code_gets_float64_in_a_scope_only():
    """An oracle module (grader validate) runs in reference.x64_scope: float64 inside, the
    caller's flag outside."""
    import jax.numpy as jnp

    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", False)
    try:
        with reference.x64_scope():
            assert jnp.asarray(np.ones(2)).dtype == np.float64
        assert jnp.asarray(np.ones(2)).dtype == np.float32
        assert jax.config.jax_enable_x64 is False
    finally:
        jax.config.update("jax_enable_x64", old)


def test_wait_exit_returns_when_the_child_ends_and_none_while_it_runs():
    """The runner's wait for its child: the exit code once it has ended (reaped), None when it
    still runs at the timeout, and a child that already ended is not waited for."""
    from grader.processes import wait_exit

    slow = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert wait_exit(slow, 0.05) is None and slow.returncode is None
    finally:
        slow.kill()
        assert wait_exit(slow, 10.0) == -signal.SIGKILL
    quick = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    assert wait_exit(quick, 30.0) == 3 and quick.returncode == 3
    assert wait_exit(quick, 0.0) == 3   # already reaped: its code again, no wait
