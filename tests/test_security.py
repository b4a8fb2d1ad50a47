"""Hostile submissions: each one fails with a reason, the grader survives, nothing is left running.

Every file of tests/corpus/adversarial/ is graded through the CLI, in parallel, each grader in a
session of its own; the test process is a child subreaper, so a descendant that escaped the
grader is re-parented here and counted as a leak. Some files run a second time with the sandbox
forced to the fallback tier (``GRADER_SANDBOX_TIER=rlimits``), and the process-spawning ones once
more with the seccomp filter off (``GRADER_SECCOMP=0``), so that the clean-up paths that do not
rely on the filter (the PID namespace, the subreaper sweep) are exercised too.

Under the strongest tier the machine has (bubblewrap or unshare), a canary file outside the
submission's folder must stay unreadable and a loopback listener must get no connection. When
no namespace tier works here (an unprivileged CI runner whose user namespaces are restricted),
those checks are skipped with the reason and everything else runs under the fallback tier.
"""
from __future__ import annotations

import ast
import ctypes
import json
import os
import secrets
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from grader import processes
from grader import runner, sandbox
from grader.options import Limits
from grader.runner import Worker

from .conftest import ROOT, run_grader

CORPUS = ROOT / "tests" / "corpus"
EXPECTED = json.loads((CORPUS / "expected.json").read_text())
ADVERSARIAL = sorted(k for k in EXPECTED if k.startswith("adversarial/"))
CANARY = Path("/tmp/grader-canary-3f9c.txt")          # the path a23_read_outside_folder.py reads
CANARY_PORT = 47913                                     # the port a24_connect_localhost.py dials
PR_SET_CHILD_SUBREAPER = 36

# files whose report is taken from stdout (no --output): they print, flood or leave writers behind
STDOUT_REPORT = {"adversarial/a06_fake_report_stdout.py", "adversarial/a07_stdout_flood.py",
                 "adversarial/a14_setsid_daemon.py", "adversarial/a25_background_thread_printer.py",
                 "adversarial/a32_subprocess_new_session.py", "adversarial/a13_fork_bomb_bounded.py"}
FALLBACK = ["adversarial/a03_os_exit_in_call.py", "adversarial/a07_stdout_flood.py",
            "adversarial/a13_fork_bomb_bounded.py", "adversarial/a14_setsid_daemon.py",
            "adversarial/a17_sleep_forever.py", "adversarial/a18_kill_parent.py",
            "adversarial/a19_killpg_own_group.py", "adversarial/a20_junk_to_fds.py",
            "adversarial/a22_read_parent_proc.py", "adversarial/a23_read_outside_folder.py",
            "adversarial/a24_connect_localhost.py", "adversarial/a32_subprocess_new_session.py",
            "adversarial/a33_memfd_beyond_memory_limit.py", "adversarial/a34_setuid_fifo_files.py",
            "adversarial/a35_sigio_kill_parent.py"]
SPAWNERS = ["adversarial/a13_fork_bomb_bounded.py", "adversarial/a14_setsid_daemon.py",
            "adversarial/a32_subprocess_new_session.py"]
#: files that run until a limit stops them: a 2 s call limit stops them as surely as 5 s, for 3 CPU-s
#: less each (the others get 5 s, room for a real-size call on a loaded machine)
UNTIL_STOPPED = {"adversarial/a11_memory_bomb.py", "adversarial/a12_ignore_sigterm_loop.py",
                 "adversarial/a30_sigalrm_ignore_loop.py"}
SECOND_NAMESPACE_TIER = ["adversarial/a14_setsid_daemon.py", "adversarial/a18_kill_parent.py",
                         "adversarial/a20_junk_to_fds.py", "adversarial/a23_read_outside_folder.py"]


def _strongest() -> list[str]:
    return [t for t in sandbox.NAMESPACE_TIERS if sandbox.probe(t)[0]]


NAMESPACE_OK = _strongest()
STRONG = NAMESPACE_OK[0] if NAMESPACE_OK else None


def _landlock_abi() -> int:
    try:
        return max(0, int(ctypes.CDLL(None, use_errno=True).syscall(444, None, 0, 1)))
    except (OSError, AttributeError):
        return 0


# -- running the CLI and watching for leftovers -----------------------------------------------------
_running: set[int] = set()
_running_lock = threading.Lock()


def _children_of_me() -> list[tuple[int, str]]:
    me, out = os.getpid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == me:
            out.append((int(entry), fields[0]))
    return out


def _collect_leftovers() -> list[int]:
    """Kill and reap this process's children that are not grader runs in progress; return the live ones.

    Holds the lock throughout, so that a grader being started meanwhile is never taken for a leak.
    """
    with _running_lock:
        return _collect_locked(set(_running))


def _collect_locked(busy: set[int]) -> list[int]:
    leaked = []
    for pid, state in _children_of_me():
        if pid in busy:
            continue
        if state != "Z":
            leaked.append(pid)
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.waitpid(pid, 0)  # only this pid: never steal a running grader's exit status
        except (ChildProcessError, OSError):
            pass
    return leaked


@dataclass
class Run:
    """One grader run: exit code, streams, the report, time taken, leftovers, whether it stalled."""

    name: str
    code: int
    stdout: str
    stderr: str
    report: dict | None
    seconds: float
    stalled: bool
    leaked: list[int] = field(default_factory=list)
    from_stdout: bool = False


def grade(submission: Path, env: dict[str, str], to_stdout: bool = False, name: str = "",
          shrink: bool = False) -> Run:
    """``python -m grader check SUBMISSION --problem tied_lm_head --format json --output R
    --max-examples 6 --timeout 5`` (2 for :data:`UNTIL_STOPPED`) in a session of its own (no ``--output`` when ``to_stdout``),
    with ``--audience instructor`` so that the captured output is always in the report.

    ``shrink=False`` adds ``--no-shrink``: these runs test isolation, not the shrinker, and
    shrinking is about two thirds of a failing run's time (4 s instead of 1.5 s here).
    """
    with tempfile.TemporaryDirectory(prefix="security-report-") as tmp:
        out = Path(tmp) / "report.json"
        cmd = [sys.executable, "-m", "grader", "check", str(submission), "--problem", "tied_lm_head",
               "--format", "json", "--max-examples", "6", "--audience", "instructor",
               "--timeout", "2" if any(str(submission).endswith(f) for f in UNTIL_STOPPED) else "5"]
        if not to_stdout:
            cmd += ["--output", str(out)]
        if not shrink:
            cmd += ["--no-shrink"]
        full_env = {**os.environ, **env}
        t0 = time.monotonic()
        with _running_lock:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                    cwd=ROOT, env=full_env, start_new_session=True)
            _running.add(proc.pid)
        stalled = False
        try:
            stdout, stderr = proc.communicate(timeout=90)
        except subprocess.TimeoutExpired:
            stalled = True
            os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
        finally:
            with _running_lock:
                _running.discard(proc.pid)
        seconds = time.monotonic() - t0
        time.sleep(0.3)
        leaked = _collect_leftovers()
        text = stdout.decode(errors="replace")
        try:
            report = json.loads(text if to_stdout else out.read_text())
        except (OSError, ValueError):
            report = None
    return Run(name or submission.name, proc.returncode, text, stderr.decode(errors="replace"), report,
               seconds, stalled, leaked, to_stdout)


