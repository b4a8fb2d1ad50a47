"""What a fork server's check may take from its client, and which requests it leaves to it.

A server's check is forked from the server: it inherits the server's process (privileges,
namespaces, limits, streams) and acts with the server's rights. Before forking one, the server
reads what it can of the connecting process itself and refuses (the client then runs its own,
cold, check) a request whose state is not its sender's (:func:`misstated`), whose state it
cannot take over or that differs in what it cannot take (:func:`unadoptable`, then
:func:`adopt` in the fork), or that would have it act where the client might not
(:func:`unserved`); :func:`spare_for` says which started-ahead child a request may use.
Attack rounds 37-42 (docs/security.md) are the reasons, each named where it applies.
"""
from __future__ import annotations

import contextlib
import functools
import os
import signal
import socket
import sys
from typing import Any

from .forkserver_client import fixed_facts, peer_state, proc_facts, rlimit_names

#: the CLI's entry point and parser builder (``grader.cli.main``, ``grader.cli.build_parser``),
#: handed over by :func:`cmd_serve` (this module sits below the CLI and does not import it)
CLI: dict[str, Any] = {}


def _not_above(a: int, b: int) -> bool:
    """``a <= b`` for resource limits, where -1 (``RLIM_INFINITY``) is unlimited."""
    return b == -1 or (a != -1 and a <= b)


#: capability bits (``linux/capability.h``): raise a hard resource limit; lower the nice value
CAP_SYS_RESOURCE, CAP_SYS_NICE = 24, 23


def _has_capability(bit: int) -> bool:
    """Whether this process has the capability ``bit`` in effect (``CapEff``; root without it
    may not raise a hard limit: attack round 38)."""
    with contextlib.suppress(OSError, ValueError, StopIteration):
        with open("/proc/self/status", encoding="utf-8") as fh:
            return bool(int(next(line for line in fh if line.startswith("CapEff:")).split()[1], 16) >> bit & 1)
    return False


#: the limits on a process's size: a fork's is the server's size and more
_SIZE_LIMITS = ("RLIMIT_AS", "RLIMIT_DATA")


def unadoptable(state: Any) -> str | None:
    """Why this server's check could not take the client's ``process_state`` (a request's
    ``process``: ``grader.forkserver_client.process_state``) as its own, or None when it can:
    malformed; other limits than this platform's; a hard limit above this server's or a lower
    nice value without the capability to set it; CPUs it may not run on; or facts it cannot
    take at all (``fixed``: groups, privileges, namespaces, cgroup) that differ from its own.
    The client then runs its check itself."""
    import resource
    if not isinstance(state, dict) or not isinstance(state.get("umask"), int) or not 0 <= state["umask"] <= 0o777:
        return "a request's process is {\"umask\": int, \"rlimits\": {name: [soft, hard]}, ...}"
    if state.get("fixed") != fixed_facts():
        return "the client's groups, privileges, namespaces or cgroup are not this server's"
    nice, cpus = state.get("nice"), state.get("cpus")
    if type(nice) is not int or not -20 <= nice <= 19 or \
            (nice < os.getpriority(os.PRIO_PROCESS, 0) and not _has_capability(CAP_SYS_NICE)):
        return "the client's nice value cannot be this server's check's"
    if not (isinstance(cpus, list) and cpus and all(type(c) is int and 0 <= c < 1 << 16 for c in cpus)):
        return "the request's CPUs are not a list of CPU numbers"
    limits = state.get("rlimits")
    if not isinstance(limits, dict) or set(limits) != set(rlimit_names()):
        return "the request's resource limits are not this platform's"
    for name, value in limits.items():
        if not (isinstance(value, list) and len(value) == 2 and all(type(v) is int and v >= -1 for v in value)):
            return f"the request's {name} is not [soft, hard]"
        soft, hard = value
        if not _not_above(soft, hard):
            return f"the request's {name} has its soft limit above its hard one"
        if not _not_above(hard, resource.getrlimit(getattr(resource, name))[1]) and not _has_capability(CAP_SYS_RESOURCE):
            return f"the request's hard {name} is above this server's"
        if name in _SIZE_LIMITS and value != list(resource.getrlimit(getattr(resource, name))):
            # a fork carries the server's mappings (every preloaded module, specs and cases: about
            # 200 MB), which a fresh process does not: the same limit is tighter here (attack round 41)
            return f"the client's {name} would count this server's memory"
    stdio = state.get("stdio")
    if not (isinstance(stdio, list) and len(stdio) == 2 and all(
            isinstance(s, list) and len(s) == 2 and all(isinstance(x, str) and x.isascii() and 0 < len(x) < 64 for x in s)
            for s in stdio)):
        return "the request's stdio is [[encoding, errors], [encoding, errors]]"
    import codecs
    for encoding, errors in stdio:
        try:
            codecs.lookup(encoding)
            codecs.lookup_error(errors)
        except LookupError:
            return "the client's standard streams use an encoding this server does not know"
    return None


