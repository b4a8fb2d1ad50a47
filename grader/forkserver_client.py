"""The fork server's client side: how ``grader check`` asks ``grader serve``, and ``grader grade``'s own zygote.

What a process that is not the zygote needs (:mod:`grader.forkserver` holds the zygote itself):
the environment variables that turn the fork servers off or point at one, which grader a
zygote is (:func:`identity` of its source files, refused when stale), how a zygote is started
(:func:`command`), where ``grader serve`` listens (:func:`default_socket`, a folder only its user
enters: :func:`private_folder`), a check sent to it and its answers read (:func:`run_served`,
:func:`send_request`, :class:`Reader`, :func:`framework_hint` for the spare to use), and
``grader grade``'s fork server over a socket pair (:class:`BatchServer`, :class:`ForkedCheck`).
:mod:`grader.forkserver` re-exports these names.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import stat
import sys
import time
from pathlib import Path
from typing import Any

#: ``GRADER_FORKSERVER=0``: ``grader grade`` starts a cold ``grader check`` per learner, as before
FORKSERVER_ENV = "GRADER_FORKSERVER"
#: ``GRADER_SERVE=0``: ``grader check`` never asks a running ``grader serve``
SERVE_ENV = "GRADER_SERVE"
#: where ``grader serve`` listens and ``grader check`` looks (default: :func:`default_socket`)
SOCKET_ENV = "GRADER_SERVE_SOCKET"


def code_stamp() -> tuple[tuple[str, int, int], ...]:
    """(path, size, mtime in ns) of every source file of the grader package: what the zygote
    imported. A request that finds it changed is refused (the zygote's code is stale)."""
    package = Path(__file__).resolve().parent
    out = []
    for path in sorted(package.rglob("*")):
        if path.suffix in (".py", ".json", ".yaml") and "__pycache__" not in path.parts:
            with contextlib.suppress(OSError):
                st = path.stat()
                out.append((str(path), st.st_size, st.st_mtime_ns))
    return tuple(out)


def identity(stamp: tuple[tuple[str, int, int], ...] | None = None) -> str:
    """Which grader this is: SHA-256 of :func:`code_stamp` (its package's path and every source
    file's size and time) and of the Python environment running it (``sys.prefix``, a virtual
    environment's folder, and ``sys.version``). A client sends its own; a server of another
    install, of other code, or of another environment (a kernel of another virtual environment
    sharing an editable install: attack round 34) refuses the check (the client then runs it
    itself, with its own Python and libraries)."""
    import hashlib
    code = code_stamp() if stamp is None else stamp
    return hashlib.sha256(repr((code, sys.prefix, sys.version)).encode()).hexdigest()


# -- the client side ---------------------------------------------------------------------------------

#: run by ``python -I -c``: the grader's own folder (argv[1]) on sys.path, then the fork server
BOOT = ("import sys; root = sys.argv.pop(1); "
        "root in sys.path or sys.path.insert(0, root); "
        "from grader.cli import main as check, build_parser; from grader.forkserver import main; "
        "sys.exit(main(sys.argv[1:], check, build_parser))")


def command() -> list[str]:
    """The argv prefix that starts a fork server of this grader (isolated mode, as every
    process the grader starts)."""
    root = str(Path(__file__).resolve().parents[1])
    return [sys.executable, "-I", "-c", BOOT, root]


#: longest socket path bound or tried (``sun_path`` holds 108 bytes with its NUL)
_SUN_PATH = 107


def socket_candidates() -> list[Path]:
    """Where ``grader serve`` may listen, in order: ``$GRADER_SERVE_SOCKET`` alone when set;
    else ``grader/serve.sock`` in ``$XDG_RUNTIME_DIR`` (the user's private runtime folder), in
    ``/tmp/grader-<uid>``, and in ``~/.cache/grader/serve-<host>`` (where nobody else can make
    the folder first: another user who made ``/tmp/grader-<uid>`` stopped ``grader serve``
    from starting, attack round 37). Paths longer than a socket's address are left out."""
    if os.environ.get(SOCKET_ENV):
        return [Path(os.environ[SOCKET_ENV])]
    out = []
    from .processes import runtime_folder
    runtime = runtime_folder()
    if runtime:
        out.append(Path(runtime) / "grader" / "serve.sock")
    out.append(Path(f"/tmp/grader-{os.geteuid()}") / "serve.sock")
    with contextlib.suppress(RuntimeError, KeyError, OSError):
        home = Path.home()
        if os.stat(home).st_uid == os.geteuid():   # not another user's home (a sudo that keeps HOME)
            out.append(home / ".cache" / "grader" / f"serve-{socket.gethostname()}" / "serve.sock")
    return [p for p in out if p.is_absolute() and len(os.fsencode(str(p))) <= _SUN_PATH]


def default_socket() -> Path:
    """Where ``grader serve`` listens: the first of :func:`socket_candidates` whose folder is,
    or can be made, this user's private folder (:func:`private_folder`), made if missing.

    Raises:
        GraderError: none of them can be.
    """
    from .errors import GraderError
    tried = []
    for path in socket_candidates():
        try:
            if private_folder(path.parent, create=True):
                return path
        except (GraderError, OSError) as exc:
            tried.append(str(exc))
    raise GraderError("no private folder for grader serve's socket (" + "; ".join(tried) + "); give --socket "
                      "in a folder only you can enter (mode 0700)")


def connect_any(path: Path | None = None) -> socket.socket | None:
    """A connection to this user's ``grader serve`` of this install at ``path``, or (None) at
    the first of :func:`socket_candidates` that answers; None when none does."""
    for candidate in [path] if path is not None else socket_candidates():
        sock = connect(candidate)
        if sock is not None:
            return sock
    return None


def private_folder(folder: Path, create: bool) -> bool:
    """Whether ``folder`` is a real folder (not a link) owned by this user that nobody else can
    enter (no group or other permission bits); with ``create``, made so if it is missing.

    Raises:
        GraderError: ``create`` and the folder exists but is not private (someone else's, a link,
            or open to others): a socket there could be swapped or read.
    """
    from .errors import GraderError
    if create:
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700, parents=True)
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    ok = stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o077
    if create and not ok:
        raise GraderError(f"{folder} is not a private folder of this user (a link, someone else's, or open to "
                          f"others); give --socket in one (mode 0700)")
    return ok