def failure_kinds(report: dict) -> set[str]:
    kinds = set()
    if isinstance(report.get("failure"), dict):
        kinds.add(report["failure"].get("kind"))
    for case in report.get("cases") or []:
        if isinstance(case.get("failure"), dict):
            kinds.add(case["failure"].get("kind"))
    return kinds - {None}


PROBE_SUBMISSION = """
import os, sys
import numpy as np

TARGETS = {TARGETS!r}


def _try(label, fn):
    try:
        fn()
        print("LEAK:" + label, file=sys.stderr)
    except Exception as exc:
        print("SAFE:" + label + ":" + type(exc).__name__, file=sys.stderr)


def _read(path):
    with open(path, "rb") as fh:
        if not fh.read(64):
            raise OSError("empty")


def _list(path, secret_name):
    if secret_name not in os.listdir(path):
        raise OSError("not listed")


def _write(path):
    with open(path, "w") as fh:
        fh.write("tampered")


def _grader_processes():
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as fh:
                args = fh.read().split(b"\\0")
        except OSError:
            continue
        if b"check" in args and any(a == b"grader" or a.endswith(b"/grader") for a in args):
            found.append(int(entry))
    return found


def _grader_memory():
    pids = _grader_processes()
    if not pids:
        raise LookupError("no grader process is visible")
    for pid in pids:
        try:
            with open("/proc/%d/maps" % pid) as maps:
                start = int(next(maps).split("-")[0], 16)
            with open("/proc/%d/mem" % pid, "rb") as mem:
                mem.seek(start)
                mem.read(16)
            return
        except OSError:
            continue
    raise PermissionError("every grader's memory is closed")


def _grader_environ():
    pids = _grader_processes()
    if not pids:
        raise LookupError("no grader process is visible")
    for pid in pids:
        try:
            with open("/proc/%d/environ" % pid, "rb") as fh:
                if fh.read(1):
                    return
        except OSError:
            continue
    raise PermissionError("every grader's environment is closed")


def tied_lm_head(hidden, embedding_matrix):
    for label, path in TARGETS["read"].items():
        _try("read-" + label, lambda p=path: _read(p))
    for label, (path, secret_name) in TARGETS["list"].items():
        _try("list-" + label, lambda p=path, n=secret_name: _list(p, n))
    for label, path in TARGETS["write"].items():
        _try("write-" + label, lambda p=path: _write(p))
    _try("grader-memory", _grader_memory)
    _try("grader-environ", _grader_environ)
    return np.zeros(hidden.shape[:-1] + (embedding_matrix.shape[0],), dtype=hidden.dtype)
"""


def make_probe(base: Path) -> tuple[Path, list[str], list[Path]]:
    """A submission that tries to read, list and write what it must not, and to reach the grader.

    It prints ``LEAK:<what>`` or ``SAFE:<what>:<error>`` lines to stderr. Returns the submission,
    the labels it must report SAFE (writes are checked on the host instead: in a namespace tier
    a write to its own folder lands in its private /tmp and vanishes) and the files that must not
    exist on the host afterwards.
    """
    mine, other = base / "learner_a", base / "learner_b"
    mine.mkdir()
    other.mkdir()
    (other / "submission.py").write_text("SECRET_OF_LEARNER_B = 1\n" * 4)
    (mine / "neighbour_in_same_folder.py").write_text("SECRET_NEIGHBOUR = 1\n" * 4)
    dropped = [mine / "dropped.py", ROOT / "tests" / "dropped_by_submission.py",
               ROOT / "grader" / "dropped_by_submission.py"]
    targets = {
        "read": {"other-learner": str(other / "submission.py"),
                 "same-folder-neighbour": str(mine / "neighbour_in_same_folder.py"),
                 "reference": str(ROOT / "reference" / "tied_lm_head.py"),
                 "problem-spec": str(ROOT / "problems" / "tied_lm_head.yaml"),
                 "canary": str(CANARY)},
        "list": {"own-folder": (str(mine), "neighbour_in_same_folder.py"),
                 "other-learner": (str(other), "submission.py"),
                 "problems": (str(ROOT / "problems"), "tied_lm_head.yaml")},
        "write": {"own-folder": str(dropped[0]), "project": str(dropped[1]), "grader-package": str(dropped[2])},
    }
    sub = mine / "submission.py"
    sub.write_text(PROBE_SUBMISSION.replace("{TARGETS!r}", repr(targets)))
    labels = [f"read-{k}" for k in targets["read"]] + [f"list-{k}" for k in targets["list"]] \
        + ["grader-memory", "grader-environ"]
    return sub, labels, dropped


# -- the batch: every run once, in parallel, with the canary and the listener planted ---------------
@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0, "cannot become a child subreaper"
    secret = "canary-" + secrets.token_hex(8)
    CANARY.write_text(secret + "\n")
    accepted: list[bytes] = []
    stop = threading.Event()
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        srv.bind(("127.0.0.1", CANARY_PORT))
        srv.listen(16)
        srv.settimeout(0.2)
        listening = True
    except OSError:
        listening = False

    def listen() -> None:
        while listening and not stop.is_set():
            try:
                conn, _ = srv.accept()
                accepted.append(conn.recv(100))
                conn.close()
            except OSError:
                pass
    threading.Thread(target=listen, daemon=True).start()

    probe_dir = tmp_path_factory.mktemp("probe")
    probe_sub, probe_labels, probe_dropped = make_probe(probe_dir)
    auto = {"GRADER_SANDBOX_TIER": ""}
    rlimits = {"GRADER_SANDBOX_TIER": "rlimits"}
    jobs = [(("auto", rel), CORPUS / rel, auto, rel in STDOUT_REPORT) for rel in ADVERSARIAL]
    jobs += [(("rlimits", rel), CORPUS / rel, rlimits, False) for rel in FALLBACK]
    jobs += [(("rlimits-noseccomp", rel), CORPUS / rel, {**rlimits, "GRADER_SECCOMP": "0"}, True) for rel in SPAWNERS]
    jobs += [(("auto", "probe"), probe_sub, auto, False), (("rlimits", "probe"), probe_sub, rlimits, False)]
    if STRONG:
        jobs += [(("strong-noseccomp", rel), CORPUS / rel, {"GRADER_SANDBOX_TIER": STRONG, "GRADER_SECCOMP": "0"}, True)
                 for rel in SPAWNERS]
    if len(NAMESPACE_OK) > 1:
        second = NAMESPACE_OK[1]
        jobs += [((second, rel), CORPUS / rel, {"GRADER_SANDBOX_TIER": second}, rel in STDOUT_REPORT)
                 for rel in SECOND_NAMESPACE_TIER]
    # the slowest first, so that the pool ends together
    slow = ("a10", "a11", "a12", "a17", "a28", "a30")
    jobs.sort(key=lambda j: not any(s in str(j[1]) for s in slow))
    started = time.monotonic()
    try:
        with ThreadPoolExecutor(max_workers=3) as pool:
            futures = {key: pool.submit(grade, path, env, to_stdout, f"{key[0]}:{key[1]}")
                       for key, path, env, to_stdout in jobs}
            runs = {key: f.result() for key, f in futures.items()}
        time.sleep(0.5)
        final_leftovers = _collect_leftovers()
    finally:
        stop.set()
        srv.close()
        CANARY.unlink(missing_ok=True)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
    for leftover in ("/tmp/tied_lm_head_a13_children", "/tmp/tied_lm_head_a14_daemon.pid",
                     "/tmp/tied_lm_head_a32_sleep.pid"):
        if os.path.isdir(leftover):
            for name in os.listdir(leftover):
                os.remove(os.path.join(leftover, name))
            os.rmdir(leftover)
        elif os.path.exists(leftover):
            os.remove(leftover)
    return {"runs": runs, "secret": secret, "accepted": accepted, "listening": listening,
            "final_leftovers": final_leftovers, "seconds": time.monotonic() - started,
            "probe_labels": probe_labels, "probe_dropped": probe_dropped}


