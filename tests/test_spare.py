"""Spare children (issue 33): a sandboxed child started ahead, with its framework imported, that
waits for one submission (``grader.run.spare``, ``runner.Worker.hand_over``), and ``grader
serve``'s spare processes (``grader.forkserver``).

What must hold: a check that adopts a spare gives the report a check with its own child gives
(apart from timings and ``environment.child``); a spare is used by one check only, so nothing a
submission leaves behind (a file, a thread, a patched module) reaches the next check; a spare
that does not match the check (framework, limits, tier) is closed and the check starts its own.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader import cli, forkserver, forkserver_policy
from grader.check import check_submission
from grader.options import CheckOptions
from grader.run import spare
from grader.sandbox import choose_tier
from grader.spec import find_problem, load_problem

from .conftest import SUBMISSIONS

GRADER = [sys.executable, "-m", "grader"]
PROBLEM = load_problem(find_problem("tied_lm_head"))

LEAVES_TRACES = '''import os, sys, threading, time
import numpy as np

# at import: a file in the working folder and in /tmp, a patched module, a thread that stays
for folder in (os.environ.get("HOME", "."), "/tmp", os.getcwd()):
    try:
        with open(os.path.join(folder, "left-behind"), "w") as fh:
            fh.write("x")
    except OSError:
        pass
np.LEFT_BEHIND = True
threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()


def tied_lm_head(hidden, embedding_matrix):
    return hidden @ embedding_matrix.T
'''

SEES_TRACES = '''import os, sys, threading
import numpy as np


def _traces():
    found = [f for f in (os.environ.get("HOME", "."), "/tmp", os.getcwd())
             if os.path.exists(os.path.join(f, "left-behind"))]
    if hasattr(np, "LEFT_BEHIND"):
        found.append("numpy patched")
    sleepers = [t.name for t in threading.enumerate() if "sleep" in t.name]
    if sleepers:
        found.append(f"threads {sleepers}")
    others = [n for n in os.listdir(os.path.dirname(os.path.abspath(__file__))) if n != os.path.basename(__file__)]
    if others:
        found.append(f"files beside me: {others}")
    return found


def tied_lm_head(hidden, embedding_matrix):
    found = _traces()
    if found:
        raise RuntimeError(f"traces of an earlier submission: {found}")
    return hidden @ embedding_matrix.T
'''


# -- the client's hint and the zygote's choice, in process ----------------------------------------------

def test_the_framework_hint_reads_the_flag_or_the_files_imports(tmp_path):
    (tmp_path / "a.py").write_text("import numpy as np\nfrom jax import numpy as jnp\n")
    (tmp_path / "b.py").write_text("import numpy as np\n\n\ndef f(x):\n    return x\n")
    (tmp_path / "c.ipynb").write_text(json.dumps({"cells": [{"source": ["import torch\n", "x = 1\n"]}]}))
    (tmp_path / "link.py").symlink_to(tmp_path / "a.py")
    hint = forkserver.framework_hint
    assert hint(["check", "a.py"], str(tmp_path)) == "jax"
    assert hint(["check", "b.py"], str(tmp_path)) == "numpy"
    assert hint(["check", "c.ipynb"], str(tmp_path)) == "torch"
    assert hint(["check", "a.py", "--framework", "torch"], str(tmp_path)) == "torch"
    assert hint(["check", "--framework=numpy", "a.py"], str(tmp_path)) == "numpy"
    assert hint(["check", "link.py"], str(tmp_path)) == "numpy"       # a link is not followed
    assert hint(["check", "missing.py"], str(tmp_path)) == "numpy"


def test_only_a_check_with_the_default_limits_and_tier_goes_to_a_spare(monkeypatch):
    monkeypatch.setitem(forkserver_policy.CLI, "build_parser", cli.build_parser)
    ask = forkserver.spare_for
    assert ask({"argv": ["check", "a.py"], "framework": "jax"}) == "jax"
    assert ask({"argv": ["check", "a.py", "--max-examples", "3", "--no-shrink"], "framework": "numpy"}) == "numpy"
    for flags in (["--timeout", "3"], ["--memory-mb", "512"], ["--sandbox", "none"], ["--no-such-flag"]):
        assert ask({"argv": ["check", "a.py", *flags], "framework": "numpy"}) is None, flags
    assert ask({"argv": ["problems"], "framework": "numpy"}) is None
    assert ask({"argv": ["check", "a.py"]}) is None


# -- a spare in this process ------------------------------------------------------------------------------

def _prepare(framework: str) -> spare.Spare:
    tier, wrap = choose_tier("auto")
    made = spare.prepare(framework, CheckOptions().limits, tier, wrap)
    assert made is not None and made.failed is None
    return made


def test_a_check_adopts_a_matching_spare_once_and_reports_as_without_it():
    opts = CheckOptions(max_examples=3, shrink=False)
    made = _prepare("numpy")
    proc = made.worker.proc
    with_spare = check_submission(SUBMISSIONS / "wrong_tolerance_softmax.py", PROBLEM, opts)
    assert with_spare.environment.get("child") == "spare"
    assert proc.poll() is not None and not os.path.exists(made.root)   # closed with its check
    assert spare.take("numpy", opts.limits, choose_tier("auto")[0]) is None           # used once
    own = check_submission(SUBMISSIONS / "wrong_tolerance_softmax.py", PROBLEM, opts)
    assert "child" not in own.environment
    assert (with_spare.passed, with_spare.score) == (own.passed, own.score) == (False, own.score)
    assert [(c.name, c.status) for c in with_spare.cases] == [(c.name, c.status) for c in own.cases]


def test_a_spare_that_does_not_match_is_closed_and_the_check_starts_its_own_child():
    made = _prepare("numpy")
    proc = made.worker.proc
    opts = CheckOptions(max_examples=2, shrink=False, limits=dataclass_replace(CheckOptions().limits, call_timeout=3.0))
    report = check_submission(SUBMISSIONS / "correct_numpy.py", PROBLEM, opts)
    assert report.passed and "child" not in report.environment
    assert proc.poll() is not None and not os.path.exists(made.root)


def test_a_spare_whose_child_died_is_replaced_by_a_child_of_the_checks_own():
    made = _prepare("numpy")
    made.worker.kill()
    report = check_submission(SUBMISSIONS / "correct_numpy.py", PROBLEM, CheckOptions(max_examples=2, shrink=False))
    assert report.passed and "child" not in report.environment


SEES_WARM_UP = """
import os
import jax
import jax.numpy as jnp