#: seconds a client waits for a server's greeting (its :func:`identity`) before running cold
GREETING_WAIT = 5.0


def connect(path: Path, same_install: bool = True) -> socket.socket | None:
    """A connection to the server at ``path`` if it is this user's (folder, socket and peer)
    and, with ``same_install``, greets with this grader's :func:`identity` (a server of another
    install, or one older than the greeting, is not asked: attack round 37); else None."""
    if not private_folder(path.parent, create=False):
        return None
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISSOCK(st.st_mode) or st.st_uid != os.geteuid():
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
    except OSError:
        sock.close()
        return None
    if int.from_bytes(creds[4:8], sys.byteorder) != os.geteuid():
        sock.close()
        return None
    if same_install and _greeting(sock) != identity():
        sock.close()
        return None
    return sock


def _greeting(sock: socket.socket) -> str | None:
    """The ``grader`` identity of the server's first line on ``sock`` (None: none within
    :data:`GREETING_WAIT` seconds, or not a greeting). Reads only that line."""
    line = b""
    deadline = time.monotonic() + GREETING_WAIT   # in all: a server that trickles bytes holds no client longer
    try:
        while not line.endswith(b"\n") and len(line) < 1024:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            sock.settimeout(left)
            more = sock.recv(1)   # byte by byte: nothing after the greeting is taken from the socket
            if not more:
                return None
            line += more
        sock.settimeout(None)
        message = json.loads(line)
    except (OSError, ValueError):
        return None
    return message.get("grader") if isinstance(message, dict) else None


