"""A fork server: one grader process, imported and warmed once, that forks a fresh grader per check.

A cold ``grader check`` of a correct NumPy file spends most of its grader-side CPU before the
submission runs: Python and the grader's imports, parsing the problem specs' YAML, reading the
case set, probing the sandbox, building the argument parser (docs/performance.md). The fork
server (the "zygote") does all of that once: it imports what a check uses, turns on the
in-memory memos (:mod:`grader.memo`), loads the specs and the case sets it is told of, runs
the sandbox probe, and then forks one grader process per request. The forked process is a
whole ``grader check`` (:func:`grader.cli.main`) in a session of its own, with the request's
arguments, environment, working folder and standard streams; when it ends its exit status
goes back to whoever asked. It is never reused: the next check is another fork of the zygote,
so nothing one check did (its memory, its caches, its state) reaches another.

Security is that of ``grader check``: the zygote is the grader, runs no learner code and reads
no learner file (the forked check reads its own submission, as a cold check does), and every
submission still runs in a fresh sandboxed child started by the forked check. The zygote is
not dumpable (``PR_SET_DUMPABLE=0``: no same-user process reads its memory), holds no seed
secret (a secret-seeded check's cases are made in the forked process and die with it), and
forks only while it has one thread. Who may ask: ``grader grade`` talks to its own zygote over
a socket pair nobody else holds; ``grader serve`` listens on a Unix socket in a folder only its
user can enter (mode 0700, checked), and answers only connections whose peer has its user id
(``SO_PEERCRED``), since a request is a grader run with the asker's environment: whoever can
ask can run code as the server's user. A change to the grader's source makes the zygote stale:
it refuses the request (the client then runs the check itself) rather than grade with old code.

Spares (``grader serve --spares``; the default, ``auto``: numpy and jax from the start, and any
other installed framework once a check has used it): the zygote also keeps, per framework,
one forked process that has started a sandboxed child ahead (:mod:`grader.run.spare`: confined,
its framework imported, shown an empty folder) and waits for a request. A request whose
``framework`` hint names it, with the default ``--timeout``, ``--memory-mb`` and ``--sandbox``,
is handed to that process instead of a new fork: it becomes the check, writes the submission
into the folder and hands it to its child, which imports it and serves that check only. The
zygote forks the next spare at once. A hint is only a guess (the client reads the file's
imports, :func:`framework_hint`); a check that does not match its spare closes it and starts a
child of its own, as a forked check does.

The client side (:func:`run_served`, :class:`BatchServer`, :func:`identity`) is in
:mod:`grader.forkserver_client`; this module is the zygote.

Wire protocol (Unix stream sockets; one connection per check):

- client -> server: one byte ``R`` sent with three file descriptors (``SCM_RIGHTS``: the
  check's stdin, stdout and stderr), then one JSON line ``{"argv": [...], "env": {...},
  "cwd": "...", "grader": IDENTITY, "framework": HINT}`` (``argv`` without the program name;
  ``grader``: the client's :func:`identity`, which must be the server's; ``framework``: which
  spare to use, optional). Later, a line ``{"signal": "INT"}`` or
  ``{"signal": "KILL"}`` is sent to the check's process group; closing the connection kills it.
- server -> client: ``{"pid": N}`` once the check is forked (its process group id), then
  ``{"code": C}`` when it ended (C as ``subprocess`` gives it: negative for a signal); or
  ``{"refused": "why"}`` instead of both when it will not run the check (stale code, a bad request).
- ``grade``'s control socket: the zygote is started with one end of a socket pair (``--control
  FD``); each check's connection is one end of a new socket pair, sent over it as one byte
  ``C`` with the descriptor. The zygote writes ``ready`` on it once warmed, and exits (killing
  the checks it still runs) when it is closed.
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import json
import os
import selectors
import signal
import socket
import stat
import sys
import time
from pathlib import Path
from typing import Any

# the client side and what both sides share (callers and tests import these names from here too)
from .forkserver_client import (BOOT, FORKSERVER_ENV, SERVE_ENV, SOCKET_ENV, BatchServer,  # noqa: F401
                                ForkedCheck, Reader, connect, connect_any, code_stamp, command,
                                default_socket, fixed_facts, framework_hint, greeting, identity, private_folder,
                                MAX_PROOFS, cgroup_joins, peer_state, proc_facts, process_state, rlimit_names, run_served,
                                send_request)
from .forkserver_policy import (CLI, adopt, default_limits, installed_frameworks, listen_private,  # noqa: F401
                                misstated, parser, private_folder_fd, spare_for, unadoptable, unserved)
MAX_REQUEST = 4 << 20      # bytes of one request line (argv, environment, folder)
PR_SET_PDEATHSIG = 1
SO_PEERPIDFD = getattr(socket, "SO_PEERPIDFD", 77)   # linux/socket.h (Python 3.11 lacks the name)
PR_SET_DUMPABLE = 4
#: modules a check uses, imported by the zygote before it forks (their import is the cost it saves)
PRELOAD = ("numpy", "yaml", "ml_dtypes", "grader.cli", "grader.commands", "grader.check", "grader.plan",
           "grader.grading", "grader.runner", "grader.sandbox", "grader.run.sandboxed", "grader.compare",
           "grader.tolerance", "grader.diagnose", "grader.shrink", "grader.hints", "grader.reports",
           "grader.reports.text", "grader.reports.json_report", "grader.reports.junit", "grader.reports.gradescope",
           "grader.reports.github", "grader.reports.fault", "grader.reports.prairielearn", "grader.hints.generic",
           "grader.hints.tied_lm_head", "grader.assignment", "grader.notebook",
           "grader.cleanup", "hypothesis")


# -- the code the zygote runs ------------------------------------------------------------------------

def threads() -> int:
    """Threads of this process (Linux /proc); 1 where that cannot be read."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def preload(warm: list[str] | None) -> None:
    """Import what a check uses, turn the memos on, and load the specs, case sets and sandbox
    probe a check of ``warm`` (``grader check`` flags, e.g. ``["--problem", "softmax"]``; None:
    every problem known) would read. Best effort: a failure here only costs the check its time."""
    import importlib

    from . import memo
    memo.ENABLED = True
    for name in PRELOAD:
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    with contextlib.suppress(Exception):
        warm_for(warm or [])