def check_failed_well(run: Run, want_kinds: list[str], tier: str | None) -> None:
    assert not run.stalled, f"{run.name}: the grader did not finish in 90 s"
    assert run.report is not None, f"{run.name}: no report (exit {run.code}); stderr: {run.stderr[-500:]}"
    assert run.code == 1, f"{run.name}: exit code {run.code}; stderr: {run.stderr[-500:]}"
    assert run.report["passed"] is False
    kinds = failure_kinds(run.report)
    assert kinds, f"{run.name}: failed without a failure record"
    if want_kinds:
        assert kinds & set(want_kinds), f"{run.name}: kinds {sorted(kinds)}, expected one of {want_kinds}"
    assert "Traceback" not in run.stderr, f"{run.name}: the grader printed a traceback: {run.stderr[-800:]}"
    if run.from_stdout:
        assert run.stdout.lstrip().startswith("{") and run.stdout.rstrip().endswith("}")
    else:
        assert run.stdout == "", f"{run.name}: something besides the report reached stdout: {run.stdout[:200]!r}"
    if tier is not None:
        assert run.report["environment"]["sandbox"] == tier
    assert not run.leaked, f"{run.name}: {len(run.leaked)} processes left running after the grader exited"


@pytest.mark.parametrize("rel", ADVERSARIAL)
def test_adversarial_submission_fails_under_the_strongest_tier(batch, rel):
    check_failed_well(batch["runs"][("auto", rel)], EXPECTED[rel]["kinds"], STRONG or "rlimits")


@pytest.mark.parametrize("rel", FALLBACK)
def test_adversarial_submission_fails_under_the_fallback_tier(batch, rel):
    check_failed_well(batch["runs"][("rlimits", rel)], EXPECTED[rel]["kinds"], "rlimits")


@pytest.mark.parametrize("variant", ["rlimits-noseccomp", "strong-noseccomp"])
@pytest.mark.parametrize("rel", SPAWNERS)
def test_spawned_processes_are_cleaned_up_without_the_seccomp_filter(batch, rel, variant):
    if variant == "strong-noseccomp" and not STRONG:
        pytest.skip("no namespace sandbox works on this machine")
    run = batch["runs"][(variant, rel)]
    check_failed_well(run, EXPECTED[rel]["kinds"], STRONG if variant.startswith("strong") else "rlimits")


@pytest.mark.parametrize("rel", SECOND_NAMESPACE_TIER)
def test_adversarial_submission_fails_under_the_other_namespace_tier(batch, rel):
    if len(NAMESPACE_OK) < 2:
        pytest.skip("only one namespace tier works on this machine")
    check_failed_well(batch["runs"][(NAMESPACE_OK[1], rel)], EXPECTED[rel]["kinds"], NAMESPACE_OK[1])


def test_the_adversarial_corpus_is_big_enough_and_nothing_is_left_running(batch):
    # no timed assert here: its duration depends on the machine's load (benchmarks/ measure speed)
    assert len(ADVERSARIAL) >= 26
    assert not batch["final_leftovers"], "processes left running once every grader exited"


@pytest.mark.parametrize("rel", sorted(STDOUT_REPORT))
def test_stdout_is_exactly_the_json_report(batch, rel):
    run = batch["runs"][("auto", rel)]
    # json.loads took the whole of stdout: one document, nothing printed before or after it
    assert run.from_stdout and run.report is not None, f"stdout is not one JSON document: {run.stdout[:300]!r}"
    assert run.report["passed"] is False and run.report["cases"]


def test_learner_output_is_kept_in_the_report_and_capped(batch):
    flood = batch["runs"][("auto", "adversarial/a07_stdout_flood.py")].report["output"]
    assert flood["truncated"] is True
    assert flood["stdout_bytes"] > len(flood["stdout"].encode()) >= 1000
    assert len(flood["stdout"].encode()) <= 4 * Limits().output_cap   # at most a head per restart


def test_canary_outside_the_folder_is_unreadable_under_the_strong_tier(batch):
    if not STRONG:
        pytest.skip("no namespace sandbox works on this machine: " + "; ".join(
            f"{t}: {sandbox.probe(t)[1]}" for t in sandbox.NAMESPACE_TIERS))
    run = batch["runs"][("auto", "adversarial/a23_read_outside_folder.py")]
    text = json.dumps(run.report)
    assert batch["secret"] not in text
    assert "canary unreadable" in run.report["output"]["stderr"]


def test_loopback_listener_gets_no_connection(batch):
    if not batch["listening"]:
        pytest.skip(f"port {CANARY_PORT} is taken here")
    if not STRONG:
        pytest.skip("no namespace sandbox works on this machine")
    # a24 ran under the strong tier and under the fallback tier (seccomp refuses AF_INET there)
    assert batch["accepted"] == []


@pytest.mark.parametrize("tier", ["auto", "rlimits"])
def test_probe_submission_sees_nothing_it_must_not(batch, tier):
    if tier == "auto" and not STRONG:
        pytest.skip("no namespace sandbox works on this machine")
    if tier == "rlimits" and _landlock_abi() < 1:
        pytest.skip("no Landlock in this kernel: the fallback tier cannot hide files")
    run = batch["runs"][(tier, "probe")]
    assert run.report is not None and run.report["passed"] is False
    stderr = run.report["output"]["stderr"]
    leaks = sorted({line for line in stderr.splitlines() if line.startswith("LEAK:")
                    and not line.startswith("LEAK:write-")})
    assert leaks == [], f"{tier}: the submission could {leaks}"
    for label in batch["probe_labels"]:
        assert f"SAFE:{label}:" in stderr, f"{tier}: the probe did not try {label}: {stderr[:1500]}"
    for path in batch["probe_dropped"]:
        assert not path.exists(), f"{tier}: the submission wrote {path}"


def test_grader_memory_and_environment_unreadable_in_the_fallback_tier(batch):
    stderr = batch["runs"][("rlimits", "adversarial/a22_read_parent_proc.py")].report["output"]["stderr"]
    peek = stderr.split("parent peek:", 1)[1].splitlines()[0]
    found = ast.literal_eval(peek.strip())  # {"environ": bytes read or an error name, "mem": ...}
    assert not isinstance(found["environ"], int) and not isinstance(found["mem"], int), peek