def greeting(stamp: tuple[tuple[str, int, int], ...] | None = None) -> bytes:
    """The line a server sends each connection first: its :func:`identity`."""
    return json.dumps({"grader": identity(stamp)}).encode() + b"\n"


def current_umask() -> int:
    """This process's file-mode creation mask, read without changing it (``/proc/self/status``;
    where that is missing, set and restored at once)."""
    with contextlib.suppress(OSError, ValueError, StopIteration):
        with open("/proc/self/status", "rb") as fh:
            return int(next(line for line in fh if line.startswith(b"Umask:")).split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def rlimit_names() -> tuple[str, ...]:
    """The ``resource.RLIMIT_*`` names of this platform, sorted."""
    import resource
    return tuple(sorted(n for n in dir(resource) if n.startswith("RLIMIT_")))


#: lines of ``/proc/self/status`` that are not inherited settings (this process's identity,
#: memory, threads, signals, which the check's child resets, and what the server's check takes
#: over: the umask and the CPUs); every other line is a fact a check's process inherits and a
#: server's check must share with its client: credentials, groups, capabilities, no-new-privileges,
#: a seccomp filter, transparent huge pages, speculation controls, memory nodes, and whatever a
#: later kernel adds (attack round 41: a list of known lines missed the primary group)
_VOLATILE_STATUS = frozenset({
    "Name", "Umask", "State", "Tgid", "Ngid", "Pid", "PPid", "TracerPid", "FDSize", "NStgid", "NSpid", "NSpgid",
    "NSsid", "Threads", "SigQ", "SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt", "Cpus_allowed",
    "Cpus_allowed_list", "voluntary_ctxt_switches", "nonvoluntary_ctxt_switches", "CoreDumping"})
_VOLATILE_PREFIXES = ("Vm", "Rss", "Hugetlb")
#: ``prctl`` settings a process inherits that no ``/proc`` file shows (``linux/prctl.h``):
#: memory-deny-write-execute (``PR_GET_MDWE``, attack round 41: a server under it crashed every
#: JAX check), the secure bits, the timer slack, the I/O flusher flag, KSM merging
_PRCTL_GET = {"mdwe": 66, "securebits": 27, "timerslack": 30, "io_flusher": 58, "memory_merge": 68}
PR_GET_PERSONALITY = 0xFFFFFFFF
#: the namespaces of ``/proc/self/ns`` (Linux 6.x), the time namespace among them (attack round 41)
_NAMESPACES = ("cgroup", "ipc", "mnt", "net", "pid", "pid_for_children", "time", "time_for_children", "user", "uts")


def _prctl_facts() -> dict[str, int]:
    """The :data:`_PRCTL_GET` settings of this process that this kernel has (an option it does
    not know is left out, the same in server and client)."""
    import ctypes
    import errno
    libc = ctypes.CDLL(None, use_errno=True)
    out: dict[str, int] = {}
    for name, option in _PRCTL_GET.items():
        value = libc.prctl(option, 0, 0, 0, 0)
        if value >= 0:
            out[name] = value
        elif ctypes.get_errno() != errno.EINVAL:
            out[name] = -ctypes.get_errno()
    # the execution domain (linux32, setarch -R: attack round 40) by the system call, not
    # /proc/self/personality: a non-dumpable process (the server) of a user other than root may
    # not read that file (attack round 41: every check of such a server was refused)
    out["personality"] = libc.personality(ctypes.c_ulong(PR_GET_PERSONALITY))
    return out


def fixed_facts() -> dict[str, Any]:
    """What a process's check inherits and a server's check cannot take over from its client:
    every inherited line of ``/proc/self/status`` (all but :data:`_VOLATILE_STATUS`: credentials,
    groups, capabilities, no-new-privileges, seccomp...), every namespace (``/proc/self/ns``, the
    time namespace included; the cgroups a server's check joins: :func:`cgroup_joins`), the ``prctl`` settings of
    :data:`_PRCTL_GET` and the personality, the scheduling policy, the OOM score adjustment and
    the security module's label. The server refuses a request whose facts differ from its own.

    What no process can read of itself is not here: a Landlock domain and what a seccomp filter
    refuses (only their count); docs/security.md says what the server does about them."""
    out: dict[str, Any] = {"groups": sorted(os.getgroups()), **proc_facts("self")}
    with contextlib.suppress(OSError, AttributeError):
        out.update(_prctl_facts())
    with contextlib.suppress(OSError, AttributeError):
        out["scheduler"] = [os.sched_getscheduler(0), os.sched_getparam(0).sched_priority]
    return out


def _status(pid: "int | str") -> dict[str, str]:
    """``/proc/PID/status`` as name -> value.

    Raises:
        OSError: it cannot be read.
    """
    with open(f"/proc/{pid}/status", encoding="utf-8", errors="replace") as fh:
        return {name: value.strip() for name, _, value in (line.partition(":") for line in fh)}


def proc_facts(pid: "int | str", status: dict[str, str] | None = None) -> dict[str, str]:
    """The facts of :func:`fixed_facts` that ``/proc/PID`` shows of any process of this user
    (``pid`` a number, or ``self``): the inherited lines of its status, its namespaces, its root
    folder (a chroot: attack round 43), OOM score adjustment and security label (``status``: its
    status already read). A server reads them of its peer itself (:func:`peer_state`), not from
    what the peer says (attack round 42)."""
    if status is None:
        with contextlib.suppress(OSError):
            status = _status(pid)
    out = {name: value for name, value in (status or {}).items()
           if name not in _VOLATILE_STATUS and not name.startswith(_VOLATILE_PREFIXES)}
    for ns in _NAMESPACES:   # each link is readable to a non-dumpable process, the folder's list is not
        with contextlib.suppress(OSError):
            out[f"ns/{ns}"] = os.readlink(f"/proc/{pid}/ns/{ns}")
    with contextlib.suppress(OSError):
        out["root"] = _root_view(pid)
    for name, leaf in (("oom_score_adj", "oom_score_adj"), ("lsm", "attr/current")):
        with contextlib.suppress(OSError):
            with open(f"/proc/{pid}/{leaf}", encoding="utf-8", errors="replace") as fh:
                out[name] = fh.read().strip()
    return out


def _root_view(pid: "int | str") -> str:
    """The root folder of process ``pid`` as a fact: where this process sees it (the link's
    text: ``/`` unless chrooted), its device and inode, and the mount it is (``mnt_id``). A
    chroot into a bind mount of ``/`` has the device and inode of ``/`` but its own mounts
    (attack round 44: such a jailed client was served, and its report replaced a host file the
    jail cannot see; round 43 compared the device and inode only).

    Raises:
        OSError: ``/proc/PID/root`` cannot be read (another user's process, or gone).
    """
    link = os.readlink(f"/proc/{pid}/root")
    fd = os.open(f"/proc/{pid}/root", os.O_PATH | os.O_DIRECTORY)
    try:
        st = os.fstat(fd)
        with open(f"/proc/self/fdinfo/{fd}", encoding="ascii", errors="replace") as fh:
            mount = next((line.split()[1] for line in fh if line.startswith("mnt_id:")), "?")
    finally:
        os.close(fd)
    return f"{link}:{st.st_dev}:{st.st_ino}:{mount}"


def _cgroup_mounts() -> dict[str, tuple[str, str]]:
    """Controller ("" for cgroup v2, ``name=X`` for a named v1 hierarchy) -> (the mount's root in
    its hierarchy, where it is mounted), from this process's mount table."""
    mounts: dict[str, tuple[str, str]] = {}
    with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            parts = line.split()
            sep = parts.index("-")
            fstype, root, point = parts[sep + 1], parts[3], parts[4]
            if fstype == "cgroup2":
                mounts.setdefault("", (root, point))
            elif fstype == "cgroup":
                for option in parts[sep + 3].split(","):
                    mounts.setdefault(option, (root, point))
    return mounts


def cgroup_joins(pid: int) -> list[str] | None:
    """The ``cgroup.procs`` files of the cgroups process ``pid`` is in and this process is not
    (one per hierarchy, v1 and v2), which a server's check joins before anything else so that
    it is held to, and charged to, its client's cgroups as the client's own check would be
    (attack round 43: equal limits are not the same cgroup; a client near its cgroup's process
    limit passed served and failed cold). [] when they are this process's own; None when a
    hierarchy cannot be read or placed.

    Raises nothing: an unreadable ``/proc`` entry gives None.
    """
    try:
        with open(f"/proc/{pid}/cgroup", encoding="utf-8", errors="replace") as fh:
            theirs = fh.read().splitlines()
        with open("/proc/self/cgroup", encoding="utf-8", errors="replace") as fh:
            mine = set(fh.read().splitlines())
        mounts = _cgroup_mounts() if set(theirs) - mine else {}
    except (OSError, ValueError):
        return None
    out: list[str] = []
    for line in theirs:
        if line in mine:
            continue
        _, controllers, path = line.split(":", 2)
        key = next((c for c in (controllers.split(",") if controllers else [""]) if c in mounts), None)
        if key is None:
            return None
        root, point = mounts[key]
        rel = os.path.relpath(path, root)
        if rel.startswith(".."):
            return None
        out.append(os.path.normpath(os.path.join(point, rel, "cgroup.procs")))
    return out


def peer_state(pid: int) -> dict[str, Any] | None:
    """What the server can see of its peer ``pid`` itself (``SO_PEERCRED``): its umask, whether
    it is traced, its resource limits, nice value, CPUs, scheduling policy and
    :func:`proc_facts`; None when the process is
    gone or cannot be read. A request's ``process`` must agree with it: a hand-made request that
    copied the server's facts was served (attack round 42: a root client without capabilities
    wrote another user's file; a client at nice 10 had its check run at nice 0)."""
    import resource
    try:
        status = _status(pid)
        facts = proc_facts(pid, status)
        state = {"umask": int(status["Umask"], 8), "traced": status.get("TracerPid", "0") != "0",
                 "rlimits": {n: list(resource.prlimit(pid, getattr(resource, n))) for n in rlimit_names()},
                 "nice": os.getpriority(os.PRIO_PROCESS, pid), "cpus": sorted(os.sched_getaffinity(pid)),
                 "scheduler": [os.sched_getscheduler(pid), os.sched_getparam(pid).sched_priority], "facts": facts}
    except (OSError, ValueError, KeyError):
        return None
    return state if "Uid" in facts else None


def process_state() -> dict[str, Any]:
    """What a check takes from the process that starts it besides its arguments, environment
    and folder, and a server's check would otherwise take from the server: the umask, every
    resource limit (``[soft, hard]``, -1 unlimited), the nice value and the CPUs it may run on,
    which the server's check takes over (``grader.forkserver.adopt``), and the facts it cannot
    (``fixed``: :func:`fixed_facts`), which must be the server's own. Sent with each request;
    a spare is used only when started under the same (``grader.run.spare.Spare.matches``): a
    server started under ``umask 077``, ``ulimit -s 1024``, ``nice`` or ``taskset`` ran its
    client's checks so (attack rounds 37 and 38)."""
    import resource
    return {"umask": current_umask(),
            "rlimits": {name: list(resource.getrlimit(getattr(resource, name))) for name in rlimit_names()},
            "nice": os.getpriority(os.PRIO_PROCESS, 0), "cpus": sorted(os.sched_getaffinity(0)),
            "fixed": fixed_facts()}


_IMPORT = re.compile(rb"""(?:^|["\n])[ \t]*(?:import|from)[ \t]+(jax|torch)\b""", re.MULTILINE)


def framework_hint(argv: list[str], cwd: str) -> str:
    """Which spare a check of ``argv`` should go to: ``--framework X``, else the first
    ``import jax``/``import torch`` line of a ``.py``/``.ipynb`` file named in ``argv`` (read
    without following links, 256 KiB at most), else ``numpy``. Only a guess for choosing a
    spare: a wrong one makes the check start its own child, nothing else."""
    for i, arg in enumerate(argv):
        if arg == "--framework" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--framework="):
            return arg.split("=", 1)[1]
    for arg in argv:
        if not arg.endswith((".py", ".ipynb")) or arg.startswith("-"):
            continue
        head = read_head(os.path.join(cwd, arg))
        if head is None:
            continue
        return framework_of(head)
    return "numpy"


def framework_of(source: bytes) -> str:
    """``jax`` or ``torch`` by the first ``import jax``/``import torch`` line of ``source``
    (a file's text, or a notebook's JSON), else ``numpy``."""
    found = _IMPORT.search(source)
    return found.group(1).decode() if found else "numpy"


def read_head(path: str, size: int = 256 << 10) -> bytes | None:
    """The first ``size`` bytes of the regular file at ``path``, read without following a link
    and without waiting on a FIFO; None when it is not one or cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.read(fd, size) if stat.S_ISREG(os.fstat(fd).st_mode) else None
    except OSError:
        return None
    finally:
        os.close(fd)


#: at most this many files named in a request are sent opened (:func:`proofs`)
MAX_PROOFS = 8


def stdio() -> list[list[str]]:
    """``[[encoding, errors], [encoding, errors]]`` of this process's standard output and error:
    sent with a request, which the server's check takes (its own streams were opened when the
    server started, under its ``PYTHONIOENCODING`` and locale: attack round 41)."""
    return [[str(getattr(s, "encoding", None) or "utf-8"), str(getattr(s, "errors", None) or "strict")]
            for s in (sys.stdout, sys.stderr)]


def proofs(argv: list[str], cwd: str) -> list[tuple[str, int]]:
    """``(argument, descriptor)`` for each argument of ``argv`` (at most :data:`MAX_PROOFS`) that
    names a regular file this process can open for reading (relative to ``cwd``; no link followed,
    no FIFO waited on). Sent with a request: the server reads a file the client names only if the
    client could open it (attack round 41: a client confined by Landlock had the server grade a
    file its domain forbade). The caller closes the descriptors."""
    out: list[tuple[str, int]] = []
    for arg in argv[1:]:
        if len(out) >= MAX_PROOFS:
            break
        if arg.startswith("-") or any(arg == a for a, _ in out):
            continue
        path = os.path.join(cwd, arg)
        try:
            if not stat.S_ISREG(os.lstat(path).st_mode):
                continue
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except (OSError, ValueError):
            continue
        try:
            regular = stat.S_ISREG(os.fstat(fd).st_mode)
        except OSError:
            regular = False
        if regular:
            out.append((arg, fd))
        else:
            os.close(fd)
    return out


def send_request(sock: socket.socket, argv: list[str], env: dict[str, str], cwd: str, fds: list[int]) -> None:
    """Send one check request (module docstring) on ``sock``, with this grader's :func:`identity`
    and :func:`framework_hint`: the three streams ``fds``, then the files ``argv`` names, opened
    (:func:`proofs`), whose arguments the request lists as ``proofs``."""
    opened = proofs(argv, cwd)
    try:
        socket.send_fds(sock, [b"R"], [*fds, *(fd for _, fd in opened)])
    finally:
        for _, fd in opened:
            os.close(fd)
    sock.sendall(json.dumps({"argv": argv, "env": env, "cwd": cwd, "grader": identity(),
                             "framework": framework_hint(argv, cwd), "process": {**process_state(), "stdio": stdio()},
                             "proofs": [arg for arg, _ in opened]}).encode() + b"\n")


class Reader:
    """The server's answer lines on one connection, read as they come."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock, self.buffer, self.closed = sock, b"", False

    def poll(self) -> list[dict[str, Any]]:
        """The messages that have arrived (without waiting when the socket is non-blocking);
        sets :attr:`closed` at end of input."""
        out = []
        while not self.closed:
            try:
                data = self.sock.recv(1 << 16)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                data = b""
            if not data:
                self.closed = True
                break
            self.buffer += data
            if self.sock.gettimeout() != 0.0:
                break
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            with contextlib.suppress(ValueError, RecursionError):
                message = json.loads(line)
                if isinstance(message, dict):
                    out.append(message)
        return out


