"""Security round four, class 6: two graders kill each other's learners (docs/security.md).

Two root graders that share /proc but not /run (a chroot, a ``--pid=host`` container, two CI
jobs on one runner with private /run) each took uids by a lock file in their own /run, so both
could hold one uid at once, and each swept every uid of the range whose lock it could take: a
correct file scored 3.88/10 beside a second grader and 10/10 alone. Now a uid is claimed in the
kernel's process table (the uid's watchdog, a root process whose saved gid is that uid), which
every grader sharing /proc sees, and a grader kills only processes of a uid it claims, or of a
uid no live claim marks, seen twice (``grader.sandbox.SandboxUser``, ``_sweep_unheld``).

The unit tests make another grader's claim and its child by hand (a root process with
``setresgid(0, 0, U)``; a process of uid U) and check that taking, releasing and sweeping spare
them. The last test runs two real graders in mount namespaces of their own (a tmpfs over /run and
/tmp each) at once on a range of four uids, and compares their verdicts with one grader alone.
"""
from __future__ import annotations

import os
import shlex
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader import sandbox, sandbox_user
from grader.errors import GraderError

ROOT = Path(__file__).resolve().parent.parent
GRADER = Path(sys.executable).with_name("grader")

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: sandbox users are claimed only by a "
                                                         "grader that runs as root")

#: another grader's watchdog, made by hand: root, with saved gid U (the claim of U)
CLAIM = "import os, sys, time; os.setresgid(0, 0, int(sys.argv[1])); print('ready', flush=True); time.sleep(120)"


def _range(count: int) -> int:
    """The first uid of a range of ``count`` uids of its own for one test (not the default
    range the other tests use, nor another test's of this file)."""
    return 0x7C000000 + secrets.randbelow(1 << 20) * 16