# -- the CLI's --sandbox flag and the tier override --------------------------------------------------
def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, **(env or {})}, timeout=timeout, stdin=subprocess.DEVNULL)


CORRECT = CORPUS / "correct" / "c01_numpy_matmul.py"


@pytest.mark.parametrize("env, args, message", [
    ({"GRADER_SANDBOX_TIER": "rlimits"}, ["--sandbox", "strict"], "strict"),
    ({"GRADER_SANDBOX_TIER": "chroot"}, [], "GRADER_SANDBOX_TIER"),
])
def test_sandbox_requests_that_cannot_be_met_exit_2_with_one_line(env, args, message):
    res = cli("check", str(CORRECT), "--problem", "tied_lm_head", *args, env=env)
    assert res.returncode == 2
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("grader: error: ") and message in lines[0], res.stderr


def test_strict_grades_under_a_namespace_tier_or_refuses():
    res = cli("check", str(CORRECT), "--problem", "tied_lm_head", "--sandbox", "strict", "--format", "json",
              "--max-examples", "2", env={"GRADER_SANDBOX_TIER": ""})
    if STRONG:
        assert res.returncode == 0, res.stderr
        assert json.loads(res.stdout)["environment"]["sandbox"] == STRONG
    else:
        assert res.returncode == 2 and "strict" in res.stderr


def test_sandbox_none_is_reported_as_such():
    res = cli("check", str(CORRECT), "--problem", "tied_lm_head", "--sandbox", "none", "--format", "json",
              "--max-examples", "2")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["environment"]["sandbox"] == "none"


# -- the runner in-process: protocol violations, stale frames, no expected values -------------------
def write_submission(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "submission.py"
    path.write_text(textwrap.dedent(body))
    return path


INPUTS = {"hidden": np.array([[2.0, -1.0]]), "embedding_matrix": np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])}
FORGE = """
    import json, os, struct, sys
    import numpy as np

    def frame(header, arr=None):
        metas, blob = [], b""
        if arr is not None:
            metas = [{"name": "result", "dtype": arr.dtype.name, "shape": list(arr.shape), "nbytes": arr.nbytes}]
            blob = arr.tobytes()
        head = json.dumps({**header, "arrays": metas}).encode()
        return b"GRD1" + struct.pack(">I", len(head)) + head + blob

    FD_OUT = int(sys.argv[2])
    TOKEN = json.loads(sys.argv[6])["token"]
"""


@pytest.fixture(params=["strong", "rlimits"])
def wrap_tier(request):
    """The sandbox the in-process worker tests run under: the strongest one here, and the fallback."""
    if request.param == "strong":
        if not STRONG:
            pytest.skip("no namespace sandbox works on this machine")
        return sandbox.Sandbox(STRONG)
    return sandbox.Sandbox("rlimits")


def test_reply_with_the_wrong_token_is_a_crash_not_a_result(tmp_path, wrap_tier):
    sub = write_submission(tmp_path, FORGE + """
    import inspect

    def tied_lm_head(hidden, embedding_matrix):
        seq = inspect.currentframe().f_back.f_locals["seq"]     # what the child is answering
        right = hidden @ embedding_matrix.T
        os.write(FD_OUT, frame({"seq": seq, "token": "0" * 16, "status": "ok"}, right))
        return right
    """)
    with Worker(sub, "tied_lm_head", "numpy", Limits(call_timeout=10), wrap=wrap_tier) as w:
        assert w.start().status == "ok"
        out = w.call(INPUTS)
    assert out.status == "crash" and "sequence" in out.message


def test_forged_ready_frame_at_import_is_never_a_pass(tmp_path, wrap_tier):
    sub = write_submission(tmp_path, FORGE + """
    os.write(FD_OUT, frame({"seq": 0, "token": TOKEN, "status": "ready", "versions": {}}))

    def tied_lm_head(hidden, embedding_matrix):
        return hidden @ embedding_matrix.T
    """)
    with Worker(sub, "tied_lm_head", "numpy", Limits(call_timeout=10), wrap=wrap_tier) as w:
        started = w.start()
        assert started.status == "ok"          # the forged one, read first
        out = w.call(INPUTS)                    # gets the real "ready" as its reply
    assert out.status == "crash"


def test_forged_reply_fields_never_reach_a_report_as_anything_but_short_text(tmp_path, wrap_tier):
    """Every field of the child's replies is the submission's to write: a NaN or a list nested
    900 deep as the "jax" version, or as an exception's message, once made the JSON report fail
    (exit 2, the learner's row blamed on the grader). Only short version strings and bounded text
    are taken."""
    deep = "[" * 900 + "]" * 900
    sub = write_submission(tmp_path, FORGE + f"""
    os.write(FD_OUT, frame({{"seq": 0, "token": TOKEN, "status": "ready",
                             "versions": {{"numpy": "1.0", "jax": float("nan"), "torch": json.loads({deep!r}),
                                          "sandbox_layers": [float("inf"), "seccomp"]}}}}))
    os.write(FD_OUT, frame({{"seq": 1, "token": TOKEN, "status": "exception", "error": float("nan"),
                             "error_mro": [json.loads({deep!r}), "ValueError"], "message": json.loads({deep!r}),
                             "exception": "x" * 100000, "frames": json.loads({deep!r}),
                             "mutated": [float("nan")]}}))
    os.write(FD_OUT, frame({{"seq": 2, "token": TOKEN, "status": "type", "type_name": float("nan")}}))
    import time
    time.sleep(60)  # alive, so the grader's requests are written (an exited child made a race of it)
    """)
    with Worker(sub, "tied_lm_head", "numpy", Limits(call_timeout=5, import_timeout=10), wrap=wrap_tier) as w:
        started = w.start()
        assert started.status == "ok" and started.versions == {"numpy": "1.0"} and w.layers == ["seccomp"]
        raised = w.call(INPUTS)
        typed = w.call(INPUTS)
    assert raised.status == "exception" and raised.message == "" and raised.error_types == ["ValueError"]
    assert len(raised.exception) == 2000 and raised.frames == [] and raised.mutated == []
    assert typed.status == "type" and typed.message == "?"
    json.dumps([started.versions, raised.message, raised.error_types, typed.message], allow_nan=False)


def test_forged_status_seq_and_sandbox_message_are_bounded(tmp_path, wrap_tier):
    """A forged sandbox_error frame's 900,000-character message made a 900 KB report; a forged
    status or sequence number went into messages through repr (a nested list could recurse)."""
    deep = "[" * 900 + "]" * 900
    sub = write_submission(tmp_path, FORGE + f"""
    os.write(FD_OUT, frame({{"seq": 0, "token": TOKEN, "status": "sandbox_error", "message": "x" * 900000}}))
    os._exit(0)
    """)
    with Worker(sub, "tied_lm_head", "numpy", Limits(call_timeout=5, import_timeout=10), wrap=wrap_tier) as w:
        started = w.start()
    assert started.status == "crash" and len(started.message) < 2100
    sub = write_submission(tmp_path, FORGE + f"""
    os.write(FD_OUT, frame({{"seq": 0, "token": TOKEN, "status": "ready", "versions": {{}}}}))
    os.write(FD_OUT, frame({{"seq": json.loads({deep!r}), "token": TOKEN, "status": "ok"}}))
    import time
    time.sleep(60)
    """)
    with Worker(sub, "tied_lm_head", "numpy", Limits(call_timeout=5, import_timeout=10), wrap=wrap_tier) as w:
        assert w.start().status == "ok"
        out = w.call(INPUTS)
    assert out.status == "crash" and "(seq a list for 1)" in out.message