def run_served(argv: list[str], fds: tuple[int, int, int] = (0, 1, 2), cwd: str | None = None) -> int | None:
    """``grader check ARGV`` run by the user's ``grader serve``, with this process's environment,
    the working folder ``cwd`` (default this process's) and the streams ``fds`` (stdin, stdout,
    stderr; default this process's): its exit code, or None when there is no server to ask (none running,
    not this user's, stale, or it went away before the check started): the caller runs the check
    itself. An interrupt is passed on (SIGINT to the check, which ends as ``grader check`` does;
    a second one kills it)."""
    from . import memo
    if os.environ.get(SERVE_ENV, "1") == "0" or memo.ENABLED:   # on in a fork server and its forks only
        return None
    sock = connect_any()
    if sock is None:
        return None
    try:
        try:
            send_request(sock, argv, dict(os.environ), os.getcwd() if cwd is None else cwd, list(fds))
        except OSError:
            return None
        reader = Reader(sock)
        started = False
        interrupts = 0
        while True:
            try:
                messages = reader.poll()
            except KeyboardInterrupt:
                interrupts += 1
                if not started:
                    return 130
                with contextlib.suppress(OSError):
                    sock.sendall(json.dumps({"signal": "INT" if interrupts == 1 else "KILL"}).encode() + b"\n")
                continue
            for message in messages:
                if "refused" in message:
                    return None
                if "pid" in message:
                    started = True
                if "code" in message:
                    code = int(message["code"])
                    return code if code >= 0 else 128 - code
            if reader.closed:
                if not started:
                    return None
                sys.stderr.write("grader: error: the grader serve process ended during the check\n")
                return 2
    finally:
        sock.close()