_cache = jax.config.jax_compilation_cache_dir
WARMED = bool(_cache) and any(name.startswith("jit__lambda") for name in os.listdir(_cache))


def tied_lm_head(hidden, embedding_matrix):
    out = jnp.matmul(hidden, embedding_matrix.T)
    return out if WARMED else out + 1
"""


def test_a_jax_spare_has_run_its_first_computation_before_its_submission(tmp_path):
    """A JAX spare pays JAX's first lowering and compilation (frameworks.jax.warm_up: x + 1 of a
    scalar, nothing of the problem) before it is handed a submission; so does a child started
    for the check, before it says it is confined (attack round 59: XLA starting its threads in
    the learner's first call aborted where another learner had spent the user's processes, a
    correct file's crash verdict; before the frame, such a death is the machine's, exit 2)."""
    pytest.importorskip("jax")
    sub = tmp_path / "sees_warm_up.py"
    sub.write_text(SEES_WARM_UP)
    opts = CheckOptions(max_examples=0, shrink=False, only_cases=["worked_example[float32]"], jax_cache=str(tmp_path / "jax"))
    _prepare("jax")
    served = check_submission(sub, PROBLEM, opts)
    assert served.environment.get("child") == "spare"
    assert served.passed or all(c.status == "passed" for c in served.cases), [c.failure for c in served.cases]
    own = check_submission(sub, PROBLEM, dataclass_replace(opts, jax_cache=str(tmp_path / "jax-own")))
    assert "child" not in own.environment and all(c.status == "passed" for c in own.cases), \
        [c.failure for c in own.cases]


def dataclass_replace(obj, **changes):
    import dataclasses
    return dataclasses.replace(obj, **changes)


# -- grader serve with spares -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def spare_server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("spares") / "private"
    folder.mkdir(mode=0o700)
    sock = folder / "serve.sock"
    proc = subprocess.Popen([*GRADER, "serve", "--socket", str(sock), "--problem", "tied_lm_head", "--spares", "numpy"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdout.readline()
    deadline = time.monotonic() + 60
    while not sock.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert sock.exists()
    yield sock
    proc.terminate()
    proc.wait(timeout=30)


def _served(sock: Path, path: Path, *args: str) -> dict:
    env = {**os.environ, forkserver.SOCKET_ENV: str(sock), forkserver.SERVE_ENV: "1"}
    out = subprocess.run([*GRADER, "check", str(path), "--problem", "tied_lm_head", "--format", "json",
                          "--max-examples", "2", "--no-shrink", *args], capture_output=True, text=True, timeout=180,
                         env=env)
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def test_no_submission_sees_what_the_previous_one_left(spare_server, tmp_path):
    """A spare is never given two submissions: the second check's child is another spare, and a
    file, a thread and a patched module the first left are nowhere in it."""
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    first = tmp_path / "first" / "leaves.py"
    first.write_text(LEAVES_TRACES)
    (tmp_path / "first" / "helper_left.py").write_text("X = 1\n")
    second = tmp_path / "second" / "sees.py"
    second.write_text(SEES_TRACES)
    a = _served(spare_server, first)
    b = _served(spare_server, second)
    assert a["passed"] and a["environment"]["served"] == "pool" and a["environment"].get("child") == "spare"
    assert b["environment"].get("child") == "spare"
    assert b["passed"], [c.get("failure") for c in b["cases"] if c["status"] != "passed"][:1]


def test_a_served_check_with_its_own_limits_starts_its_own_child(spare_server):
    report = _served(spare_server, SUBMISSIONS / "correct_numpy.py", "--timeout", "7")
    assert report["passed"] and report["environment"]["served"] == "pool" and "child" not in report["environment"]


def test_the_notebook_warm_grader_keeps_a_spare_for_the_next_check(monkeypatch, tmp_path):
    """check(fn)'s warm grader (grader._warm_server) answers a check itself when no grader serve
    runs, then starts a spare of that framework: the next check(fn) adopts it."""
    import io

    from grader import _warm_server
    monkeypatch.setenv(forkserver.SERVE_ENV, "0")
    monkeypatch.chdir(tmp_path)
    argv = ["check", str(SUBMISSIONS / "correct_numpy.py"), "--problem", "tied_lm_head", "--format", "json",
            "--max-examples", "2", "--no-shrink"]
    requests = io.StringIO("".join(json.dumps({"argv": argv}) + "\n" for _ in range(2)))
    responses = io.StringIO()
    assert _warm_server.serve(requests, responses) == 0
    first, second = (json.loads(json.loads(line)["stdout"]) for line in responses.getvalue().splitlines())
    assert first["passed"] and second["passed"]
    assert "child" not in first["environment"] and second["environment"].get("child") == "spare"
    assert spare._spare is None      # the spare made after the second check was closed at the end


def test_auto_spares_start_with_numpy_and_jax_and_adopt_a_framework_a_check_used():
    """A newcomer's PyTorch checks took 3.0 s served (no torch spare by default) and 0.19 s with
    ``--spares numpy,jax,torch``. The default, ``auto``, starts NumPy's and JAX's spares and keeps
    one for any other installed framework once a check of it ran; an explicit list is kept as
    given. (Measured by hand: a torch check 3.11 s, then 0.29 s and 0.30 s with the spare.)"""
    from grader import forkserver
    assert forkserver.installed_frameworks("auto") == ("numpy", "jax")
    assert forkserver.installed_frameworks("none") == ()
    zygote = forkserver.Zygote(spares=forkserver.installed_frameworks("auto"), adapt=True)
    assert zygote.adopt_framework("torch") is (importlib.util.find_spec("torch") is not None)
    assert not zygote.adopt_framework("torch") and not zygote.adopt_framework("numpy")
    assert not zygote.adopt_framework("tensorflow") and "tensorflow" not in zygote.spare_frameworks
    fixed = forkserver.Zygote(spares=("numpy",))
    assert not fixed.adopt_framework("torch") and fixed.spare_frameworks == ("numpy",)


def test_a_child_seeded_with_its_files_own_compilations_compiles_nothing_before_it_is_confined(tmp_path):
    """Attack round 60: the warm-up a JAX child runs before it says it is confined (round 59)
    loaded the store of the file's earlier runs, where a submission had put an endless loop under
    the warm-up's own key: every later check of it hung before that frame and "could not run"
    (exit 2) instead of failing. A child whose cache is seeded runs no warm-up there: nothing of
    the store is compiled or loaded before the submission's own code (which sees no warm-up's
    entry here), and its faults are its own again."""
    pytest.importorskip("jax")
    from grader import cache
    sub = tmp_path / "sees_warm_up.py"
    sub.write_text(SEES_WARM_UP)
    folder = str(tmp_path / "jax-seeded")
    key = cache.submission_key(sub.read_bytes(), PROBLEM.function, "jax", [], scope=None)
    store = cache.jax_submission_store(key, folder)
    (Path(store) / "jit_other-cache").write_bytes(b"an entry of an earlier run")
    opts = CheckOptions(max_examples=0, shrink=False, only_cases=["worked_example[float32]"], jax_cache=folder)
    seeded = check_submission(sub, PROBLEM, opts)
    assert "child" not in seeded.environment and any(c.status != "passed" for c in seeded.cases)