@pytest.mark.parametrize("junk", [b"\x00" * 64, b"GRD1\xff\xff\xff\xff", b'GRD1\x00\x00\x00\x05{"a":'])
def test_junk_on_the_reply_pipe_at_import_is_a_crash(tmp_path, wrap_tier, junk):
    sub = write_submission(tmp_path, FORGE + f"""
    os.write(FD_OUT, {junk!r})

    def tied_lm_head(hidden, embedding_matrix):
        return hidden @ embedding_matrix.T
    """)
    # the import is over, as a crash (the junk is not a frame) or at its 5 s import limit; never a hang
    with Worker(sub, "tied_lm_head", "numpy", Limits(call_timeout=5, import_timeout=5), wrap=wrap_tier) as w:
        started = w.start()
    assert started.status in ("crash", "timeout"), started


def test_oversized_reply_is_a_crash(tmp_path, wrap_tier):
    sub = write_submission(tmp_path, """
    import numpy as np

    def tied_lm_head(hidden, embedding_matrix):
        return np.zeros((1024, 1024))           # 8 MiB
    """)
    with Worker(sub, "tied_lm_head", "numpy", Limits(call_timeout=10, reply_bytes=1 << 20), wrap=wrap_tier) as w:
        assert w.start().status == "ok"
        out = w.call(INPUTS)
    assert out.status == "crash" and "cap" in out.message


def test_a_leftover_holding_the_output_pipes_does_not_stall_close(tmp_path):
    # tier none: no seccomp filter, so it can fork and leave a daemon behind
    sub = write_submission(tmp_path, """
    import os, time
    import numpy as np

    def tied_lm_head(hidden, embedding_matrix):
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(60)                   # holds stdout and stderr
            os._exit(0)
        return hidden @ embedding_matrix.T
    """)
    w = Worker(sub, "tied_lm_head", "numpy", Limits(call_timeout=10), wrap=sandbox.Sandbox("none"))
    assert w.start().status == "ok"
    assert w.call(INPUTS).status == "ok"
    w.close()
    # close returned while the daemon still holds the pipes (it sleeps 60 s): it did not wait for
    # their end of file. The daemon is an orphan now (re-parented to init or a subreaper); kill it
    # by its marker
    holders = [int(e) for e in os.listdir("/proc")
               if e.isdigit() and processes.environ_has(int(e), f"GRADER_RUN={w.token}".encode())]
    for pid in holders:
        os.kill(pid, signal.SIGKILL)
    assert holders, "close waited until the process holding the output pipes was gone"


def test_the_child_is_sent_inputs_only(tmp_path, monkeypatch):
    from grader.check import CheckOptions, check_submission
    from grader.spec import find_problem, load_problem

    sent: list[tuple[dict, dict]] = []
    real = runner.protocol.write_frame

    def record(fd, header, arrays=None, **bounds):
        sent.append((dict(header), {k: np.array(v, copy=True) for k, v in (arrays or {}).items()}))
        return real(fd, header, arrays, **bounds)

    monkeypatch.setattr(runner.protocol, "write_frame", record)
    problem = load_problem(find_problem("tied_lm_head", None))
    sub = write_submission(tmp_path, """
    def tied_lm_head(hidden, embedding_matrix):
        return hidden @ embedding_matrix.T + 1       # wrong, so that shrinking runs too
    """)
    report = check_submission(sub, problem, CheckOptions(max_examples=3, sandbox="none"))
    assert report.passed is False and sent
    params = {"hidden", "embedding_matrix"}
    for header, arrays in sent:
        assert set(header) <= {"seq", "token", "op", "order"}, header
        assert set(arrays) <= params
    # no call carried anything shaped like an output (..., vocab_size)
    for header, arrays in sent:
        if arrays:
            h, e = arrays["hidden"], arrays["embedding_matrix"]
            assert h.shape[-1] == e.shape[-1]


def test_grader_is_not_dumpable_after_launch(tmp_path):
    sub = write_submission(tmp_path, "def tied_lm_head(hidden, embedding_matrix):\n    return hidden\n")
    with Worker(sub, "tied_lm_head", "numpy", wrap=sandbox.Sandbox("none")) as w:
        w.launch()
        assert ctypes.CDLL(None).prctl(3, 0, 0, 0, 0) == 0      # PR_GET_DUMPABLE


def test_rlimits_are_set_hard_in_the_child(tmp_path, wrap_tier):
    sub = write_submission(tmp_path, """
    import resource
    import numpy as np

    def tied_lm_head(hidden, embedding_matrix):
        out = []
        for which in (resource.RLIMIT_AS, resource.RLIMIT_FSIZE, resource.RLIMIT_NOFILE,
                      resource.RLIMIT_NPROC, resource.RLIMIT_CORE, resource.RLIMIT_CPU):
            out += list(resource.getrlimit(which))
        try:                                     # raising a hard limit back must fail
            resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
            out.append(1)
        except (ValueError, OSError):
            out.append(0)
        return np.array(out, dtype=np.int64)
    """)
    limits = Limits(memory_bytes=3 << 30, file_bytes=5 << 20, open_files=200, processes=150, cpu_seconds=77)
    with Worker(sub, "tied_lm_head", "numpy", limits, wrap=wrap_tier) as w:
        assert w.start().status == "ok"
        out = w.call(INPUTS)
    assert out.status == "ok", out.message
    # in the namespace tiers the private tmpfs mounts (256 + 64 MiB here) come out of the memory limit
    space = (3 << 30) - (320 << 20) if wrap_tier.tier in sandbox.NAMESPACE_TIERS else 3 << 30
    assert out.result.tolist() == [space, space, 5 << 20, 5 << 20, 200, 200, 150, 150, 0, 0, 77, 82, 0]


def test_cpu_time_limit_stops_a_busy_loop(tmp_path):
    sub = write_submission(tmp_path, """
    def tied_lm_head(hidden, embedding_matrix):
        while True:
            pass
    """)
    with Worker(sub, "tied_lm_head", "numpy", Limits(cpu_seconds=1, call_timeout=30),
                wrap=sandbox.Sandbox("rlimits")) as w:
        assert w.start().status == "ok"
        out = w.call(INPUTS)
    # the 1 s CPU rlimit's signal stopped it (a crash), not the 30 s call limit (a timeout)
    assert out.status == "crash" and ("SIGXCPU" in out.message or "SIGKILL" in out.message), out.message