def run_served_captured(argv: list[str], cwd: str | None = None) -> tuple[int, str, str] | None:
    """:func:`run_served` with no input and the check's output caught in two temporary files:
    (exit code, stdout, stderr), or None when no server answers (for a caller whose own streams
    are not the check's: ``check(fn)`` in a kernel, the kernel's warm grader)."""
    import tempfile

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, open(os.devnull, "rb") as null:
        code = run_served(argv, (null.fileno(), out.fileno(), err.fileno()), cwd=cwd)
        if code is None:
            return None
        out.seek(0)
        err.seek(0)
        return code, out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")


# -- grader grade's own fork server --------------------------------------------------------------------

#: how long ``grader grade`` waits for its fork server to be ready, in seconds
READY_WAIT = 120.0


class ForkedCheck:
    """One check forked by a :class:`BatchServer`, with the part of :class:`subprocess.Popen`'s
    interface the batch uses: :attr:`pid` (the check's process and process group), :meth:`poll`,
    :meth:`wait`, :attr:`returncode` (negative for a signal) and :meth:`kill_group`.

    Raises:
        OSError: (constructor) the server refused the request or went away before the check
            started: the caller starts the check itself.
    """

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.reader = Reader(sock)
        self.returncode: int | None = None
        self.pid = 0
        sock.settimeout(READY_WAIT)
        while not self.pid:
            messages = self.reader.poll()
            for message in messages:
                if "refused" in message:
                    sock.close()
                    raise OSError(f"the fork server refused the check: {message['refused']}")
                if "pid" in message:
                    self.pid = int(message["pid"])
                if "code" in message:      # a quick check's end can come in the same read as its start
                    self.returncode = int(message["code"])
            if self.reader.closed and not self.pid:
                sock.close()
                raise OSError("the fork server went away before the check started")
        sock.setblocking(False)

    def _read(self) -> None:
        for message in self.reader.poll():
            if "code" in message:
                self.returncode = int(message["code"])
        if self.reader.closed and self.returncode is None:
            self.returncode = -signal.SIGKILL     # the server ended (and killed its checks)

    def poll(self) -> int | None:
        """The exit code once the check has ended, else None (never waits)."""
        if self.returncode is None:
            self._read()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the check to end; its exit code.

        Raises:
            subprocess.TimeoutExpired: ``timeout`` seconds passed first.
        """
        import select
        import subprocess
        import time
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(f"forked check {self.pid}", timeout or 0)
            select.select([self.sock], [], [], 0.5 if left is None else min(left, 0.5))
        self.sock.close()
        return self.returncode  # type: ignore[return-value]

    def kill_group(self) -> None:
        """SIGKILL the check's process group (through the server, which also reaps it)."""
        with contextlib.suppress(OSError):
            self.sock.setblocking(True)
            self.sock.sendall(json.dumps({"signal": "KILL"}).encode() + b"\n")
            self.sock.setblocking(False)
        with contextlib.suppress(OSError):
            os.killpg(self.pid, signal.SIGKILL)


