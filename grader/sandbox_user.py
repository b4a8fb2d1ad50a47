"""The sandbox users: a host uid of its own for each sandboxed child when the grader runs as root.

A user namespace made by root maps its users to host root, so a grader run as root gives each
child a uid of :func:`uid_range` (``GRADER_SANDBOX_UIDS``) instead, which the child becomes
before any submission code runs (``grader/_confine.py``). :class:`SandboxUser` takes one that no
other check holds (an ``flock`` across processes, :func:`_hold`), kills what is left of a
previous holder's processes before and after use (:func:`_kill_user`, :func:`_sweep_unheld`),
and starts a watchdog that kills them when the grader dies. :mod:`grader.sandbox` (the tiers,
their views and policies) re-exports these names.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time

from .errors import GraderError
from .processes import is_alive

ENV_UIDS = "GRADER_SANDBOX_UIDS"
#: host uids the sandbox runs as when the grader is root: ``START:COUNT``, one per concurrent
#: check. 0x7A000000 lies in the range systemd leaves unused (0x70000000-0x7FFDFFFF,
#: systemd's UIDS-GIDS.md), far from system, regular, dynamic and container users.
UID_START, UID_COUNT = 0x7A000000, 4096


def uid_range() -> tuple[int, int]:
    """The sandbox users' host uids: (first, how many), from :data:`ENV_UIDS` or the default.

    Raises:
        GraderError: :data:`ENV_UIDS` is malformed or out of range.
    """
    raw = os.environ.get(ENV_UIDS, "").strip()
    if not raw:
        return UID_START, UID_COUNT
    try:
        start, count = (int(x, 0) for x in raw.split(":"))
    except ValueError:
        raise GraderError(f"{ENV_UIDS}={raw!r} is not START:COUNT (e.g. 0x7A000000:4096)") from None
    if start < 1000 or count < 1 or start + count > 0xFFFFFFFE:
        raise GraderError(f"{ENV_UIDS}={raw!r}: START must be at least 1000 and START+COUNT below 2^32-1")
    return start, count


def _lock_folder() -> str:
    """The root-only folder of the uid lock files (``/run/grader-sandbox-uids``, else under /tmp).

    Raises:
        GraderError: it exists but is not a folder of root's that only root may write.
    """
    import stat
    base = "/run" if os.path.isdir("/run") and os.access("/run", os.W_OK) else tempfile.gettempdir()
    folder = os.path.join(base, "grader-sandbox-uids")
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise GraderError(f"cannot create {folder} for the sandbox users: {exc.strerror or exc}") from None
    st = os.lstat(folder)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != 0 or st.st_mode & 0o022:
        raise GraderError(f"{folder} is not a folder that only root may write; remove it")
    return folder


def _process_ids() -> dict[int, tuple[tuple[int, ...], tuple[int, ...]]]:
    """Every live process's ids, one pass over /proc: pid -> (uids, gids), each the real,
    effective, saved and file-system id. Zombies are left out (they run nothing and hold no
    memory, and their parent, the grader as a subreaper, reaps them), unless some of their
    threads still run (``grader.processes.is_alive``)."""
    found: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        read = _status(int(entry))
        if read is not None and is_alive(int(entry), read[0]):
            found[int(entry)] = read[1:]
    return found


def _runs_as(ids: tuple[tuple[int, ...], tuple[int, ...]], uid: int) -> bool:
    """Whether a process with ``ids`` (:func:`_process_ids`) is one of the sandbox user ``uid``'s:
    ``uid`` among its uids and no uid 0 (a root process, a claim's watchdog above all, is never
    a sandbox user's process, and is never killed as one)."""
    return uid in ids[0] and 0 not in ids[0]


def _marks(ids: tuple[tuple[int, ...], tuple[int, ...]], uid: int) -> bool:
    """Whether a process with ``ids`` is a live claim of ``uid``: a root process with ``uid``
    among its gids (a grader's watchdog, :data:`_WATCHDOG`, which sets its saved gid to it; or a
    sandboxed child between its ``setresgid`` and its ``setresuid``, whose watchdog exists too)."""
    return 0 in ids[0] and uid in ids[1]


def _in_use(table: dict[int, tuple[tuple[int, ...], tuple[int, ...]]], uid: int, besides: int = 0) -> bool:
    """Whether some process of ``table`` other than ``besides`` has ``uid`` among its uids or
    gids: a claim of another grader, or a process of that uid whatever started it."""
    return any(pid != besides and (uid in ids[0] or uid in ids[1]) for pid, ids in table.items())


def processes_of(uid: int) -> list[int]:
    """The pids of the live (not zombie) processes of the sandbox user ``uid``: its real,
    effective, saved or file-system uid, and no uid 0 (:func:`_runs_as`)."""
    return [pid for pid, ids in _process_ids().items() if _runs_as(ids, uid)]


def _start_time(pid: int) -> str | None:
    """When ``pid`` started (field 22 of /proc/<pid>/stat, clock ticks since boot): with the pid,
    the identity of one process, which a reused pid does not share; None when it is gone."""
    from .processes import proc_stat
    fields = proc_stat(pid)
    return fields[19] if fields is not None and len(fields) > 19 else None


#: how long :func:`_kill_user` waits for a sandbox user's processes to be gone, in seconds
KILL_WAIT = 10.0
#: how long :meth:`SandboxUser.take` keeps trying when every uid of the range is in use (s)
TAKE_WAIT = 10.0
#: how long :meth:`SandboxUser.take` waits for a watchdog to report its claim (s; ~10 ms idle)
WATCHDOG_START = 30.0


def _kill_user(uid: int, wait: float = KILL_WAIT) -> bool:
    """SIGKILL every process of the sandbox user ``uid`` (:func:`processes_of`) until none is
    left; whether none is. Only for a uid this grader holds (:class:`SandboxUser`): its claim,
    proved unique when taken, means every such process is one of its own children's.

    SIGKILL is only pending until the process runs again: on a busy machine a niced sandbox
    process can take a while to exit, and its descendants are re-parented only when it has. The
    grader waits for that (polling every 10 ms, at most ``wait`` seconds) so that it never exits,
    or gives the uid to the next check, while a sandbox process is still alive. Each round kills
    what is listed, so a fork bomb ends: a process with SIGKILL pending cannot fork.
    """
    deadline = time.monotonic() + wait
    while True:
        pids = processes_of(uid)
        if not pids:
            return True
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)