def adopt(state: dict[str, Any]) -> None:
    """Take the client's umask, resource limits, nice value and CPUs (:func:`unadoptable`
    checked them) as this process's, so that the check and its child run as the client's own
    check would.

    Raises:
        OSError, ValueError: a limit cannot be set (the check then exits 2).
    """
    import resource
    os.umask(state["umask"])
    for name, (soft, hard) in state["rlimits"].items():
        which = getattr(resource, name)
        if tuple(resource.getrlimit(which)) != (soft, hard):
            resource.setrlimit(which, (soft, hard))
    if os.getpriority(os.PRIO_PROCESS, 0) != state["nice"]:
        os.setpriority(os.PRIO_PROCESS, 0, state["nice"])
    if sorted(os.sched_getaffinity(0)) != state["cpus"]:
        os.sched_setaffinity(0, state["cpus"])
    # the client's encodings of its standard streams (PYTHONIOENCODING, its locale), not the ones
    # the server's streams were opened with when it started (attack round 41: exit 2 on one side)
    # (new streams over descriptors 1 and 2, which are the client's now: the old ones may take a
    # pipe for the seekable file the server's output went to)
    import io
    for fd, name, (encoding, errors) in zip((1, 2), ("stdout", "stderr"), state["stdio"]):
        with contextlib.suppress(Exception):
            getattr(sys, name).flush()
        setattr(sys, name, io.TextIOWrapper(io.BufferedWriter(io.FileIO(fd, "w", closefd=False)),
                                            encoding=encoding, errors=errors,
                                            line_buffering=name == "stderr" or os.isatty(fd)))


@functools.cache
def default_limits() -> Any:
    """The limits of a ``grader check`` given no ``--timeout`` or ``--memory-mb`` (what a spare
    is started with; a check with others starts its own child). Parsed once per process."""
    from .options import Limits
    args = parser().parse_args(["check", "submission.py"])
    return Limits(call_timeout=args.timeout, memory_bytes=args.memory_mb << 20)


def misstated(state: Any, peer: tuple[int, int]) -> str | None:
    """Why a request's ``process`` (what the client says of itself) is not what this server
    reads of the connecting process ``peer`` (pid, pidfd: ``forkserver_client.peer_state``), or
    None. Every fact ``/proc`` shows is read, not taken on the client's word (attack round 42:
    a hand-made request that copied the server's facts was served to a client without
    capabilities, or at a higher nice value); the ``prctl`` settings no other process can read
    stay the client's word, which only an honest client needs (they change results, not
    rights). And a client with no-new-privileges set is not served at all: a Landlock domain
    or a seccomp filter, which no other process can see, requires it of a process without
    capabilities (attack rounds 41 and 42: such a client had the server read, write and run
    what its domain forbade)."""
    pid, pidfd = peer
    real = peer_state(pid)
    try:
        signal.pidfd_send_signal(pidfd, 0)    # still that process: its pid was not reused meanwhile
    except OSError:
        real = None
    if real is None or not set(proc_facts("self")) <= set(real["facts"]):
        return "the client's process cannot be read"
    if real["traced"]:   # a ptrace-based jail (proot) sees other paths than the server's (attack round 43)
        return "a traced client runs its own check"
    if real["facts"].get("NoNewPrivs", "0") != "0":
        return "a client with no-new-privileges may be confined in ways a server cannot see: it runs its own check"
    fixed = state.get("fixed") if isinstance(state, dict) else None
    if not isinstance(fixed, dict) or any(fixed.get(k) != v for k, v in real["facts"].items()) \
            or fixed.get("scheduler") != real["scheduler"] \
            or any(state.get(k) != real[k] for k in ("umask", "rlimits", "nice", "cpus")):
        return "the request's process is not its sender's"
    return None


def parser() -> Any:
    """The CLI's parser (``CLI["build_parser"]``), built once per builder: building it takes about
    9 ms, and a served request was parsed twice (:func:`unserved`, :func:`spare_for`) and the
    warm-up's flags after every check. Only parsed with, never changed.

    Raises:
        KeyError: the CLI has not handed its builder over yet.
    """
    return _built(CLI["build_parser"])


@functools.lru_cache(maxsize=1)
def _built(build: Any) -> Any:
    return build()


def _parsed(argv: Any) -> Any:
    """``argv`` parsed by the CLI's parser (quietly), or None when it does not parse."""
    import io
    if "build_parser" not in CLI:
        return None
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            return parser().parse_args(argv)
    except (SystemExit, Exception):  # noqa: BLE001 - the client's own check reports a usage error
        return None


def _real(path: str | None, cwd: str) -> str | None:
    return None if not path else os.path.realpath(os.path.join(cwd, path))


