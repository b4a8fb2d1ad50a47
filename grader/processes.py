"""The grader's child processes: which are its own, how to find what they left, how they start.

A :class:`ProcessRegistry` is the record of the processes one grader started (workers, sandbox
probes) and of its runs' ``GRADER_RUN`` markers; :meth:`ProcessRegistry.reap_orphans` kills what
a submission left behind and nothing else. :data:`REGISTRY` is the one instance a process has:
signals and ``PR_SET_CHILD_SUBREAPER`` are per process, so the registry is too. It is explicit
(tests and library callers can read and reset it) and it is the only mutable state at module
level in the run stage.

Also here, below both ``grader.runner`` and ``grader.sandbox`` which share them: the child's
script path (:data:`CHILD_SCRIPT`), its scrubbed environment (:func:`child_environment`) and the
/proc readers (:func:`proc_stat`, :func:`descendants`, :func:`cpu_seconds`). Linux-only
facilities (``prctl``, /proc) degrade to no-ops elsewhere.
"""
from __future__ import annotations

import ctypes
import os
import signal
import threading
from pathlib import Path
from typing import Callable

#: the script the submission's process runs (``python -I CHILD_SCRIPT ...``)
CHILD_SCRIPT = Path(__file__).with_name("_child.py")
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37


def prctl(option: int, arg: int = 0) -> int:
    """``prctl(option, arg, 0, 0, 0)``; -1 where libc or prctl is missing."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, arg, 0, 0, 0))
    except (OSError, AttributeError):
        return -1


def is_subreaper() -> bool:
    """Whether this process has ``PR_SET_CHILD_SUBREAPER`` set (orphans are re-parented to it)."""
    flag = ctypes.c_int(0)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0) == 0 and flag.value != 0
    except (OSError, AttributeError):
        return False


def proc_stat(pid: int) -> list[str] | None:
    """Fields of /proc/<pid>/stat after the command name (state, ppid, pgrp, session, ...), or
    None when the process is gone or /proc is missing."""
    try:   # os.open and one read, not pathlib (617 reads a served check: 56 -> 15 ms)
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY | os.O_CLOEXEC)
        try:
            stat = os.read(fd, 4096)
        finally:
            os.close(fd)
    except OSError:
        return None
    end = stat.rfind(b")")
    return stat[end + 2:].decode("ascii", "replace").split() if end >= 0 else None


def wait_exit(proc, timeout: float) -> int | None:
    """Wait up to ``timeout`` seconds for the child ``proc`` (a :class:`subprocess.Popen`) to
    end, reap it, and return its exit code (None: still running).

    ``Popen.wait(timeout)`` polls with sleeps that double up to 50 ms, so a child that takes
    20 ms to exit (a sandboxed Python with JAX's memory to unmap) was waited for 31-35 ms; a
    pidfd (Linux 5.3) turns readable the moment it exits. Without one, ``Popen.wait``.
    """
    import select
    import subprocess

    code = proc.poll()
    if code is not None:
        return code
    try:   # not yet reaped, so the pid is still this child's: the pidfd is its
        fd = os.pidfd_open(proc.pid)
    except (OSError, AttributeError):
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
    try:   # poll, not select: a descriptor above 1023 is fine
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        poller.poll(max(0.0, timeout) * 1000)
    finally:
        os.close(fd)
    return proc.poll()


def all_pids() -> list[int]:
    """Every pid /proc lists (empty without /proc: only process-group kills apply then)."""
    try:
        return [int(e) for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return []


def user_tasks(uid: int) -> int:
    """The processes and threads whose real user is ``uid``, as RLIMIT_NPROC counts them (the
    ``Threads`` of each ``/proc/PID/status`` with that real uid); 0 without ``/proc``."""
    total = 0
    for pid in all_pids():
        try:
            with open(f"/proc/{pid}/status", "rb") as fh:
                text = fh.read(4096)
        except OSError:
            continue
        uid_at, threads_at = text.find(b"\nUid:"), text.find(b"\nThreads:")
        if uid_at < 0 or threads_at < 0:
            continue
        try:
            if int(text[uid_at + 5:].split(None, 1)[0]) == uid:
                total += int(text[threads_at + 9:].split(None, 1)[0])
        except (ValueError, IndexError):
            continue
    return total


#: set by ``grader grade`` in a check's environment when the batch holds the user's slot for it
#: (``grader.batch.pool``): the check then does not wait for it (it would wait for its own batch)
SLOT_HELD_ENV = "GRADER_USER_SLOT_HELD"
NOT_PRIVATE = " is not this user's private folder (mode 0700, owned by the user)"


def _safe_path(path: str) -> str | None:
    """Why ``path`` (a folder) is no safe place for the grader's private folders, or None: every
    folder on its real path must be this user's or root's, and none writable by others unless
    sticky (as /tmp is): otherwise another user could rename a folder on the way and put
    another of theirs in its place."""
    import stat
    real = os.path.realpath(path)
    parts = real.split(os.sep)
    for i in range(1, len(parts) + 1):
        folder = os.sep.join(parts[:i]) or os.sep
        try:
            st = os.lstat(folder)
        except OSError as exc:
            return f"{folder}: {exc.strerror or exc}"
        if not stat.S_ISDIR(st.st_mode):
            return f"{folder} is not a folder"
        if st.st_uid not in (0, os.geteuid()):
            return f"{folder} belongs to another user (uid {st.st_uid})"
        if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
            return f"{folder} may be written by others and is not sticky"
    return None


def trusted_tempdir() -> None:
    """Make the grader's temporary folders (the private copies, the children's working folders)
    go where no other user can swap them: ``$TMPDIR`` is used only when every folder on its path
    is this user's or root's and none is writable by others unless sticky (:func:`_safe_path`);
    otherwise ``/tmp`` is, with one note on stderr, for this process and those it starts. A root
    grader run with another user's ``$TMPDIR`` (``sudo -E``) made its folders in a folder that
    user could rename (attack round 55)."""
    import sys
    import tempfile
    given = os.environ.get("TMPDIR")
    if not given:
        return
    why = _safe_path(given)
    if why is None:
        return
    os.environ["TMPDIR"] = "/tmp"
    tempfile.tempdir = None
    sys.stderr.write(f"grader: note: TMPDIR={given!r} is not used ({why}); temporary folders go to /tmp\n")


def runtime_folder() -> str | None:
    """``$XDG_RUNTIME_DIR`` when it is what the XDG base-directory spec says it is: an existing
    folder, reached through no link, owned by this user, that nobody else can enter; else None.
    Only then are ``grader`` folders made in it: a value through another user's link had a root
    ``grader serve`` make folders of chosen names inside a folder only root may enter (attack
    round 54)."""
    import stat
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if not runtime or not os.path.isabs(runtime) or os.path.realpath(runtime) != os.path.normpath(runtime):
        return None
    try:
        st = os.lstat(runtime)
    except OSError:
        return None
    ok = stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o077
    return runtime if ok else None


def slot_folders(uid: int) -> list[str]:
    """Where the lock of :func:`take_user_slot` may live, first choice first: a folder of the
    user's home (from the account database, else ``$HOME``), which every grader of the user on
    this machine sees whatever its mount namespace and no other user can make first; then
    ``$XDG_RUNTIME_DIR``; then ``/tmp``. A fixed ``/tmp/grader-slot-UID`` alone (attack round
    48) was squatted by another user with a folder of theirs (no lock: two shards at once again)
    and was not one file at all where each job has a private ``/tmp`` (Slurm's tmpfs
    containers, systemd's PrivateTmp)."""
    import pwd
    home = None
    try:
        home = pwd.getpwuid(uid).pw_dir
    except KeyError:
        home = os.environ.get("HOME")
    out = [os.path.join(home, ".cache", "grader", "slot")] if home and os.path.isabs(home) else []
    runtime = runtime_folder()
    if runtime:
        out.append(os.path.join(runtime, "grader-slot"))
    return out + [f"/tmp/grader-slot-{uid}"]


def _slot_file(folder: str, uid: int) -> int | str:
    """The opened lock file of the slot in ``folder`` (made private if missing; its parents too,
    ``~/.cache/grader`` as the cache makes it), or why not: a folder that is not the user's own
    and private is not used."""
    import socket
    import stat
    try:
        os.makedirs(os.path.dirname(folder), mode=0o700, exist_ok=True)
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        return f"{folder}: {exc.strerror or exc}"
    try:
        st = os.lstat(folder)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid or st.st_mode & 0o077:
            return f"{folder}{NOT_PRIVATE}"
        # one lock per machine: a home folder is often the same on every node of a cluster
        name = "".join(c if c.isalnum() or c in "-_." else "_" for c in socket.gethostname()) or "host"
        return os.open(os.path.join(folder, f"{name}.lock"),
                       os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        return f"{folder}: {exc.strerror or exc}"


#: this process's hold of the slot: its descriptor and how many checks hold it (an assignment's
#: parts run interleaved in one process, each a check)
_HELD: dict[str, int] = {"fd": -1, "count": 0}
_HELD_LOCK = threading.Lock()


def take_user_slot(deadline: float | None) -> int | None:
    """Wait for this user's one check slot and return its lock's descriptor (held until
    :func:`release_user_slot`), or None when ``deadline`` (``time.monotonic()``) passed first.

    Where a submission's process is this user outside any user namespace (the ``rlimits`` tier
    of a grader that is not root), its threads count against the user's one process budget,
    which another learner's check, even in another grader process, could fill while XLA starts
    its threads in this one (attack round 47: two shards of one class at once; a correct JAX file
    aborted, 9.75). The lock is a file of :func:`slot_folders`' first folder that is the user's own
    and private; where none is, no lock is taken (-1), said on stderr.
    """
    import fcntl
    import time
    with _HELD_LOCK:
        if _HELD["count"]:       # this process holds it already: one more check of it
            _HELD["count"] += 1
            return _HELD["fd"]
    fd: int | str = -1
    why: list[str] = []
    for folder in slot_folders(os.getuid()):
        fd = _slot_file(folder, os.getuid())
        if isinstance(fd, int):
            break
        why.append(fd)
    import sys
    if not isinstance(fd, int):
        sys.stderr.write(f"grader: warning: no private place for this user's check lock ({'; '.join(why)}): "
                         "this check does not wait for the user's others\n")
        return -1
    passed_over = [w for w in why if w.endswith(NOT_PRIVATE)]
    if passed_over:   # a place of the user's made public (attack round 49): others may lock elsewhere
        sys.stderr.write(f"grader: warning: {passed_over[0]}; this user's check lock is in {folder} for "
                         "this check, and checks that still find the other place do not wait for it\n")
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            with _HELD_LOCK:
                _HELD["fd"], _HELD["count"] = fd, 1
            return fd
        except BlockingIOError:
            if deadline is not None and time.monotonic() >= deadline:
                os.close(fd)
                return None
            time.sleep(0.05)
        except OSError as exc:   # a file system without flock (an old NFS mount)
            os.close(fd)
            import sys
            sys.stderr.write(f"grader: warning: cannot lock this user's check lock ({exc.strerror or exc}): "
                             "this check does not wait for the user's others\n")
            return -1


def wait_user_slot(tier: str) -> int:
    """:func:`take_user_slot` waited for as long as it takes, saying once on stderr that this
    check waits (for ``grader check`` and ``grader grade`` alike, in sandbox tier ``tier``).
    Returns its descriptor (-1: no lock could be taken)."""
    import sys
    import time
    slot = take_user_slot(time.monotonic())   # free now: the usual case, said nothing
    if slot is None:
        sys.stderr.write(f"grader: note: waiting for another check of this user to end: in the {tier} sandbox "
                         "tier one check of a user runs at a time on this machine\n")
        slot = take_user_slot(None)
    return -1 if slot is None else slot


def release_user_slot(fd: int | None) -> None:
    """Give back a slot :func:`take_user_slot` gave: the lock goes with the last check of this
    process that holds it (closing its descriptor releases it)."""
    if fd is None or fd < 0:
        return
    with _HELD_LOCK:
        if _HELD["fd"] == fd and _HELD["count"] > 1:
            _HELD["count"] -= 1
            return
        if _HELD["fd"] == fd:
            _HELD["fd"], _HELD["count"] = -1, 0
    try:
        os.close(fd)
    except OSError:
        pass


def is_alive(pid: int, state: str) -> bool:
    """Whether the process ``pid`` (its /proc ``state`` letter) still runs anything: not a
    zombie, or a zombie thread-group leader some of whose threads have not exited yet (the
    leader of a killed multi-threaded process, JAX's or NumPy's, exits before its threads)."""
    if state != "Z":
        return True
    try:
        return len(os.listdir(f"/proc/{pid}/task")) > 1
    except OSError:
        return False


def _process_table() -> tuple[dict[int, list[str]], dict[int, list[int]]]:
    """One pass over /proc: each pid's stat fields, and each pid's children."""
    table: dict[int, list[str]] = {}
    children: dict[int, list[int]] = {}
    for pid in all_pids():
        fields = proc_stat(pid)
        if fields is not None:
            table[pid] = fields
            children.setdefault(int(fields[1]), []).append(pid)
    return table, children


def _below(children: dict[int, list[int]], roots: list[int]) -> list[int]:
    """Every process below ``roots`` in the ``children`` map (children, grandchildren, ...)."""
    out, todo = [], list(roots)
    while todo:
        for kid in children.get(todo.pop(), ()):
            out.append(kid)
            todo.append(kid)
    return out


def descendants(root: int) -> list[int]:
    """Every live process below ``root`` (children, grandchildren, ...), found through /proc."""
    return _below(_process_table()[1], [root])


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pids: list[int]) -> float | None:
    """User plus system CPU seconds used so far by the processes ``pids`` (all their threads),
    from /proc/<pid>/stat; None when none of them can be read (no /proc)."""
    total, seen = 0, False
    for pid in pids:
        fields = proc_stat(pid)
        if fields is None or len(fields) < 13:
            continue
        try:
            total += int(fields[11]) + int(fields[12])     # utime, stime (stat fields 14, 15)
            seen = True
        except ValueError:
            continue
    return total / _TICK if seen else None


def environ_has(pid: int, marker: bytes) -> bool:
    """Whether the environment of process ``pid`` holds the entry ``marker`` (``b"K=V"``)."""
    try:
        return marker in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False


class ProcessRegistry:
    """The processes one grader process started and the markers of its runs.

    Attributes:
        whole_process: set by :meth:`harden`: every child of this process is the grader's (the
            CLI, which starts nothing else); otherwise only tracked children, their process
            groups and sessions, and processes carrying a tracked marker are.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tracked: set[int] = set()      # live children the grader started: never swept as orphans
        self._markers: set[bytes] = set()    # b"GRADER_RUN=..." of this process's runs
        self.whole_process = False

    def track_child(self, pid: int) -> None:
        """Record ``pid`` as a child the grader started itself (never killed as an orphan while
        tracked; its process group and session count as the grader's for :meth:`reap_orphans`)."""
        with self._lock:
            self._tracked.add(pid)

    def untrack_child(self, pid: int) -> None:
        """Forget a child recorded with :meth:`track_child` (after it has been reaped)."""
        with self._lock:
            self._tracked.discard(pid)

    def track_marker(self, marker: str) -> None:
        """Record a run's ``GRADER_RUN`` value: a process whose environment holds it was started
        by a submission the grader ran (:meth:`reap_orphans` may kill it). Markers are kept for
        the life of the process: an orphan can outlive its run."""
        with self._lock:
            self._markers.add(f"GRADER_RUN={marker}".encode())

    def is_tracked(self, pid: int) -> bool:
        """Whether ``pid`` is a live child recorded with :meth:`track_child`."""
        with self._lock:
            return pid in self._tracked

    def started_by_grader(self, pid: int, fields: list[str]) -> bool:
        """Whether the process ``pid`` (its /proc stat ``fields``) is one the grader started: in
        the process group or session of a tracked child (each worker leads its own session), or
        carrying one of its runs' ``GRADER_RUN`` markers (a child's orphans inherit it; a pid
        cannot be reused into a marker, so an unrelated process never matches)."""
        with self._lock:
            tracked, markers = set(self._tracked), set(self._markers)
        if int(fields[2]) in tracked or int(fields[3]) in tracked:
            return True
        try:
            env = set(Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"))
        except OSError:
            return False
        return bool(env & markers)

    def harden(self) -> None:
        """Make this process's memory unreadable by same-user children and adopt their orphans.

        ``PR_SET_DUMPABLE=0`` blocks ``/proc/<pid>/mem`` reads and ptrace from the child;
        ``PR_SET_CHILD_SUBREAPER`` re-parents double-forked descendants here so that
        :meth:`reap_orphans` (and ``Worker.kill``) can kill them. Both are Linux ``prctl(2)``
        options; elsewhere no-ops. Called by the CLI only: a library caller that never calls it
        (a notebook kernel, a test) keeps its other children.
        """
        prctl(PR_SET_DUMPABLE, 0)
        prctl(PR_SET_CHILD_SUBREAPER, 1)
        self.whole_process = True

    def soften(self) -> None:
        """Undo :meth:`harden` (a test process that called it by accident gets its state back)."""
        if self.whole_process:
            prctl(PR_SET_CHILD_SUBREAPER, 0)
            prctl(PR_SET_DUMPABLE, 1)
            self.whole_process = False

    def reap_orphans(self, keep: set[int] | None = None, wait: float | None = None) -> int:
        """SIGKILL the grader's leftover child processes not in ``keep`` and everything below
        them, and reap them, until none is alive; how many signals were sent.

        With the subreaper flag set, a submission's double-forked or setsid'd descendants become
        this process's children once their parents die, so this finds them too. Tracked
        children (and what runs below them) are kept. Only processes the grader started are
        killed (:meth:`started_by_grader`), or every child after :meth:`harden`.

        SIGKILL is only pending until a process runs again: on a busy machine a dying niced
        sandbox process, or a sandbox being started when the check ended, can take a while, and
        its descendants become this process's children only once it is gone. So this is a
        barrier: it polls every 10 ms until no such process is alive (zombies are reaped), for
        at most ``wait`` seconds (:data:`ORPHAN_WAIT`), and the CLI calls it before it exits:
        nothing a check started outlives it (CI at load 7 found a sandbox process re-parented to
        the caller after the grader had exited).
        """
        with self._lock:
            keep = set(keep or ()) | set(self._tracked)
        return kill_orphan_trees(lambda pid, fields: pid not in keep and (
            self.whole_process or self.started_by_grader(pid, fields)), ORPHAN_WAIT if wait is None else wait)


def kill_orphan_trees(select: Callable[[int, list[str]], bool], wait: float) -> int:
    """SIGKILL this process's children that ``select(pid, stat_fields)`` picks, and every process
    below them, polling every 10 ms until none of them is alive (zombie children are reaped) or
    ``wait`` seconds have passed; how many signals were sent. The barrier of
    :meth:`ProcessRegistry.reap_orphans` and ``Worker.kill``."""
    import time

    me, killed = os.getpid(), 0
    deadline = time.monotonic() + wait
    #: children picked once stay picked until reaped: a dying process's /proc/<pid>/environ
    #: reads empty once its memory is released, before it is a zombie, and ``select`` (which
    #: reads the marker there) then passed it over: the barrier returned with it still exiting
    chosen: set[int] = set()
    while True:
        table, children = _process_table()
        mine = [pid for pid in children.get(me, ()) if pid in chosen or select(pid, table[pid])]
        chosen.update(mine)
        live = [pid for pid in mine + _below(children, mine) if is_alive(pid, table[pid][0])]
        for pid in live:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except OSError:
                pass
        for pid in mine:                 # only these pids: never another child's exit status
            try:
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    chosen.discard(pid)  # reaped: its pid may be given to a new child
            except (ChildProcessError, OSError):
                chosen.discard(pid)
        if (not live and not mine) or time.monotonic() > deadline:
            return killed
        time.sleep(0.01)


#: how long :meth:`ProcessRegistry.reap_orphans` waits for the grader's leftovers to be gone (s)
ORPHAN_WAIT = 10.0


#: this process's registry (signals and the subreaper flag are per process, so it is too)
REGISTRY = ProcessRegistry()

# the registry's operations as functions, for callers that name them so (the CLI, batch)
track_child = REGISTRY.track_child
untrack_child = REGISTRY.untrack_child
track_marker = REGISTRY.track_marker
harden_grader_process = REGISTRY.harden
reap_orphans = REGISTRY.reap_orphans


#: XLA's CPU compile without LLVM's optimisation passes: every (shape, dtype) compiles once, and
#: those compiles are most of a cold JAX check (the submission's child, here) and of the
#: reference's runs (``grader.reference.import_jax``); the values are bit for bit the same.
#: With XLA's older elemental emitters instead of its MLIR fusion emitters, an elementwise
#: operation or a reduction compiles in about half the time (``jnp.exp`` of a new shape
#: 25 -> 14 ms; cross_entropy's validation 24.9 -> 20.1 CPU-s, gelu's 17.2 -> 11.3); a matmul
#: compiles as before. Their exp, tanh, log1p, rsqrt... round differently in the last ULP or
#: two (their largest errors against NumPy in float64 and float32 as before but for tanh in
#: float32, 4.3 -> 5.9 ULP and rsqrt, 1.0 -> 1.2 ULP),
#: which the reference and a learner's child share, both compiling with these flags.
CHEAP_COMPILE = ("--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true "
                 "--xla_cpu_use_fusion_emitters=false")


#: the submission's process's ``PATH``, also where its sandbox's program (``bwrap``, ``unshare``)
#: is looked up (``subprocess`` finds it on the ``PATH`` of the environment it is given)
CHILD_PATH = "/usr/local/bin:/usr/bin:/bin"


def child_environment(framework: str, workdir: str, marker: str = "") -> dict[str, str]:
    """The scrubbed environment the submission runs with: no secrets, one BLAS thread, CPU JAX.

    ``workdir`` is the working folder as the child sees it (HOME and TMPDIR point there);
    ``marker`` (``GRADER_RUN``) lets the grader recognise the run's orphans.
    """
    env = {
        "PATH": CHILD_PATH,
        "HOME": workdir,
        "TMPDIR": workdir,
        "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "JAX_PLATFORMS": "cpu",
        "JAX_ENABLE_X64": "1",
        # one thread; and a cheaper XLA compile for the submission's many small signatures (each
        # (shape, dtype) compiles once): about 4% off a cold JAX check, measured (docs/performance.md)
        # every word a flag: XLA stops reading XLA_FLAGS at the first word without "--" and
        # silently drops the rest (a stray "intra_op_parallelism_threads=1" here, until
        # 2026-12-07, dropped CHEAP_COMPILE and the child's NO_YNNPACK from every child)
        "XLA_FLAGS": f"--xla_cpu_multi_thread_eigen=false {CHEAP_COMPILE}",
        "TF_CPP_MIN_LOG_LEVEL": "2",
    }
    if marker:
        env["GRADER_RUN"] = marker
    for key in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env