#: the watchdog of one sandbox user (:meth:`SandboxUser._start_watchdog`): ``python -I -S -c``
#: with the uid as its argument. It is also the grader's claim of that uid, seen by every grader
#: that shares /proc whatever its /run and /tmp: first it sets its saved gid to the uid (real and
#: effective ids stay root: it keeps its capabilities, and since signal permission goes by uid the
#: sandbox user cannot signal it) and says so with one byte on stdout. Then it waits for end of
#: input, SIGKILLs every process of that uid (that uid among its uids and no uid 0, never itself)
#: until none is alive (10 s at most), and exits (releasing the uid's lock it inherited): the claim
#: outlives every process of the uid. It is :func:`_kill_user` written out with no import of the
#: grader (``-S``: no site-packages), so that it starts in ~10 ms and does not depend on the
#: install it guards
_WATCHDOG = """
import os, signal, sys, time
uid = int(sys.argv[1])
os.setresgid(0, 0, uid)
os.write(1, b"1")
os.close(1)
while os.read(0, 4096):
    pass
me = os.getpid()
deadline = time.monotonic() + 10
while time.monotonic() < deadline:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != me:
            try:
                with open("/proc/" + entry + "/status") as fh:
                    lines = fh.read().splitlines()
                uids = [int(u) for u in next((l.split()[1:5] for l in lines if l.startswith("Uid:")), [])]
            except (OSError, ValueError):
                continue
            state = next((l.split()[1] for l in lines if l.startswith("State:")), "Z")
            try:
                alive = state != "Z" or len(os.listdir("/proc/" + entry + "/task")) > 1
            except OSError:
                alive = False
            if uid in uids and 0 not in uids and alive:
                found.append(int(entry))
    if not found:
        break
    for pid in found:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    time.sleep(0.01)
"""