def warm_for(flags: list[str]) -> None:
    """Load into the memos what ``grader check FILE <flags>`` reads before the submission runs:
    the problem specs, the case sets already in the on-disk cache (never made here: making
    one runs the reference, and the zygote must not import JAX, which starts threads), and the
    sandbox probe. A seed secret's case sets are never cached, so nothing is loaded for them."""
    from . import cache, plan, sandbox, spec
    from .flags import options_from_args

    args = parser().parse_args(["check", os.devnull, *flags])
    secret = bool(getattr(args, "seed_secret", None) or os.environ.get("GRADER_SEED_SECRET"))
    problems = []
    if getattr(args, "assignment", None):
        from .assignment import load_assignment
        problems = [part.problem for part in load_assignment(args.assignment, args.problems_dir).parts]
    elif args.problem:
        problems = [spec.load_problem(spec.find_problem(args.problem, args.problems_dir))]
    # every spec, also with --problem: a check that names no problem matches its function
    # against all of them (parsing 20 specs was 0.09 s of a served 0.45 s check)
    everything = list(spec.load_all(args.problems_dir)[0].values())
    problems = problems or everything
    if not secret:
        opts = options_from_args(args)
        for problem in problems:
            for framework, dtypes in problem.frameworks.items():
                if opts.framework in (None, framework):
                    key = plan.case_set_key(problem, opts, dtypes)
                    cached = cache.load_cases(key)
                    if cached is not None:
                        cache.case_set_digest(key, [c for c, _, _ in cached])
        sandbox.choose_tier(opts.sandbox)
    else:
        sandbox.choose_tier(getattr(args, "sandbox", "auto") or "auto")


def _prctl(option: int, arg: int) -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(option, arg, 0, 0, 0)


def _default_signals() -> None:
    """In a process forked from the zygote: no wake-up descriptor (the zygote's socket pair is
    closed there) and the default handlers of SIGINT (KeyboardInterrupt), SIGTERM and SIGCHLD
    instead of the zygote's flag-setting ones."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)


def _close(what: list[Any]) -> None:
    """Close, in a forked process, the zygote's sockets and descriptors it must not keep: other
    connections' sockets and the streams of requests still arriving (a spare forked while
    another client's request was half read held that client's stdout open, and its pipeline
    hung until the spare was used, attack round 39), and the socket folder's descriptor."""
    for item in what:
        with contextlib.suppress(OSError):
            item.close() if isinstance(item, socket.socket) else os.close(item)