def unserved(request: dict[str, Any], proofs: list[int], warm: list[str]) -> str | None:
    """Why ``grader serve`` leaves ``request`` to its client (which then runs the check itself,
    under its own confinement), or None: the server's check acts with the server's rights, and a
    client of the same user may have fewer than the server can see (a Landlock domain, a seccomp
    filter's rules: attack round 41). So a served check runs learner code only in the sandbox
    (not ``--sandbox none``), trusted code only from the server's own problems folder (the
    specs, references and hint modules it was started with; no ``--assignment``), and reads a
    file the request names (the submission, ``--seed-secret``) only when the client sent it
    opened (``proofs``: ``grader.forkserver_client.proofs``; the same file by device and inode).
    ``warm`` is the server's preload flags (its ``--problems-dir``)."""
    from .sandbox import ENV_TIER
    args = _parsed(request["argv"])
    if args is None or getattr(args, "command", None) != "check":
        return "only a check that parses is served"
    if args.sandbox == "none" or request["env"].get(ENV_TIER, "").strip() == "none":
        # the tier none chosen by the client's environment is --sandbox none too (attack round 54)
        return "a check without the sandbox runs in the client's own process"
    if args.assignment:
        return "a check of an assignment runs in the client's own process"
    cwd = request["cwd"]
    mine = warm[warm.index("--problems-dir") + 1] if "--problems-dir" in warm[:-1] else \
        os.environ.get("GRADER_PROBLEMS_DIR") or None
    theirs = args.problems_dir or request["env"].get("GRADER_PROBLEMS_DIR") or None
    if _real(theirs, cwd) != _real(mine, "/"):
        return "the client's problems folder is not this server's"
    named = request.get("proofs")
    if not (isinstance(named, list) and len(named) == len(proofs) and all(isinstance(n, str) for n in named)):
        return "the request's proofs are not its files' arguments"
    opened = dict(zip(named, proofs))
    for arg in [args.submission, *([args.seed_secret] if args.seed_secret else [])]:
        fd = opened.get(arg)
        try:
            here, theirs_st = os.lstat(os.path.join(cwd, arg)), (os.fstat(fd) if fd is not None else None)
        except OSError:
            theirs_st = None
        if theirs_st is None or (here.st_dev, here.st_ino) != (theirs_st.st_dev, theirs_st.st_ino):
            return "the client did not send a file the check reads, opened"
    return None


def spare_for(request: dict[str, Any]) -> str | None:
    """The framework of the spare that could run ``request`` (its ``framework`` hint), or None
    when its check would not use one: not ``check``, or flags that change the child's limits or
    tier (``--timeout``, ``--memory-mb``, ``--sandbox``), or arguments that do not parse."""
    framework = request.get("framework")
    args = _parsed(request["argv"]) if isinstance(framework, str) else None
    if args is None:
        return None
    if getattr(args, "command", None) != "check" or getattr(args, "sandbox", "auto") != "auto":
        return None
    default = default_limits()
    if args.timeout != default.call_timeout or args.memory_mb << 20 != default.memory_bytes:
        return None
    return framework


def installed_frameworks(names: str) -> tuple[str, ...]:
    """The frameworks among the comma-separated ``names`` (numpy, jax, torch; ``none``: no
    spares) whose package is installed here.

    Raises:
        GraderError: a name that is not a framework the grader runs.
    """
    import importlib.util

    from .errors import GraderError
    wanted = [n.strip() for n in (names or "").split(",") if n.strip() and n.strip() != "none"]
    if "auto" in wanted:   # numpy and jax from the start (Zygote.adopt_framework adds the others)
        wanted = [n for n in wanted if n != "auto"] + ["numpy", "jax"]
    for name in wanted:
        if name not in ("numpy", "jax", "torch"):
            raise GraderError(f"--spares: {name!r} is not one of numpy, jax, torch, auto, none")
    return tuple(n for n in dict.fromkeys(wanted) if importlib.util.find_spec(n) is not None)


def private_folder_fd(path: str) -> int:
    """An open descriptor of the folder ``path`` if it is a real folder of this user's that no
    one else may enter; what is done there afterwards goes through it, not the path (the path's
    folders above it may be someone else's, who could swap them, attack round 37).

    Raises:
        GraderError: it is not.
    """
    from .errors import GraderError
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise GraderError(f"{path}: {exc.strerror or exc}") from None
    st = os.fstat(fd)
    if st.st_uid != os.geteuid() or st.st_mode & 0o077:
        os.close(fd)
        raise GraderError(f"{path} is not a private folder of this user (someone else's, or open to others); "
                          "give --socket in one (mode 0700)")
    return fd


def listen_private(path: str) -> tuple[socket.socket, int]:
    """A socket listening at ``path``, made mode 0600 in its private folder (through the
    folder's descriptor, kept open: the second value, for removing it at the end).

    Raises:
        GraderError: the folder is not private (:func:`private_folder_fd`).
    """
    folder = private_folder_fd(os.path.dirname(path) or ".")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mask = os.umask(0o177)   # made 0600, never open to others for a moment
    try:
        listener.bind(f"/proc/self/fd/{folder}/{os.path.basename(path)}")
    finally:
        os.umask(mask)
    listener.listen(16)
    return listener, folder