class BatchServer:
    """``grader grade``'s fork server: started once for the batch, warmed for its check flags,
    forking one ``grader check`` per learner (:meth:`start`). It dies with the batch (its
    control socket closes; ``preexec`` gives it the batch's parent-death signal), killing the
    checks it still runs.

    Raises:
        OSError: (constructor) it could not be started or was not ready within
            :data:`READY_WAIT` seconds: the batch starts each check as a process of its own.
    """

    def __init__(self, warm: list[str], cwd: str, env: dict[str, str], preexec: Any = None) -> None:
        import subprocess
        from .processes import track_child
        self.control, theirs = socket.socketpair()
        try:
            self.proc = subprocess.Popen([*command(), "--control", str(theirs.fileno()), "--warm", json.dumps(warm)],
                                         pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd, env=env,
                                         start_new_session=True, preexec_fn=preexec)
        finally:
            theirs.close()
        track_child(self.proc.pid)    # the batch's sweeps keep it and the checks below it
        self.control.settimeout(READY_WAIT)
        try:
            ready = self.control.recv(16)
        except OSError:
            ready = b""
        if ready != b"ready\n":
            self.close()
            raise OSError("the fork server did not start")
        self.control.settimeout(None)

    def start(self, argv: list[str], env: dict[str, str], cwd: str, fds: list[int]) -> ForkedCheck:
        """Fork ``grader <argv>`` with ``env``, working folder ``cwd`` and streams ``fds``.

        Raises:
            OSError: the server refused or is gone (start the check as a process instead).
        """
        mine, theirs = socket.socketpair()
        try:
            socket.send_fds(self.control, [b"C"], [theirs.fileno()])
        except OSError:
            mine.close()
            raise
        finally:
            theirs.close()
        send_request(mine, argv, env, cwd, fds)
        return ForkedCheck(mine)

    def close(self) -> None:
        """Stop the server (it kills the checks it still runs) and reap it."""
        import subprocess
        from .processes import untrack_child
        with contextlib.suppress(OSError):
            self.control.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        untrack_child(self.proc.pid)