def _forked_check(request: dict[str, Any], fds: list[int], close: list[Any]) -> None:
    """In the forked process: become ``grader check`` with the request's streams, folder,
    environment and arguments, and exit with its code. Never returns."""
    code = 2
    _default_signals()
    try:
        if os.getsid(0) != os.getpid():   # a spare (_spare_process) is a session leader already
            os.setsid()
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the zygote killed: its checks die with it
        if os.getppid() == 1:
            os._exit(2)
        _close(close)
        from .sandbox import forget_probes
        forget_probes()   # the tier as a cold check finds it, not the server's memo of it
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in set(fds):
            if fd > 2:
                os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        adopt(request["process"])
        import tempfile
        tempfile.tempdir = None   # the client's $TMPDIR, not the one the server's imports cached
        argv = list(request["argv"])
        sys.argv = ["grader", *argv]
        try:
            code = CLI["main"](argv)
        except SystemExit as exc:  # argparse's usage errors, --help
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        except KeyboardInterrupt:
            code = 130
    except BaseException as exc:  # noqa: BLE001 - one line on the check's stderr, then its exit code
        with contextlib.suppress(Exception):
            sys.stderr.write(f"grader: internal error in the fork server's check: {type(exc).__name__}: {exc}\n")
    finally:
        # no interrupt from here on: a second SIGINT while a flush blocked on a full pipe raised
        # out of this process's frames into the zygote's loop, inherited by the fork, which shut
        # a copy of the server down (another client's check and the spares with it: the epoll
        # set is shared) and exited 0, a pass (attack round 55)
        try:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:  # noqa: BLE001 - the check's code stands
            pass
        finally:
            os._exit(code if isinstance(code, int) and 0 <= code < 256 else 2)


def _only_exit(run: Any, *args: Any) -> None:
    """In a process forked from the zygote: ``run(*args)``, which ends in ``os._exit``; whatever
    it raises instead ends the process too (exit 2), never unwinding into the zygote's frames
    this process inherited (its loop, its shutdown, its exit code 0: attack round 55)."""
    try:
        run(*args)
    finally:
        with contextlib.suppress(BaseException):
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        os._exit(2)


def _join(pid: int, procs: list[str]) -> str | None:
    """Move the forked check ``pid`` (not yet running anything) into its client's cgroups
    (``procs``: their ``cgroup.procs`` files, :func:`grader.forkserver_client.cgroup_joins`):
    None when it joined every one, else why not (the client then runs its own check). The
    file's mode is not the rule: cgroup v2 also asks for write access to the ``cgroup.procs`` of
    the common ancestor of both cgroups (attack round 44: under a systemd user session a correct
    check ended in exit 2 with nothing said, the error in the server's log)."""
    for path in procs:
        try:
            with open(path, "w", encoding="ascii") as fh:
                fh.write(str(pid))
        except OSError as exc:
            return f"this server may not move its check into the client's cgroup ({exc.strerror or exc})"
    return None


def _reap_unrun(pid: int) -> None:
    """Kill and reap a fork that never ran its check, waiting 2 s at most: one that joined a
    frozen cgroup before a later join failed cannot die until thawed (attack round 45, from the
    source), and a blocking wait would stop the whole server; such a fork stays a zombie until
    the server ends."""
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
    end = time.monotonic() + 2.0
    while True:
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid or time.monotonic() > end:
                return
        except ChildProcessError:
            return
        time.sleep(0.01)


def _spare_process(framework: str, sock: socket.socket, close: list[Any]) -> None:
    """In a process forked from the zygote: start a spare child of ``framework``
    (:mod:`grader.run.spare`) in the default sandbox tier with the default limits, wait on
    ``sock`` for one request (as a connection's: ``R`` with three descriptors, then the JSON
    line), and become that request's check (:func:`_forked_check`), which adopts the spare
    when it matches. Never returns.

    Exits 0 only when the zygote closed ``sock`` with nothing sent (it is stopping); a SIGINT
    before the request was read means the check handed to this spare was interrupted (the
    zygote forwards a client's interrupt only to a spare it has handed a request): 130, as an
    interrupted ``grader check``; any other failure to read: 2. Exiting 0 there was a pass
    for the client, whose wrong file was never run (attack round 54)."""
    from .run import spare
    _default_signals()
    try:
        os.setsid()   # the check's process group, as a forked check's
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() == 1:
            os._exit(2)
        _close(close)
        try:
            from .sandbox import choose_tier, forget_probes
            forget_probes()
            tier, wrap = choose_tier("auto")
            spare.prepare(framework, default_limits(), tier, wrap)
        except Exception:  # noqa: BLE001 - no spare: the request's check starts its own child
            spare.discard()
        sock.setblocking(True)
        data, fds, _, _ = socket.recv_fds(sock, 16, 4)
    except KeyboardInterrupt:   # the check handed to this spare, interrupted before it was read
        spare.discard()
        os._exit(130)
    except BaseException:  # noqa: BLE001 - no request read: never a pass
        spare.discard()
        os._exit(2)
    if not data and not fds:   # the zygote stopped: it closed the socket without a request
        spare.discard()
        os._exit(0)
    try:
        if data != b"R" or len(fds) != 4:
            raise ValueError("not a request")
        # the request's line, as the zygote received it, in a memory file of its own: the
        # zygote's send never waits on this process (a request of 1.6 MB blocked the whole
        # server for 5 s while a spare started, attack round 37)
        with os.fdopen(fds.pop(), "rb") as fh:
            line = fh.read(MAX_REQUEST + 1)
        if len(line) > MAX_REQUEST:
            raise ValueError("request too long")
        request = json.loads(line)
        if not isinstance(request, dict):
            raise ValueError("not a request")
        request["join"] = []   # the zygote hands a spare only checks of its own cgroups; never the client's word
    except BaseException as exc:  # noqa: BLE001 - a request came and cannot be run: exit 2, never 0
        spare.discard()
        with contextlib.suppress(Exception):
            os.write(fds[2] if len(fds) > 2 else 2,
                     f"grader: error: the fork server's spare could not read the check's request: {exc}\n".encode())
        os._exit(2)
    _forked_check(request, list(fds), [sock])