def _ids(pid: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    uids = gids = ()
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            uids = tuple(int(x) for x in line.split()[1:])
        elif line.startswith("Gid:"):
            gids = tuple(int(x) for x in line.split()[1:])
    return uids, gids


def _alive(proc: subprocess.Popen) -> bool:
    if proc.poll() is not None:
        return False
    state = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    return state != "Z"


class _Others:
    """Processes standing for another grader: its claim of a uid, its child running as that
    uid. Killed at the end, whatever happened."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen] = []

    def claim(self, uid: int) -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", CLAIM, str(uid)], stdout=subprocess.PIPE,
                                text=True, start_new_session=True)
        self.procs.append(proc)
        assert proc.stdout.readline().strip() == "ready"
        assert _ids(proc.pid) == ((0, 0, 0, 0), (0, 0, uid, 0))
        return proc

    def child(self, uid: int) -> subprocess.Popen:
        proc = subprocess.Popen(["sleep", "120"], user=uid, group=uid, extra_groups=[], cwd="/",
                                start_new_session=True)
        self.procs.append(proc)
        deadline = time.monotonic() + 30
        while sandbox.processes_of(uid).count(proc.pid) == 0 and time.monotonic() < deadline:
            time.sleep(0.01)                    # until exec'd as the uid
        return proc

    def end(self) -> None:
        for proc in self.procs:
            proc.kill()
            proc.wait(timeout=30)


@pytest.fixture
def others():
    made = _Others()
    try:
        yield made
    finally:
        made.end()


@pytest.fixture
def uids(monkeypatch):
    """A range of two uids of this test's own; taking gives up after 0.5 s (not 10)."""
    start = _range(2)
    monkeypatch.setenv(sandbox.ENV_UIDS, f"{start}:2")
    monkeypatch.setattr(sandbox_user, "TAKE_WAIT", 0.5)
    return start


@ROOT_ONLY
def test_the_watchdog_is_the_claim_and_the_sandbox_user_cannot_signal_it(uids):
    """The claim is the watchdog's saved gid: its uids stay root (its capabilities kept), so the
    sandbox user, which may signal only processes whose real or saved uid is its own, cannot
    kill it; the claim ends with the release."""
    user = sandbox.SandboxUser.take()
    try:
        watchdog = user._watchdog.pid
        assert _ids(watchdog) == ((0, 0, 0, 0), (0, 0, user.uid, 0))
        assert sandbox.processes_of(user.uid) == [], "a claim counted as a process of the sandbox user"
        probe = subprocess.run(["sh", "-c", f"kill -0 {watchdog} 2>/dev/null; echo $?"], user=user.uid,
                               group=user.uid, extra_groups=[], cwd="/", capture_output=True, text=True, timeout=60)
        assert probe.stdout.strip() not in ("", "0"), "the sandbox user may signal its watchdog"
        mine = subprocess.run(["sh", "-c", "kill -0 $$; echo $?"], user=user.uid, group=user.uid, extra_groups=[],
                              cwd="/", capture_output=True, text=True, timeout=60)
        assert mine.stdout.strip() == "0"               # the shell's kill works: the refusal above is the kernel's
    finally:
        user.release()
    assert not any(sandbox_user._marks(ids, user.uid) for ids in sandbox_user._process_ids().values())


@ROOT_ONLY
def test_take_skips_a_uid_another_grader_claims(uids, others):
    """Another grader with its own /run holds ``uids``: no lock file here says so, its watchdog
    does. The uid taken is the other one; with both claimed, none is."""
    others.claim(uids)
    for _ in range(5):
        user = sandbox.SandboxUser.take()
        try:
            assert user.uid == uids + 1
        finally:
            user.release()
    others.claim(uids + 1)
    with pytest.raises(GraderError, match="no sandbox user is free"):
        sandbox.SandboxUser.take()


@ROOT_ONLY
def test_a_claim_that_loses_a_race_kills_only_its_own_watchdog(uids, others, monkeypatch):
    """Two graders announce one uid at once: the first look saw neither. The loser must SIGKILL
    its own watchdog, not close its pipe (its kill loop would end the winner's learner)."""
    claim = others.claim(uids)
    child = others.child(uids)
    others.claim(uids + 1)
    real = sandbox_user._in_use
    monkeypatch.setattr(sandbox_user, "_in_use", lambda table, uid, besides=0: besides != 0 and real(table, uid, besides))
    started: list[subprocess.Popen] = []
    real_start = sandbox.SandboxUser._start_watchdog

    def start(self):
        real_start(self)
        started.append(self._watchdog)
    monkeypatch.setattr(sandbox.SandboxUser, "_start_watchdog", start)
    with pytest.raises(GraderError):
        sandbox.SandboxUser.take()
    assert started, "no claim was announced"
    assert all(w.returncode == -9 for w in started), "a losing claim's watchdog ran its kill loop"
    assert _alive(claim) and _alive(child), "the race's loser killed the winner's processes"


@ROOT_ONLY
def test_release_kills_the_uids_processes_but_never_a_root_process_with_its_gid(uids, others):
    """``release`` (the grader's kill and the watchdog's loop) kills the processes of its uid; a
    root process with the uid among its gids (a claim; a child between setresgid and setresuid)
    is never one of them."""
    user = sandbox.SandboxUser.take()
    try:
        rooted = others.claim(user.uid)
        child = others.child(user.uid)
        assert sandbox.processes_of(user.uid) == [child.pid]
    finally:
        user.release()
    assert child.wait(timeout=30) == -9
    assert _alive(rooted)


@ROOT_ONLY
def test_the_sweep_spares_a_claimed_uid_and_kills_an_unclaimed_ones(uids, others, tmp_path):
    """The startup sweep: the process of a uid another grader claims lives on; the process of a
    uid no one claims (a grader and its watchdog killed with SIGKILL) is killed."""
    folder = tmp_path / "locks"
    folder.mkdir(mode=0o700)
    others.claim(uids)
    theirs = others.child(uids)
    leftover = others.child(uids + 1)
    assert sandbox_user._sweep_unheld(str(folder), uids, 2) == 1
    assert leftover.wait(timeout=30) == -9
    assert _alive(theirs)


@ROOT_ONLY
def test_the_sweep_spares_a_uid_held_here(uids, others, tmp_path):
    """A uid whose lock file here is held (an older grader beside this one, with no claim in
    /proc) is not swept either."""
    folder = tmp_path / "locks"
    folder.mkdir(mode=0o700)
    fd = sandbox_user._hold(str(folder), uids)
    try:
        child = others.child(uids)
        assert sandbox_user._sweep_unheld(str(folder), uids, 2, wait=0.5) == 0
        assert _alive(child)
    finally:
        os.close(fd)


@ROOT_ONLY
def test_two_graders_with_their_own_lock_folders_never_hold_one_uid_at_once(tmp_path):
    """Two processes (each its own lock folder: a private /run) take and release the one uid of
    a range 25 times each, at once: the spans in which each holds it never overlap."""
    start = _range(1)
    code = ("import os, sys, time\n"
            "from grader import sandbox, sandbox_user\n"
            "sandbox_user._lock_folder = lambda: sys.argv[1]\n"
            "for _ in range(25):\n"
            "    u = sandbox.SandboxUser.take()\n"
            "    t0 = time.monotonic(); time.sleep(0.005); t1 = time.monotonic()\n"
            "    u.release()\n"
            "    print(t0, t1, flush=True)\n")
    env = {**os.environ, sandbox.ENV_UIDS: f"{start}:1", "PYTHONPATH": str(ROOT)}
    procs = []
    for name in ("a", "b"):
        folder = tmp_path / name
        folder.mkdir(mode=0o700)
        procs.append(subprocess.Popen([sys.executable, "-c", code, str(folder)], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, env=env, cwd=str(ROOT)))
    spans = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err[-2000:]
        spans.append([tuple(float(x) for x in line.split()) for line in out.splitlines()])
    assert all(len(s) == 25 for s in spans)
    clashes = [(a, b) for a in spans[0] for b in spans[1] if a[0] < b[1] and b[0] < a[1]]
    assert not clashes, f"both held the uid at once: {clashes[:3]}"


# -- two real graders, each in a mount namespace of its own -------------------------------------

def _namespaces_work() -> str:
    if os.geteuid() != 0:
        return "needs root: the sandbox users"
    if shutil.which("unshare") is None:
        return "no unshare"
    if not GRADER.exists():
        return f"no {GRADER}"
    try:
        probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs none /run && mount -t tmpfs none /tmp"],
                               capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unshare -m: {exc}"
    return "" if probe.returncode == 0 else f"unshare -m cannot mount here: {probe.stderr.strip()[-200:]}"


def _graders(names: str, rounds: int, at_once: int, start: int) -> dict[str, list[str]]:
    """Run one grader per letter of ``names``, each in ``unshare -m`` with a fresh tmpfs over /run
    and /tmp (nothing of the other's lock files or working folders to see; /proc shared), all
    at once: ``rounds`` times ``at_once`` checks of the correct file. Their verdict lines by name."""
    check = (f"{GRADER} check submissions/correct_numpy.py --problem tied_lm_head --max-examples 4 -q "
             "--sandbox auto")
    # what the grader runs from and lies under /tmp (a CI clone, a venv there) is bound back over
    # the fresh /tmp, at the same path, through a holding place in the fresh /run
    keep = sorted({os.path.realpath(p) for p in (str(ROOT), sys.prefix, sys.base_prefix)
                   if os.path.realpath(p).startswith("/tmp/")})
    hold = "".join(f"mkdir -p /run/keep{n} && mount --bind {shlex.quote(k)} /run/keep{n} || exit 3\n"
                   for n, k in enumerate(keep))
    back = "".join(f"mkdir -p {shlex.quote(k)} && mount --bind /run/keep{n} {shlex.quote(k)} || exit 3\n"
                   for n, k in enumerate(keep))
    script = ("mount -t tmpfs none /run || exit 3\n" + hold + "mount -t tmpfs none /tmp || exit 3\n" + back +
              f"i=0; while [ $i -lt {rounds} ]; do\n"
              f"  j=0; while [ $j -lt {at_once} ]; do {check} 2>&1 & j=$((j+1)); done; wait\n"
              "  i=$((i+1))\n"
              "done\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GRADER_", "PYTEST_"))}
    env[sandbox.ENV_UIDS] = f"{start}:4"
    procs = {name: subprocess.Popen(["unshare", "-m", "sh", "-c", script], stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True, cwd=str(ROOT), env=env)
             for name in names}
    out = {}
    for name, proc in procs.items():
        text, _ = proc.communicate(timeout=300)
        assert proc.returncode != 3, text
        out[name] = [line for line in text.splitlines() if line.startswith(("PASS", "FAIL", "ERROR"))
                     or "grader:" in line] or [text]
    return out