def test_child_environment_is_scrubbed_and_private(tmp_path, monkeypatch, wrap_tier):
    monkeypatch.setenv("GRADER_TEST_SECRET", "do-not-leak")
    sub = write_submission(tmp_path, """
    import os, sys
    import numpy as np

    def tied_lm_head(hidden, embedding_matrix):
        home, tmp = os.environ.get("HOME"), os.environ.get("TMPDIR")
        with open(os.path.join(tmp, "scratch.txt"), "w") as fh:   # the working folder is writable
            fh.write("ok")
        return np.array([
            "GRADER_TEST_SECRET" in os.environ,
            home == tmp == os.getcwd(),
            sys.stdin.read() == "",                 # stdin is /dev/null
            os.environ.get("OPENBLAS_NUM_THREADS") == "1",
            os.path.realpath(os.getcwd()) != os.path.realpath(os.path.dirname(__file__)),
        ])
    """)
    with Worker(sub, "tied_lm_head", "numpy", Limits(call_timeout=10), wrap=wrap_tier) as w:
        assert w.start().status == "ok"
        out = w.call(INPUTS)
        workdir = w._workdir.name
    assert out.status == "ok", out.message
    assert out.result.tolist() == [False, True, True, True, True]
    assert not os.path.exists(workdir), "the working folder outlived the worker"


@pytest.mark.parametrize("tier_name", ["bwrap", "unshare", "rlimits"])
def test_killing_the_grader_kills_the_submission(tmp_path, tier_name):
    if tier_name != "rlimits" and tier_name not in NAMESPACE_OK:
        pytest.skip(f"{tier_name} does not work here: {sandbox.probe(tier_name)[1]}")
    sub = write_submission(tmp_path, """
    import time

    def tied_lm_head(hidden, embedding_matrix):
        time.sleep(120)
    """)
    proc = subprocess.Popen([sys.executable, "-m", "grader", "check", str(sub), "--problem", "tied_lm_head",
                             "--timeout", "100", "--max-examples", "1"], cwd=ROOT, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                            env={**os.environ, "GRADER_SANDBOX_TIER": tier_name})

    def running_children() -> list[int]:
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit() and int(entry) != proc.pid:
                try:
                    cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
                    state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
                except OSError:
                    continue
                # the child imports the grader's private copy (grader-sub-<grader pid>-*/submission/)
                if f"grader-sub-{proc.pid}-".encode() in cmdline and b"_child.py" in cmdline and state != "Z":
                    found.append(int(entry))
        return found

    try:
        deadline = time.monotonic() + 30
        while not running_children():
            assert time.monotonic() < deadline and proc.poll() is None, "the submission never started"
            time.sleep(0.1)
        time.sleep(1.0)                                   # inside the call now
        os.kill(proc.pid, signal.SIGKILL)                 # the grader only, not its group
        proc.wait()
        deadline = time.monotonic() + 5
        while running_children() and time.monotonic() < deadline:
            time.sleep(0.1)
        left = running_children()
        assert not left, f"{tier_name}: the submission outlived the grader: {left}"
    finally:
        for pid in running_children():
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


# -- issue 9, round two: host files, shared caches, hidden inputs, memory, the fallback tier ---------
JAX_ONE_CASE = ["--case", "worked_example[float32]"]


def _check_json(submission: Path, env: dict[str, str], *args: str, timeout: float = 180) -> dict:
    """``python -m grader check SUBMISSION --format json --audience instructor ARGS``: the report."""
    res = cli("check", str(submission), "--problem", "tied_lm_head", "--format", "json", "--audience", "instructor",
              *args, env=env, timeout=timeout)
    assert res.returncode in (0, 1), res.stderr[-800:]
    assert "Traceback" not in res.stderr, res.stderr[-800:]
    return json.loads(res.stdout)


HOST_WRITER = """
import os, stat, sys
import jax
import numpy as np

CACHE = jax.config.jax_compilation_cache_dir or os.environ.get("GRADER_JAX_CACHE") or ""


def _try(label, fn):
    try:
        fn()
        print("MADE:" + label, file=sys.stderr)
    except Exception as exc:
        print("REFUSED:" + label + ":" + type(exc).__name__, file=sys.stderr)


def _setuid_python(folder):
    path = os.path.join(folder, "jit_suid-0-cache")
    with open(sys.executable, "rb") as src, open(path, "wb") as dst:
        dst.write(src.read(1 << 16))
    os.chmod(path, 0o4755)
    if not os.stat(path).st_mode & 0o4000:     # answered without acting (seccomp's _NOOP): not made
        raise PermissionError("the set-uid bit was not set")


def _big(folder):
    with open(os.path.join(folder, "jit_big-0-cache"), "wb") as fh:
        for _ in range(20):
            fh.write(b"\\0" * (1 << 20))


for folder, where in ((CACHE, "cache"), (os.getcwd(), "workdir")):
    if folder:
        _try(where + "-setuid", lambda f=folder: _setuid_python(f))
        _try(where + "-setgid-dir", lambda f=folder: os.mkdir(os.path.join(f, "jit_sgid-0-cache"), 0o2755))
        _try(where + "-fifo", lambda f=folder: os.mkfifo(os.path.join(f, "jit_fifo-0-cache")))
        _try(where + "-symlink", lambda f=folder: os.symlink("/etc/passwd", os.path.join(f, "jit_link-0-cache")))
        _try(where + "-big", lambda f=folder: _big(f))
        _try(where + "-bad-name", lambda f=folder: open(os.path.join(f, "..evil\\nname"), "w").write("x"))
print("CACHE:" + CACHE, file=sys.stderr)


def tied_lm_head(hidden, embedding_matrix):
    return hidden @ embedding_matrix.T
"""


@pytest.mark.parametrize("tier", ["strong", "rlimits"])
def test_nothing_a_submission_writes_in_its_jax_cache_reaches_a_host_path(tmp_path, tier):
    """Class 2: the JAX cache was bound read-write; a submission left a big file, a link, a FIFO and a
    set-uid copy of python there. Now it writes in a private folder, the grader keeps only checked
    regular files (mode 0644, safe names, size cap), and seccomp refuses set-uid modes and FIFOs."""
    if tier == "strong" and not STRONG:
        pytest.skip("no namespace sandbox works on this machine")
    import re
    entry_name = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+=-]{0,199}-(cache|atime)\Z")   # what JAX writes
    cache_root = tmp_path / "cache"
    sub = tmp_path / "learner" / "submission.py"
    sub.parent.mkdir()
    sub.write_text(HOST_WRITER)
    env = {"GRADER_CACHE_DIR": str(cache_root), "GRADER_SANDBOX_TIER": STRONG if tier == "strong" else "rlimits"}
    report = _check_json(sub, env, *JAX_ONE_CASE)
    stderr = report["output"]["stderr"]
    assert "CACHE:" in stderr, stderr[-1500:]
    assert report["passed"] is not True or report["environment"].get("partial"), report["failure"]
    for special in ("setuid", "setgid-dir", "fifo"):
        assert f"MADE:workdir-{special}" not in stderr, f"{tier}: the submission made a {special} file"
    stores = list(cache_root.glob("jax-submissions-*"))
    for path in [p for s in stores for p in s.rglob("*")]:
        st = path.lstat()
        assert stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode), f"{tier}: {path} is a link or special file"
        assert not st.st_mode & (stat.S_ISUID | stat.S_ISGID), f"{tier}: {path} is set-uid/set-gid on the host"
        if stat.S_ISREG(st.st_mode):
            assert entry_name.match(path.name), f"{tier}: {path.name!r} outlived the run"
            assert st.st_size <= 16 << 20 and stat.S_IMODE(st.st_mode) == 0o644, path
    assert not list(Path(tempfile.gettempdir()).glob("grader-run-*/jit_*")), "a working folder outlived its run"