class _Spare:
    """A spare's process in the zygote: its pid, a pidfd and the zygote's end of its socket."""

    def __init__(self, framework: str, pid: int, sock: socket.socket) -> None:
        self.framework, self.pid, self.sock = framework, pid, sock
        self.pidfd = os.pidfd_open(pid)


class _Connection:
    """One check's connection in the zygote: its request, as it arrives, then its process."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.fds: list[int] | None = None
        self.proofs: list[int] = []      # the files the request names, opened by the client
        self.peer: tuple[int, int] | None = None   # the connecting process: pid and pidfd (grader serve)
        self.buffer = b""
        self.pid: int | None = None
        self.pidfd: int | None = None
        self.refill: str | None = None   # the framework of the spare this check used

    def send(self, message: dict[str, Any]) -> None:
        with contextlib.suppress(OSError):
            self.sock.sendall(json.dumps(message).encode() + b"\n")

    def close_proofs(self) -> None:
        for fd in self.proofs:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.proofs = []

    def close(self) -> None:
        self.close_proofs()
        if self.peer is not None:
            with contextlib.suppress(OSError):
                os.close(self.peer[1])
            self.peer = None
        for fd in self.fds or ():
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds = None
        if self.pidfd is not None:
            with contextlib.suppress(OSError):
                os.close(self.pidfd)
            self.pidfd = None
        with contextlib.suppress(OSError):
            self.sock.close()


class Zygote:
    """The fork server's loop (:meth:`serve`): requests in, forked checks out."""

    def __init__(self, control: socket.socket | None = None, listener: socket.socket | None = None,
                 spares: tuple[str, ...] = (), warm: list[str] | None = None, folder: int = -1,
                 adapt: bool = False) -> None:
        self.control, self.listener = control, listener
        self.warm = warm      # the flags preloaded for (None: nothing is refreshed after a check)
        self.selector = selectors.DefaultSelector()
        self.connections: dict[int, _Connection] = {}   # by socket fd
        self.stamp = code_stamp()
        self.stopping = False
        self.spare_frameworks = spares              # a spare kept ready for each
        self.adapt = adapt     # ``--spares auto``: a framework a check used gets a spare from then on
        self.spares: dict[str, _Spare] = {}
        self.spare_failures: dict[str, int] = {}    # spares that died unused, in a row
        self._wake: tuple[socket.socket, socket.socket] | None = None   # the signal wake-up pair (serve)
        self.folder = folder       # the socket folder's descriptor (-1: none), closed in every fork

    # the zygote's sockets and descriptors, closed in each forked check and spare (_close)
    # (the epoll set and the other checks' and spares' pidfds too: the epoll set is shared across
    # fork, and round 55's escape went through it)
    def _inherited(self, keep: "_Connection | None" = None) -> list[Any]:
        return [s for s in (self.control, self.listener, *(self._wake or ())) if s is not None] + \
            [c.sock for c in self.connections.values()] + [sp.sock for sp in self.spares.values()] + \
            [fd for c in self.connections.values() if c is not keep for fd in (*(c.fds or ()), *c.proofs)] + \
            [c.peer[1] for c in self.connections.values() if c.peer is not None] + \
            [c.pidfd for c in self.connections.values() if c.pidfd is not None] + \
            [sp.pidfd for sp in self.spares.values()] + [self.selector.fileno()] + \
            [fd for fd in (self.folder,) if fd >= 0]

    def adopt_framework(self, framework: str | None) -> bool:
        """With ``--spares auto``, keep a spare of ``framework`` from now on (a check of it just
        ran without one: PyTorch's checks, 3.0 s served with no spare against 0.19 s with one,
        were left out of the default, a newcomer's finding); whether it was added. Only the
        frameworks the grader runs and this machine has."""
        if not self.adapt or framework not in ("numpy", "jax", "torch") or framework in self.spare_frameworks \
                or not installed_frameworks(framework):
            return False
        self.spare_frameworks = (*self.spare_frameworks, framework)
        return True

    def _fork_spare(self, framework: str) -> None:
        """Fork a process that starts a spare child of ``framework`` and waits for a request."""
        if framework in self.spares or self.stopping or self.spare_failures.get(framework, 0) >= 3 \
                or threads() != 1:
            return
        # a fork that fails (the user's process limit filled by a learner's threads, descriptors
        # used up) costs this spare only: the next check of its framework asks again when it
        # ends; it ended the whole server, and another client's check with exit 2 (attack round 56)
        made: list[Any] = []
        pid = 0
        try:
            mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            made += [mine, theirs]
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the spare's process (measured through the checks it runs)
                _only_exit(_spare_process, framework, theirs, self._inherited() + [mine])
            theirs.close()
            sp = _Spare(framework, pid, mine)
            self.spares[framework] = sp
            self.selector.register(sp.pidfd, selectors.EVENT_READ, ("spare", sp))
        except OSError as exc:
            self.spares.pop(framework, None)
            for end in made:
                end.close()
            if pid > 0:
                _reap_unrun(pid)
            with contextlib.suppress(Exception):
                sys.stderr.write(f"grader serve: no {framework} spare for now ({exc.strerror or exc}); "
                                 "its checks start their own child\n")

    def _on_spare_exit(self, sp: _Spare) -> None:
        """A spare's process ended before it was used (its child failed, or it was killed):
        reap it and start another, up to three failures in a row."""
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(sp.pidfd)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(sp.pid, 0)
        os.close(sp.pidfd)
        sp.sock.close()
        if self.spares.get(sp.framework) is sp:
            del self.spares[sp.framework]
        self.spare_failures[sp.framework] = self.spare_failures.get(sp.framework, 0) + 1
        self._fork_spare(sp.framework)

    def _stop_spares(self, wait: float = 5.0) -> None:
        """Close every spare: each process, its socket closed, stops its child, removes its
        folders and gives back its sandbox user; one that has not ended within ``wait``
        seconds is killed (the next grader's sweep removes what it left)."""
        import select
        spares = list(self.spares.values())
        self.spares.clear()
        for sp in spares:
            with contextlib.suppress(KeyError, ValueError):
                self.selector.unregister(sp.pidfd)
            sp.sock.close()          # it discards its spare and exits
        end = time.monotonic() + wait
        for sp in spares:
            ready, _, _ = select.select([sp.pidfd], [], [], max(0.0, end - time.monotonic()))
            if not ready:
                with contextlib.suppress(OSError):
                    os.killpg(sp.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(sp.pid, 0)
            os.close(sp.pidfd)

    def _add(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        conn = _Connection(sock)
        self.connections[sock.fileno()] = conn
        self.selector.register(sock, selectors.EVENT_READ, ("conn", conn))

    def _drop(self, conn: _Connection, kill: bool = False) -> None:
        if kill and conn.pid is not None:
            with contextlib.suppress(OSError):
                os.killpg(conn.pid, signal.SIGKILL)
        if conn.pidfd is not None:
            with contextlib.suppress(KeyError, ValueError):
                self.selector.unregister(conn.pidfd)
            if conn.pid is not None:  # reap it (it was killed, or had ended)
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(conn.pid, 0)
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(conn.sock)
        self.connections.pop(conn.sock.fileno(), None)
        conn.close()
        refill, conn.refill = conn.refill, None
        if self.stopping:   # shutting down: no memo to refresh and no spare to start
            return
        if self.warm is not None:
            # a check may have written a case set (the first of a problem computes its reference
            # values): load it now, so that the next spare and check find it in memory instead
            # of reading it again each time (0.2 s of a NumPy check); stats only when nothing changed
            with contextlib.suppress(Exception):
                warm_for(self.warm)
        if refill is not None:   # its check is over (ended, or killed with its client): the next spare
            self._fork_spare(refill)

    def serve(self) -> int:
        """Answer until the control socket is closed (``grade``) or SIGTERM/SIGINT (``serve``)."""
        if self.control is not None:
            self.control.setblocking(True)
            self.control.sendall(b"ready\n")
            self.selector.register(self.control, selectors.EVENT_READ, ("control", None))
        if self.listener is not None:
            self.listener.setblocking(False)
            self.selector.register(self.listener, selectors.EVENT_READ, ("listen", None))
        # SIGTERM (and SIGINT) from here on only set a flag and wake the select through a
        # socket: an exception raised by a handler is lost when the signal lands in a destructor
        # (``Exception ignored in ...``), and the server then never stopped (seen in CI)
        wake_r, wake_w = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        for end in (wake_r, wake_w):
            end.setblocking(False)
        self._wake = (wake_r, wake_w)
        self.selector.register(wake_r, selectors.EVENT_READ, ("wake", None))
        previous = signal.set_wakeup_fd(wake_w.fileno(), warn_on_full_buffer=False)

        def stop(*_: Any) -> None:
            self.stopping = True

        handlers = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
        for framework in self.spare_frameworks:
            self._fork_spare(framework)
        try:
            while not self.stopping:
                for key, _ in self.selector.select(timeout=1.0):
                    kind, conn = key.data
                    if self.stopping:
                        break
                    if kind == "wake":
                        with contextlib.suppress(OSError):
                            wake_r.recv(4096)
                    elif kind == "control":
                        self._on_control()
                    elif kind == "listen":
                        self._on_accept()
                    elif kind == "conn":
                        try:
                            self._on_message(conn)
                        except Exception:  # noqa: BLE001 - one bad request costs its connection, never the server
                            self._drop(conn, kill=True)
                    elif kind in ("exit", "spare"):
                        try:
                            self._on_exit(conn) if kind == "exit" else self._on_spare_exit(conn)
                        except Exception as exc:  # noqa: BLE001 - one check's end never ends the server
                            with contextlib.suppress(Exception):
                                sys.stderr.write(f"grader serve: internal error after a check: {exc!r}\n")
        except KeyboardInterrupt:
            pass
        finally:
            self.stopping = True      # no spare is started any more
            self._stop_spares()
            for conn in list(self.connections.values()):
                self._drop(conn, kill=True)
            signal.set_wakeup_fd(previous)
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
            with contextlib.suppress(KeyError, ValueError):
                self.selector.unregister(wake_r)
            wake_r.close()
            wake_w.close()
            self._wake = None
        return 0

    def _on_control(self) -> None:
        assert self.control is not None
        try:
            data, fds, _, _ = socket.recv_fds(self.control, 1, 1)
        except OSError:
            data, fds = b"", []
        if not data:  # the batch closed it (or died): stop
            for fd in fds:
                os.close(fd)
            self.stopping = True
            return
        for fd in fds:
            self._add(socket.socket(fileno=fd))

    def _on_accept(self) -> None:
        assert self.listener is not None
        try:
            sock, _ = self.listener.accept()
        except OSError:
            return
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
        pid, uid, _ = (int.from_bytes(creds[i:i + 4], sys.byteorder) for i in (0, 4, 8))
        if uid != os.geteuid():  # a request is a grader run as this user: only this user asks
            sock.close()
            return
        try:   # the peer itself, whose process state the server reads (attack round 42): the pidfd
            # the kernel took when it connected where it gives one (SO_PEERPIDFD, Linux 6.5), so a
            # pid reused before this accept cannot stand for it (attack round 43); else one now
            pidfd = int.from_bytes(sock.getsockopt(socket.SOL_SOCKET, SO_PEERPIDFD, 4), sys.byteorder)
        except OSError:
            pidfd = -1
        try:
            pidfd = pidfd if pidfd >= 0 else os.pidfd_open(pid)
        except OSError:
            sock.close()
            return
        with contextlib.suppress(OSError):   # which grader answers: a client of another install goes cold
            sock.sendall(greeting(self.stamp))
        self._add(sock)
        self.connections[sock.fileno()].peer = (pid, pidfd)

    def _on_message(self, conn: _Connection) -> None:
        try:
            if conn.fds is None:  # the request's first bytes carry its three streams and its files
                data, fds, _, _ = socket.recv_fds(conn.sock, 1 << 16, 3 + MAX_PROOFS)
                conn.fds, conn.proofs = list(fds[:3]), list(fds[3:])
                if data and (not data.startswith(b"R") or len(fds) < 3):
                    conn.send({"refused": "a request starts with R and three file descriptors"})
                    self._drop(conn)
                    return
                data = data[1:] if data else data
                eof = not data and not fds
            else:
                data = conn.sock.recv(1 << 16)
                eof = not data
        except BlockingIOError:
            return
        except OSError:
            data, eof = b"", True
        if eof:  # the client is gone: so is its check
            self._drop(conn, kill=True)
            return
        conn.buffer += data
        if len(conn.buffer) > MAX_REQUEST:
            conn.send({"refused": "request too long"})
            self._drop(conn, kill=True)
            return
        while b"\n" in conn.buffer:
            line, conn.buffer = conn.buffer.split(b"\n", 1)
            try:
                message = json.loads(line)
            except (ValueError, RecursionError):   # a line nested 200,000 deep stopped the server
                message = None
            if conn.pid is None:
                self._start(conn, message, line)
                if conn.pid is None:
                    return
            elif isinstance(message, dict) and message.get("signal") in ("INT", "KILL"):
                with contextlib.suppress(OSError):
                    os.killpg(conn.pid, signal.SIGINT if message["signal"] == "INT" else signal.SIGKILL)

    def _start(self, conn: _Connection, request: Any, line: bytes) -> None:
        ok = isinstance(request, dict) and isinstance(request.get("argv"), list) \
            and all(isinstance(a, str) for a in request["argv"]) and isinstance(request.get("env"), dict) \
            and all(isinstance(k, str) and isinstance(v, str) for k, v in request["env"].items()) \
            and isinstance(request.get("cwd"), str)
        if not ok:
            conn.send({"refused": "a request is {\"argv\": [str], \"env\": {str: str}, \"cwd\": str}"})
            self._drop(conn)
            return
        if request.get("grader") != identity(self.stamp):
            # another install's client (a stale copy, another checkout, someone's test tree on the
            # same default socket): its check is not this grader's to run
            conn.send({"refused": "this fork server runs another grader install"})
            self._drop(conn)
            return
        if code_stamp() != self.stamp:
            conn.send({"refused": "the grader's source changed since this fork server started"})
            self._drop(conn)
            if self.listener is not None:
                self.stopping = True   # a server of stale code stops; the next check runs cold
                sys.stdout.write("grader serve: stopped: the grader's source changed since it started; "
                                 "start it again\n")
                sys.stdout.flush()
            return
        if threads() != 1:  # fork() of a threaded process can deadlock the child
            conn.send({"refused": "the fork server has more than one thread"})
            self._drop(conn)
            return
        why = misstated(request.get("process"), conn.peer) if conn.peer is not None else None
        why = why or unadoptable(request.get("process"))
        if why is None and self.listener is not None:
            why = unserved(request, conn.proofs, self.warm or [])
        conn.close_proofs()
        # the client's cgroups, which the check joins (read here, never taken from the request)
        request["join"] = [] if conn.peer is None or why is not None else cgroup_joins(conn.peer[0])
        if request["join"] and conn.peer is not None:
            try:   # still that process after its cgroups were read by pid: the pid was not reused meanwhile
                signal.pidfd_send_signal(conn.peer[1], 0)
            except OSError:
                request["join"] = None
        if request["join"] is None or not all(os.access(f, os.W_OK) for f in request["join"]):
            why = why or "the client's cgroup is not one this server may join"
        if why is not None:
            conn.send({"refused": why})
            self._drop(conn)
            return
        framework = spare_for(request) if not request["join"] else None   # a spare is in this server's cgroups
        sp = self.spares.pop(framework, None) if framework else None
        if sp is not None:
            # the next spare when this check ends, also when this hand-over fails (a failed one
            # left the server without that framework's spare until restarted, attack round 37)
            conn.refill = sp.framework
            if not self._hand_to_spare(sp, conn, line):
                sp = None
        if sp is None and framework is not None:
            self.adopt_framework(framework)
            if framework in self.spare_frameworks:   # its first spare, or one a failed fork left out
                conn.refill = framework              # when this check ends
        if sp is None:
            sys.stdout.flush()
            sys.stderr.flush()
            go_r, go_w = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the forked check (measured through its exit status)
                os.close(go_w)
                if os.read(go_r, 1) != b"1":   # not placed in its client's cgroups: never runs
                    os._exit(2)
                os.close(go_r)
                _only_exit(_forked_check, request, conn.fds or [], self._inherited(keep=conn))
            os.close(go_r)
            failed = _join(pid, request["join"])
            if failed is not None:
                os.close(go_w)
                _reap_unrun(pid)
                conn.send({"refused": failed})
                self._drop(conn)
                return
            os.write(go_w, b"1")
            os.close(go_w)
            conn.pid = pid
            conn.pidfd = os.pidfd_open(pid)
        for fd in conn.fds or ():
            with contextlib.suppress(OSError):
                os.close(fd)
        conn.fds = []
        self.selector.register(conn.pidfd, selectors.EVENT_READ, ("exit", conn))
        conn.send({"pid": conn.pid})
        if sp is not None:
            # the next check's spare is started when this check ends, not beside it: on two busy
            # cores its start (an interpreter and NumPy or JAX imported) slowed the check it follows
            self.spare_failures[sp.framework] = 0

    def _hand_to_spare(self, sp: _Spare, conn: _Connection, line: bytes) -> bool:
        """Send the request's ``line`` (its bytes as received, in a memory file) and its streams
        to the spare's process ``sp``, which becomes its check; whether it was sent (if not, the
        spare is stopped and the check forked)."""
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(sp.pidfd)
        memfd = -1
        try:
            memfd = os.memfd_create("grader-request", os.MFD_CLOEXEC)
            view = memoryview(line)
            while view:
                view = view[os.write(memfd, view):]
            os.lseek(memfd, 0, os.SEEK_SET)
            sp.sock.setblocking(True)
            sp.sock.settimeout(5.0)
            socket.send_fds(sp.sock, [b"R"], [*(conn.fds or []), memfd])
        except OSError:
            with contextlib.suppress(OSError):
                os.killpg(sp.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(sp.pid, 0)
            os.close(sp.pidfd)
            sp.sock.close()
            return False
        finally:
            if memfd >= 0:
                os.close(memfd)
        sp.sock.close()
        conn.pid, conn.pidfd = sp.pid, sp.pidfd
        return True

    def _on_exit(self, conn: _Connection) -> None:
        assert conn.pid is not None
        try:
            _, status = os.waitpid(conn.pid, 0)
            code = os.waitstatus_to_exitcode(status)
        except ChildProcessError:
            code = -signal.SIGKILL
        conn.pid = None  # reaped
        conn.send({"code": code})
        self._drop(conn)


def main(argv: list[str], main_fn: Any = None, build_parser: Any = None) -> int:
    """``python -I -c BOOT ROOT --control FD [--warm JSON]`` or ``--listen PATH [--warm JSON]``;
    ``main_fn`` and ``build_parser`` are the CLI's (:data:`BOOT` and :func:`cmd_serve` give them)."""
    import argparse

    if main_fn is not None:
        CLI.update(main=main_fn, build_parser=build_parser)
    parser = argparse.ArgumentParser(prog="grader-forkserver")
    parser.add_argument("--control", type=int)
    parser.add_argument("--listen")
    parser.add_argument("--warm", default="null", help="grader check flags to warm for, as a JSON list")
    parser.add_argument("--spares", default="", help="frameworks to keep a spare child for, comma-separated")
    args = parser.parse_args(argv)
    # no BLAS thread pool in the zygote: it must have one thread when it forks
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")
    os.environ.pop("GRADER_SEED_SECRET", None)  # each request brings its own environment
    _prctl(PR_SET_DUMPABLE, 0)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    control = socket.socket(fileno=args.control) if args.control is not None else None
    listener, folder = (listen_private(args.listen) if args.listen else (None, -1))
    warm = json.loads(args.warm)
    preload(warm)
    if threads() != 1:
        sys.stderr.write(f"grader: error: the fork server has {threads()} threads after its imports; "
                         "it forks only with one\n")
        return 2
    try:
        return Zygote(control, listener, spares=installed_frameworks(args.spares), warm=warm or [],
                      folder=folder, adapt="auto" in args.spares.split(",")).serve()
    finally:
        if args.listen:
            with contextlib.suppress(OSError):
                os.unlink(os.path.basename(args.listen), dir_fd=folder)


def cmd_serve(args: Any, main_fn: Any, build_parser: Any) -> int:
    """``grader serve``: run the fork server on this user's socket until interrupted (exit 0).
    ``main_fn`` and ``build_parser`` are the CLI's (what each forked check runs).

    Raises:
        GraderError: the socket's folder is not this user's private folder, or a server already
            answers there.
    """
    from .errors import GraderError
    path = Path(args.socket).absolute() if args.socket else default_socket()
    private_folder(path.parent, create=True)
    live = connect(path, same_install=False)
    if live is not None:
        live.close()
        raise GraderError(f"a grader serve is already running at {path}")
    folder = private_folder_fd(str(path.parent))
    try:
        try:
            st = os.lstat(path.name, dir_fd=folder)
        except FileNotFoundError:
            st = None
        if st is not None:
            if not stat.S_ISSOCK(st.st_mode) or st.st_uid != os.geteuid():
                raise GraderError(f"{path} exists and is not a socket of this user's; remove it or give --socket")
            os.unlink(path.name, dir_fd=folder)   # a stale socket: its server is gone
    finally:
        os.close(folder)
    # the folder as an absolute path, also from GRADER_PROBLEMS_DIR: the server works from / (a
    # relative one meant another folder there, and nothing was served: attack round 42)
    problems_dir = args.problems_dir or os.environ.get("GRADER_PROBLEMS_DIR") or None
    warm = (["--problem", args.problem] if args.problem else []) + \
        (["--problems-dir", os.path.abspath(problems_dir)] if problems_dir else [])
    given = getattr(args, "spares", "") or ""
    spares = ",".join(installed_frameworks(given) + (("auto",) if "auto" in given.split(",") else ()))
    from .web.launch import start as start_web   # the exercise page (issue 36): its URL is the first line
    start_web(args, path)
    sys.stdout.write(f"grader serve: listening on {path} (Ctrl-C stops it); grader check uses it\n")
    sys.stdout.flush()
    os.chdir("/")   # a neutral folder: each check works in its client's
    return main(["--listen", str(path), "--warm", json.dumps(warm), "--spares", spares], main_fn, build_parser)