@pytest.mark.skipif(bool(_namespaces_work()), reason=_namespaces_work() or "-")
def test_two_graders_in_their_own_mount_namespaces_give_the_verdicts_they_give_alone():
    """The finding: two graders with their own /run and /tmp, sharing /proc, on a range of four
    uids (collisions forced), each grading the correct file twice two at a time. Before the
    fix 2 and 3 of 8 checks passed (the others: 9.83/10, 9.67/10, 0/10 "process died while
    importing", each killed by the other grader's sweep or release); now every verdict is the one
    a grader gives alone."""
    start = _range(4)
    alone = _graders("a", 1, 1, start)["a"]
    assert len(alone) == 1 and alone[0].startswith("PASS") and "10 / 10" in alone[0], alone
    both = _graders("ab", 2, 2, start)
    for name, lines in both.items():
        assert lines == alone * 4, f"grader {name} beside another: {lines}"


# -- the temp folder: a grader's live folders, whatever its PID namespace -------------------------

HOLDER = ("import fcntl, os, sys, time\n"
          "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)\n"
          "fcntl.flock(fd, fcntl.LOCK_SH)\n"
          "print('ready', flush=True)\n"
          "sys.stdin.read()\n")


def test_the_sweep_keeps_the_folders_of_a_grader_in_another_pid_namespace(tmp_path, monkeypatch):
    """Two graders sharing one temp folder but not one PID namespace: the other's folders carry
    a pid this /proc does not show. The old sweep removed them under its live checks (their
    folders chmodded 0700 first: PermissionError on the learner's file); its live file's lock
    keeps them now, and once that grader is gone they are swept."""
    from grader import cleanup
    monkeypatch.setattr(cleanup, "_swept", set())
    pid = 999999997                                # no such pid here (pid_max is 2^22)
    theirs = tmp_path / f"grader-sub-{pid}-abc"
    (theirs / "submission").mkdir(parents=True)
    (theirs / "submission" / "jax_one_hot.py").write_text("x = 1\n")
    holder = subprocess.Popen([sys.executable, "-I", "-S", "-c", HOLDER, str(tmp_path / f"grader-live-{pid}")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        assert cleanup.sweep_stale(str(tmp_path)) == 0
        assert (theirs / "submission" / "jax_one_hot.py").read_text() == "x = 1\n"
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    monkeypatch.setattr(cleanup, "_swept", set())
    assert cleanup.sweep_stale(str(tmp_path)) == 1
    assert not theirs.exists() and not (tmp_path / f"grader-live-{pid}").exists()
    assert (tmp_path / f"grader-live-{os.getpid()}").exists()      # this process's own, held