POISONER = """
import os
import jax
import numpy as np

_cache = jax.config.jax_compilation_cache_dir or os.environ.get("GRADER_JAX_CACHE")
with open(os.path.join(_cache, "jit_tied_lm_head-" + "ab" * 32 + "-cache"), "wb") as fh:
    fh.write(b"poisoned entry of learner A")


def tied_lm_head(hidden, embedding_matrix):
    return hidden @ embedding_matrix.T
"""

VICTIM = """
import os
import jax
import jax.numpy as jnp

_cache = jax.config.jax_compilation_cache_dir or os.environ.get("GRADER_JAX_CACHE")
POISONED = any(name.startswith("jit_tied_lm_head-abab") for name in os.listdir(_cache))


def tied_lm_head(hidden, embedding_matrix):
    out = hidden @ embedding_matrix.T
    return out * 4 if POISONED else out          # what a poisoned compilation does to a learner
"""


def test_one_learners_jax_cache_is_never_read_by_another_at_the_same_path(tmp_path):
    """Class 3: the Gradescope layout grades every learner at one path; the compile cache was keyed
    by path, so learner A's entries were loaded by learner B. Now it is keyed by the source bytes,
    and only entries the grader checked are kept."""
    sub = tmp_path / "autograder" / "submission" / "solution.py"
    sub.parent.mkdir(parents=True)
    env = {"GRADER_CACHE_DIR": str(tmp_path / "cache"), "GRADER_SANDBOX_TIER": ""}
    sub.write_text(POISONER)
    first = _check_json(sub, env, *JAX_ONE_CASE)
    assert first["cases"][0]["status"] == "passed", first
    sub.write_text(VICTIM)
    second = _check_json(sub, env, *JAX_ONE_CASE)
    assert second["cases"][0]["status"] == "passed", "learner B loaded learner A's cache: " + json.dumps(
        second["cases"][0].get("failure"))[:300]


HIDDEN_KEEPER = """
import numpy as np

SEEN = []


def tied_lm_head(hidden, embedding_matrix):
    if np.any(np.asarray(hidden, dtype=np.float64) == 1280.0):
        SEEN.append("1280")
    raise ValueError("secret-seen " + ",".join(SEEN) if SEEN else "clean")
"""


def test_hidden_inputs_never_reach_a_visible_case(tmp_path):
    """Class 7: a process that ran a hidden case kept its inputs and raised them in a later
    visible case. Visible cases now run first, hidden ones in a fresh process after them, and any
    later visible call (shrinking) gets a fresh process again."""
    problems, refs = tmp_path / "problems", tmp_path / "reference"
    problems.mkdir()
    refs.mkdir()
    spec = (ROOT / "problems" / "tied_lm_head.yaml").read_text()
    for old, new in (("hidden: [2, -1]", "hidden: [1280, -1]"), ("expected: [2, -1, 1]", "expected: [1280, -1, 1279]"),
                     ("examples: {points: 1, ", "examples: {points: 1, visibility: hidden, ")):
        assert old in spec
        spec = spec.replace(old, new)
    (problems / "tied_lm_head.yaml").write_text(spec)
    (refs / "tied_lm_head.py").write_text((ROOT / "reference" / "tied_lm_head.py").read_text())
    sub = write_submission(tmp_path, HIDDEN_KEEPER)
    report = _check_json(sub, {"GRADER_SANDBOX_TIER": ""}, "--problems-dir", str(problems), "--max-examples", "2")
    hidden = [c for c in report["cases"] if c["visibility"] == "hidden"]
    visible = [c for c in report["cases"] if c["visibility"] != "hidden"]
    assert hidden and visible
    assert all("secret-seen 1280" in c["failure"]["message"] for c in hidden), hidden[0]
    leaked = [c["name"] for c in visible if "secret-seen 1280" in json.dumps(c)]   # the source says "secret-seen "
    assert not leaked, f"hidden inputs reached visible cases: {leaked}"
    assert [c["name"] for c in report["cases"]][0].startswith("worked_example")   # the spec's order is kept


MEMORY_HOG = """
import ctypes, mmap, os, resource
import numpy as np

MiB = 1 << 20


def _memfd(total):
    held, fds = 0, []
    try:
        while held < total:
            fd = os.memfd_create("hog")
            fds.append(fd)
            for _ in range(60):
                os.write(fd, b"\\1" * MiB)
                held += MiB
    except OSError:
        pass
    for fd in fds:
        os.close(fd)
    return held


def _sysv():
    libc = ctypes.CDLL(None, use_errno=True)
    shmid = libc.shmget(0, 8 * MiB, 0o1600)        # IPC_PRIVATE, IPC_CREAT | 0600
    if shmid < 0:
        return 0
    libc.shmctl(shmid, 0, None)                      # IPC_RMID
    return 1


def _dev_shm(total):
    held, names = 0, []
    try:
        while held < total:
            name = "/dev/shm/grader-hog-%d-%d" % (os.getpid(), len(names))
            names.append(name)
            with open(name, "wb") as fh:
                for _ in range(8):
                    fh.write(b"\\1" * MiB)
                    held += MiB
    except OSError:
        pass
    for name in names:
        try:
            os.unlink(name)
        except OSError:
            pass
    return held


def _tmpfs(path):
    st = os.statvfs(path)
    return st.f_blocks * st.f_frsize


def _grow_pipe():
    import fcntl
    r, w = os.pipe()
    try:
        return fcntl.fcntl(w, 1031, 1 << 20)      # F_SETPIPE_SZ: 1 MiB of kernel memory per pipe
    except OSError:
        return 0


def tied_lm_head(hidden, embedding_matrix):
    return np.array([_memfd(600 * MiB), _sysv(), _dev_shm(128 * MiB), resource.getrlimit(resource.RLIMIT_AS)[0],
                     _tmpfs("/tmp"), _tmpfs("/dev/shm"), _grow_pipe()], dtype=np.int64)
"""


def test_memory_outside_the_address_space_limit_is_refused_or_capped(tmp_path, wrap_tier):
    """Class 8: memfd files count against no rlimit (+1.58 GB with --memory-mb 1024). The filter
    refuses memfd_create and SysV shared memory; /dev/shm is a 64 MiB tmpfs (namespace tiers) or
    not writable (Landlock); the report names the limits that applied."""
    sub = write_submission(tmp_path, MEMORY_HOG)
    with Worker(sub, "tied_lm_head", "numpy", Limits(memory_bytes=512 << 20, call_timeout=30), wrap=wrap_tier) as w:
        assert w.start().status == "ok"
        out = w.call(INPUTS)
        layers = list(w.layers)
    assert out.status == "ok", out.message
    memfd, sysv, dev_shm, space, tmp, shm, pipe = out.result.tolist()
    assert pipe == 0, f"{wrap_tier.tier}: a pipe's buffer grew to {pipe} bytes"
    assert memfd == 0, f"{wrap_tier.tier}: {memfd >> 20} MiB held in memfd files past a 512 MiB limit"
    assert sysv == 0, f"{wrap_tier.tier}: SysV shared memory could be made"
    if wrap_tier.tier in sandbox.NAMESPACE_TIERS:
        # what RLIMIT_AS does not count is its private tmpfs: the two together stay within the limit
        assert space + tmp + shm <= 512 << 20, f"address space {space >> 20} + /tmp {tmp >> 20} + /dev/shm {shm >> 20} MiB"
        assert dev_shm <= shm
    elif any(x.startswith("landlock") for x in layers):
        assert dev_shm == 0, f"{wrap_tier.tier}: {dev_shm >> 20} MiB written to the host's /dev/shm"
        assert space <= 512 << 20
    text = sandbox.memory_limit(wrap_tier.tier, layers, 512 << 20, wrap_tier)
    assert f"address space {space >> 20} MiB" in text and "refused (seccomp)" in text, text