def _hold(folder: str, uid: int) -> int | None:
    """An exclusive ``flock`` on ``uid``'s lock file in ``folder``: its descriptor, or None when
    another check holds it (or the file cannot be opened)."""
    import fcntl
    try:
        fd = os.open(os.path.join(folder, str(uid)), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _kill_if_same(pid: int, uid: int, started: str) -> bool:
    """SIGKILL ``pid`` only if it is still the process seen before (same start time) and still
    runs as the sandbox user ``uid`` (:func:`_runs_as`); through a pidfd, so a pid reused between
    the check and the signal is never hit (a kernel without pidfds: the pid, just checked).
    Whether the signal was sent."""
    import errno
    pidfd = None
    try:
        pidfd = os.pidfd_open(pid)
    except OSError as exc:
        if exc.errno != errno.ENOSYS:             # gone; ENOSYS: a kernel before 5.3, the pid alone
            return False
    try:
        if _start_time(pid) != started:
            return False
        ids = _process_ids_of(pid)
        if ids is None or not _runs_as(ids, uid):
            return False
        if pidfd is None:
            os.kill(pid, signal.SIGKILL)
        else:
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        return True
    except OSError:
        return False
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _status(pid: int) -> tuple[str, tuple[int, ...], tuple[int, ...]] | None:
    """(state letter, uids, gids) of ``pid`` from ``/proc/<pid>/status`` (real, effective, saved
    and file-system ids); None when it is gone or cannot be read."""
    state, uids, gids = "", (), ()
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("State:"):
                    state = (line.split() + [""])[1]
                elif line.startswith("Uid:"):
                    uids = tuple(int(u) for u in line.split()[1:5])
                elif line.startswith("Gid:"):
                    gids = tuple(int(g) for g in line.split()[1:5])
                    break
    except (OSError, ValueError):
        return None
    return (state, uids, gids) if uids and gids else None


def _process_ids_of(pid: int) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """The (uids, gids) of one process, as :func:`_process_ids` reads them; None when gone."""
    read = _status(pid)
    return None if read is None else read[1:]


def _unclaimed(table: dict[int, tuple[tuple[int, ...], tuple[int, ...]]], start: int,
               count: int) -> dict[int, tuple[int, str]]:
    """The processes of ``table`` that run as a uid of the range no live claim marks
    (:func:`_marks`): pid -> (uid, start time)."""
    claimed = {g for ids in table.values() if 0 in ids[0] for g in ids[1] if start <= g < start + count}
    out: dict[int, tuple[int, str]] = {}
    for pid, (uids, _gids) in table.items():
        if 0 in uids:
            continue
        uid = next((u for u in uids if start <= u < start + count and u not in claimed), None)
        if uid is None:
            continue
        started = _start_time(pid)
        if started is not None:
            out[pid] = (uid, started)
    return out


def _sweep_unheld(folder: str, start: int, count: int, wait: float = KILL_WAIT) -> int:
    """Kill the processes of sandbox users that no live grader claims (a grader and its watchdog
    both killed with SIGKILL); how many signals were sent.

    Never by uid range alone: another grader on this kernel (its own /run, so its lock files are
    not ours to see) holds its uids through its watchdogs (:data:`_WATCHDOG`), which every grader
    sharing /proc sees. A process is killed only when two scans agree: it was seen running as
    uid U of the range in one scan, and the next scan, which begins after the first has ended,
    still shows it (same pid and start time) and shows no claim of U (:func:`_marks`), and U's
    lock file here is free. A claim is made before its first process of U and outlives its last
    one, so a process seen in the first scan whose claim is alive has that claim in the second.
    Rounds repeat (every 10 ms, ``wait`` seconds at most) until no unclaimed process is left.
    """
    table = _process_ids()
    seen = _unclaimed(table, start, count)
    deadline = time.monotonic() + wait
    sent, held = 0, set()
    while seen:
        time.sleep(0.01)
        table = _process_ids()                        # begins after the previous scan ended
        claimed = {u for u in {uid for uid, _ in seen.values()} if any(_marks(ids, u) for ids in table.values())}
        by_uid: dict[int, list[tuple[int, str]]] = {}
        for pid, (uid, started) in seen.items():
            if uid not in claimed and pid in table:
                by_uid.setdefault(uid, []).append((pid, started))
        for uid, pids in by_uid.items():
            fd = _hold(folder, uid)
            if fd is None:
                held.add(uid)                         # held here: a live check's (or an older grader's)
                continue
            try:
                sent += sum(_kill_if_same(pid, uid, started) for pid, started in pids)
            finally:
                os.close(fd)
        seen = {pid: seen_as for pid, seen_as in _unclaimed(table, start, count).items() if seen_as[0] not in held}
        if time.monotonic() > deadline:
            break
    return sent


class SandboxUser:
    """A host uid (and gid of the same number) of its own for one sandboxed child, when the
    grader runs as root; None of this is used otherwise (the child then runs as the grader's
    user, in a user namespace where the tier has one).

    A uid of :data:`ENV_UIDS`'s range is claimed in two ways. An exclusive ``flock`` of a file in
    a root-only folder (:func:`_lock_folder`) orders the checks of graders that share /run. And
    a claim in the kernel's process table, which every grader sharing /proc sees whatever its
    /run and /tmp (two CI jobs on one runner, a chroot, a ``--pid=host`` container): the uid's
    watchdog (:data:`_WATCHDOG`), a root process whose saved gid is the uid. :meth:`take` claims
    a uid only when no process has it among its uids or gids, then starts the watchdog, waits
    until it has set its gid, and looks again: if any other process has the uid (another
    grader's watchdog that raced for it), it SIGKILLs its own watchdog (by pid, its child: not
    its kill loop), lets the uid go and tries another after a random pause. Announce, then
    check: of two graders racing for one uid, the later to announce sees the earlier; both may
    lose, never both win. uids named in the password or group database are skipped.

    The grader kills only its own: processes of a uid it claims (:func:`_kill_user`, the
    watchdog), and, before taking one, processes of range uids that no live claim marks, seen
    twice (:func:`_sweep_unheld`); never a root process (a claim). :meth:`release` kills what is
    left before letting the uid go: no two learners' processes ever run with one uid, so neither
    can signal, ptrace, prlimit or share quotas with another.

    Attributes:
        uid: the host uid; gid: the host gid (the same number).

    Raises:
        GraderError: (from :meth:`take`) no uid of the range is free for :data:`TAKE_WAIT`
            seconds, the lock folder is unsafe, or the watchdog cannot be started.
    """

    def __init__(self, uid: int, fd: int) -> None:
        """Hold ``uid`` (its lock file's descriptor ``fd``, already locked) and start its
        watchdog, waiting for its claim (:meth:`_start_watchdog`).

        Raises:
            GraderError: the watchdog did not start or did not report its claim; ``fd`` is closed.
        """
        self.uid = self.gid = uid
        self._fd: int | None = fd
        self._watchdog: subprocess.Popen | None = None
        self._watchdog_pipe: int | None = None
        try:
            self._start_watchdog()
        except GraderError:
            self._abandon()
            raise

    def _start_watchdog(self) -> None:
        """Start the root process outside the sandbox that is this uid's claim and kills its
        processes once the grader is gone (the end of a pipe only the grader holds), holding
        the uid's lock until it has; return once it has set its saved gid to the uid.

        A parent-death signal does not cross uids: the kernel checks the sender's right to kill,
        and bubblewrap's outer process (root, its capabilities dropped) may not signal the
        sandbox user, so a child in the bwrap tier outlived a grader killed with SIGKILL (only
        the next check's sweep ended it). The watchdog keeps the lock file's description open,
        so no other check can take the uid until it is done.

        Raises:
            GraderError: it could not be started, or it did not report within
                :data:`WATCHDOG_START` seconds.
        """
        import select
        from .processes import track_child
        try:
            read_end, write_end = os.pipe()
        except OSError as exc:
            raise GraderError(f"cannot start the watchdog of sandbox user {self.uid}: {exc}") from None
        try:
            self._watchdog = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _WATCHDOG, str(self.uid)], stdin=read_end,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, pass_fds=(self._fd,),
                start_new_session=True, cwd="/", env={})
        except OSError as exc:
            os.close(write_end)
            raise GraderError(f"cannot start the watchdog of sandbox user {self.uid}: {exc}") from None
        finally:
            os.close(read_end)
        self._watchdog_pipe = write_end
        track_child(self._watchdog.pid)
        out = self._watchdog.stdout
        try:
            ready, _, _ = select.select([out], [], [], WATCHDOG_START)
            said = os.read(out.fileno(), 1) if ready else b""
        except OSError:
            said = b""
        finally:
            out.close()
        if said != b"1":
            raise GraderError(f"the watchdog of sandbox user {self.uid} did not start "
                              f"(no claim within {WATCHDOG_START:g} s)")

    def _abandon(self) -> None:
        """Give up a claim that lost a race, or whose watchdog did not start: SIGKILL the
        watchdog directly (never through its kill loop: the uid's processes may be another
        grader's), reap it and let the lock go. Idempotent."""
        if self._watchdog is not None:
            from .processes import untrack_child
            self._watchdog.kill()
            self._watchdog.wait()
            untrack_child(self._watchdog.pid)
            self._watchdog = None
        if self._watchdog_pipe is not None:
            os.close(self._watchdog_pipe)
            self._watchdog_pipe = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    @classmethod
    def take(cls) -> "SandboxUser":
        """Claim a free uid of the range (see the class docstring).

        Raises:
            GraderError: no uid is free for :data:`TAKE_WAIT` seconds; the lock folder is
                unsafe; a watchdog cannot be started.
        """
        import secrets as _secrets
        start, count = uid_range()
        folder = _lock_folder()
        _sweep_unheld(folder, start, count)          # leftovers no live grader claims, this uid's too
        deadline = time.monotonic() + TAKE_WAIT
        lost = 0
        while True:
            table = _process_ids()                    # a first look: the claim itself looks again
            first = _secrets.randbelow(count)
            for i in range(count):
                uid = start + (first + i) % count
                if _named(uid) or _in_use(table, uid):
                    continue
                fd = _hold(folder, uid)
                if fd is None:
                    continue
                user = cls(uid, fd)                   # the claim, announced
                if not _in_use(_process_ids(), uid, besides=user._watchdog.pid):
                    return user
                user._abandon()                       # another grader raced for it
                lost += 1
                time.sleep(_secrets.randbelow(20 * min(lost, 5)) / 1000)
            if time.monotonic() > deadline:
                raise GraderError(f"no sandbox user is free in {ENV_UIDS} range {start}:{count}")
            time.sleep(0.02 + _secrets.randbelow(30) / 1000)

    def policy(self) -> dict[str, int]:
        """What the child needs to become this user (``policy["user"]``)."""
        return {"uid": self.uid, "gid": self.gid}

    def release(self) -> None:
        """Kill whatever still runs as this uid, then let the uid go (the claim ends with the
        watchdog, after its own last kill round). Idempotent."""
        if self._fd is None:
            return
        _kill_user(self.uid)
        if self._watchdog_pipe is not None:     # the watchdog finds nothing left and lets go of the lock
            os.close(self._watchdog_pipe)
            self._watchdog_pipe = None
        if self._watchdog is not None:
            from .processes import untrack_child
            try:
                self._watchdog.wait(timeout=KILL_WAIT + 5)
            except subprocess.TimeoutExpired:
                self._watchdog.kill()
                self._watchdog.wait()
            untrack_child(self._watchdog.pid)
            self._watchdog = None
        os.close(self._fd)
        self._fd = None

    def __repr__(self) -> str:
        return f"SandboxUser({self.uid})"


def _named(uid: int) -> bool:
    """Whether ``uid`` is a user or group of this machine's databases (the sandbox user's gid
    is the same number: a real group would give it that group's files)."""
    import grp
    import pwd
    for lookup in (pwd.getpwuid, grp.getgrgid):
        try:
            lookup(uid)
            return True
        except KeyError:
            pass
        except OSError:
            return True
    return False


def needs_user(tier: str) -> bool:
    """Whether a child of ``tier`` gets a :class:`SandboxUser`: every tier but ``none`` when the
    grader runs as root."""
    return tier != "none" and os.geteuid() == 0


def shares_user_budget(tier: str) -> bool:
    """Whether a child of ``tier`` is this (non-root) user itself outside any user namespace (the
    ``rlimits`` and ``none`` tiers of a grader that is not root): the kernel counts its threads
    against the user's one RLIMIT_NPROC budget, with every other task of the user's, another
    learner's child included (attack rounds 46 and 47)."""
    return tier in ("rlimits", "none") and os.geteuid() != 0