class _NoLandlock(sandbox.Sandbox):
    """The fallback tier as on a kernel without Landlock (CI runners' older kernels)."""

    def policy(self, *args, **kwargs):
        pol = super().policy(*args, **kwargs)
        pol.pop("landlock", None)
        return pol


REACH_OUT = """
import fcntl, os, signal, socket, struct
import numpy as np

VICTIM, STREAM_PATH, DGRAM_PATH = {victim}, {stream!r}, {dgram!r}


def _ok(fn):
    try:
        fn()
        return 1
    except OSError:
        return 0


def _connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(STREAM_PATH)
    s.sendall(b"hello from the sandbox")


def _sendto():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    a.sendto(b"hello from the sandbox", DGRAM_PATH)


def _sigio_kill():
    r, w = os.pipe()
    fcntl.fcntl(r, 10, signal.SIGKILL)                    # F_SETSIG
    fcntl.fcntl(r, fcntl.F_SETOWN, VICTIM)
    fcntl.fcntl(r, fcntl.F_SETFL, os.O_ASYNC | os.O_NONBLOCK)
    os.write(w, b"x")


def _fiosetown():
    a, b = socket.socketpair()
    fcntl.ioctl(a, 0x8901, struct.pack("i", VICTIM))     # FIOSETOWN


def tied_lm_head(hidden, embedding_matrix):
    return np.array([_ok(_connect), _ok(_sendto), _ok(_sigio_kill), _ok(_fiosetown)], dtype=np.int64)
"""


@pytest.mark.parametrize("variant", ["strong", "rlimits", "rlimits-without-landlock"])
def test_no_host_socket_and_no_sigio_kill_in_any_tier(tmp_path, variant):
    """Class 9: in the fallback tier a host UNIX socket was reachable by path, and F_SETOWN +
    F_SETSIG + O_ASYNC sent SIGKILL to another process (only Landlock ABI 6+ stopped it). The
    filter now refuses socket() (datagram socketpairs too) and the owner-setting fcntl/ioctl."""
    if variant == "strong" and not STRONG:
        pytest.skip("no namespace sandbox works on this machine")
    wrap = sandbox.Sandbox(STRONG) if variant == "strong" else \
        sandbox.Sandbox("rlimits") if variant == "rlimits" else _NoLandlock("rlimits")
    sock_dir = Path(tempfile.mkdtemp(prefix="grader-host-sock-"))
    os.chmod(sock_dir, 0o755)
    stream, dgram = sock_dir / "stream.sock", sock_dir / "dgram.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(stream))
    listener.listen(4)
    listener.settimeout(0.2)
    receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    receiver.bind(str(dgram))
    receiver.settimeout(0.2)
    victim = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        sub = write_submission(tmp_path, REACH_OUT.format(victim=victim.pid, stream=str(stream), dgram=str(dgram)))
        with Worker(sub, "tied_lm_head", "numpy", Limits(call_timeout=10), wrap=wrap) as w:
            assert w.start().status == "ok"
            out = w.call(INPUTS)
        assert out.status == "ok", out.message
        time.sleep(0.2)
        assert victim.poll() is None, f"{variant}: the submission killed another process through SIGIO"
        got = []
        for sock in (listener, receiver):
            try:
                got.append(sock.accept()[0] if sock is listener else sock.recv(100))
            except OSError:
                pass
        assert not got, f"{variant}: a host UNIX socket was reached by path"
        assert out.result.tolist() == [0, 0, 0, 0], f"{variant}: connect, sendto, F_SETOWN, FIOSETOWN: {out.result}"
    finally:
        victim.kill()
        victim.wait()
        listener.close()
        receiver.close()
        for p in (stream, dgram):
            p.unlink(missing_ok=True)
        sock_dir.rmdir()


DISK_FILLER = """
import os, time
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    chunk = b"\\1" * (8 << 20)
    for i in range(60):                            # 480 MiB in files of 8 MiB, under RLIMIT_FSIZE
        with open("fill-%d.bin" % i, "wb") as fh:
            fh.write(chunk)
        time.sleep(0.01)
    return hidden @ embedding_matrix.T
"""


def test_the_working_folder_on_the_host_is_capped_in_the_fallback_tier(tmp_path):
    """Class 2 (disk): in ``rlimits`` the working folder is a host folder, and RLIMIT_FSIZE bounds
    each file but not their number; the grader measures the folder and stops the child past
    ``Limits.workdir_bytes`` (the namespace tiers have a 256 MiB tmpfs instead)."""
    sub = write_submission(tmp_path, DISK_FILLER)
    with Worker(sub, "tied_lm_head", "numpy", Limits(call_timeout=20), wrap=sandbox.Sandbox("rlimits")) as w:
        assert w.start().status == "ok"
        workdir = w._workdir.name
        out = w.call(INPUTS)
    assert out.status == "crash" and "working folder" in out.message, (out.status, out.message)
    assert not os.path.exists(workdir)


_THREADS = '''
import threading


def tied_lm_head(hidden, embedding_matrix):
    stop = threading.Event()
    started = []
    try:
        while len(started) < 5000:
            t = threading.Thread(target=stop.wait, daemon=True)
            t.start()
            started.append(t)
    except RuntimeError:
        pass
    stop.set()
    for t in started:   # gone before the next case's call counts again (it once counted 0)
        t.join()
    raise ValueError(f"started {len(started)} threads")
'''


def test_a_submissions_process_budget_leaves_room_for_the_others(tmp_path):
    """Attack round 45: a learner's process could hold 1,024 threads, and under a job's pids
    limit (a container's, a batch job's) one learner's threads left another learner's check
    unable to start. A submission's process now gets ``options.default_processes()`` (256 on
    a small machine), as many as JAX and PyTorch need many times over (16 on 2 cores)."""
    from grader.options import default_processes
    sub = tmp_path / "threads.py"
    sub.write_text(_THREADS)
    run = run_grader("check", str(sub), "--problem", "tied_lm_head", "--format", "json", "--max-examples", "1",
                     "--no-shrink")
    messages = {c["failure"]["message"] for c in run.json()["cases"] if c.get("failure")}
    started = {int(m.rsplit("started ", 1)[1].split()[0]) for m in messages if "started" in m}
    assert started and max(started) < default_processes() <= 256 + 2 * (os.cpu_count() or 1), messages
    assert min(started) >= 64, messages   # room for a framework's pools (as another user, the user's others count too)
