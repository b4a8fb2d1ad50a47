"""Run a submission in a separate, limited process and call its function.

One :class:`Worker` is one child process (``grader/_child.py``) that imports the submission once
and then answers call requests over two pipes (``grader.protocol``). Each call returns a
:class:`CallOutcome` record: the result array or what went wrong, and the time it took; the
grader compares results in its own process only, and no expected value is ever sent.

Limits applied to the child in every tier (see docs/security.md for the threat model):

- its own session and process group, killed as a group with SIGKILL at a deadline and at the
  end, together with every descendant found under it, and any orphan of it that was re-parented
  to the grader (the CLI makes the grader a child subreaper: :func:`harden_grader_process`);
- rlimits (address space, CPU seconds, file size, core dumps, open files, processes), set by
  the child on itself before any submission code runs (no preexec_fn: JAX in the grader is
  multithreaded, and fork-with-preexec would risk a deadlock);
- the child dies with the grader: ``PR_SET_PDEATHSIG`` in the child (tiers ``rlimits`` and
  ``none``), ``bwrap --die-with-parent``, ``setpriv --pdeathsig KILL unshare --kill-child``.
  The kernel ties this to the *thread* that started the child: start workers from a thread
  that outlives them (the CLI uses its main thread);
- a wall-clock deadline per call (``call_timeout``) and for the import (``import_timeout``);
- a scrubbed environment, a temporary working directory, stdin from /dev/null, stdout and
  stderr unbuffered (``python -I -u``: a print before a timeout or crash is kept), drained by
  threads and capped at ``output_cap`` bytes each (the head is kept); the
  drains are stoppable, so a leftover holder of the pipes cannot stall the grader;
- the grader marks itself non-dumpable (``PR_SET_DUMPABLE``) so the child cannot read its memory;
- every reply must carry the request's sequence number and the run's random token, and stay
  under ``reply_bytes``; anything else is a ``crash`` of the submission.

The launch is wrapped by the sandbox tier chosen in ``grader.sandbox`` (namespaces, a read-only
view, Landlock, seccomp), whose policy the child applies to itself.
"""
from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import secrets
import select
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from . import protocol
from .diskwatch import DiskWatch
from .options import Limits
from .results import CallOutcome, ImportOutcome, frames_of
from .processes import (CHILD_SCRIPT, ORPHAN_WAIT, PR_SET_DUMPABLE, REGISTRY, child_environment, cpu_seconds,
                        descendants, environ_has, is_subreaper, kill_orphan_trees, prctl, track_child, track_marker,
                        untrack_child, user_tasks, wait_exit)


def _text(value: Any, limit: int = 20_000) -> str:
    """A text field of the child's reply: the string, cut to ``limit`` characters, or "" for
    anything else. Every field of a reply is the submission's to forge (it runs in that process),
    so a number, NaN, or a list nested 900 deep never reaches a report (they once made the JSON
    report fail with exit 2, blamed on the grader)."""
    return value[:limit] if isinstance(value, str) else ""


def several_results(header: dict[str, Any], out: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]] | None:
    """The items of a reply that carried a tuple, list or dict of arrays: ``(key -> array, key ->
    item type name)`` in the reply's order, when ``result_keys`` names exactly the arrays
    ``result:<key>`` sent (at most 16 keys); None for any other reply (one ``result`` array, or a
    malformed one, which the caller treats as a crash)."""
    keys, types = header.get("result_keys"), header.get("result_types")
    if not isinstance(keys, list) or not 0 < len(keys) <= 16 or not all(isinstance(k, str) for k in keys):
        return None
    if len(set(keys)) != len(keys) or set(out) != {f"result:{k}" for k in keys}:
        return None
    types = types if isinstance(types, list) and len(types) == len(keys) else [""] * len(keys)
    return {k: out[f"result:{k}"] for k in keys}, {k: _text(t, 200) for k, t in zip(keys, types)}


def _seq(value: Any) -> str:
    """A reply's sequence number as shown in a message: an int, else only its type (a forged
    nested list's repr could recurse, a string's run to megabytes)."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else f"a {type(value).__name__}"


_VERSION = re.compile(r"[0-9A-Za-z.+_-]{1,64}")


def child_limits(limits: Limits, user: Any, wrap: Any) -> dict[str, Any]:
    """The limits the child applies to itself (``_confine._apply_limits``): ``limits`` as a
    mapping, with ``processes`` (RLIMIT_NPROC) on top of the tasks this user runs now when the
    child is this user outside any user namespace (no sandbox ``user``, a grader that is not
    root, the ``rlimits`` or ``none`` tier): the kernel counts every task of the user there (a
    desktop session's, a notebook kernel's, other learners' children), and a user running about
    245 tasks had a correct JAX file abort in its first call, FAIL 0.0 (attack round 46)."""
    from .sandbox_user import shares_user_budget
    out = asdict(limits)
    if user is None and shares_user_budget(getattr(wrap, "tier", "rlimits")):
        out["processes"] = user_tasks(os.getuid()) + limits.processes
    return out


def _versions(raw: dict) -> dict[str, str]:
    """The framework versions the child reports (``numpy``, ``jax``, ``torch``): only short
    version-like strings are kept; anything else is dropped (see :func:`_text`)."""
    return {name: value for name, value in raw.items()
            if name in ("numpy", "jax", "torch") and isinstance(value, str) and _VERSION.fullmatch(value)}


class _CpuExceeded(Exception):
    """The child used more CPU time than the step allowed (raised by :meth:`Worker._watch_cpu`)."""


class _Drain(threading.Thread):
    """Reads a pipe until EOF or :meth:`stop`, keeping the first ``cap`` bytes and counting the rest.

    It polls with a short timeout, so that a descendant of the submission that keeps the pipe
    open (and never writes EOF) cannot keep the thread, or whoever joins it, waiting.
    """

    POLL = 0.1  # seconds

    def __init__(self, fd: int, cap: int) -> None:
        super().__init__(daemon=True)
        self.fd, self.cap = fd, cap
        self.head = bytearray()
        self.total = 0
        self._stop_flag = threading.Event()

    def run(self) -> None:
        try:
            while not self._stop_flag.is_set():
                ready, _, _ = select.select([self.fd], [], [], self.POLL)
                if not ready:
                    continue
                chunk = os.read(self.fd, 1 << 16)
                if not chunk:
                    break
                self.total += len(chunk)
                if len(self.head) < self.cap:
                    self.head += chunk[: self.cap - len(self.head)]
        except (OSError, ValueError):
            pass

    def stop(self, grace: float) -> None:
        """Let the drain read what is left for up to ``grace`` seconds, then stop it and wait (a
        drain that never started, for want of threads, has nothing to wait for)."""
        if self.ident is None:
            return
        self.join(timeout=grace)
        self._stop_flag.set()
        self.join(timeout=2 * self.POLL + 1)


def _stage_seed(store: str, target: str) -> str | None:
    """Copy the regular files of a JAX store into ``target`` (made here, mode 0755, files 0644)
    for a sandbox user that cannot read the store itself; ``target``, or None on failure."""
    import shutil
    import stat
    try:
        os.mkdir(target, 0o755)
        os.chmod(target, 0o755)   # whatever the umask: the sandbox user enters it
        for name in os.listdir(store):
            src = os.path.join(store, name)
            if stat.S_ISREG(os.lstat(src).st_mode):
                shutil.copyfile(src, os.path.join(target, name), follow_symlinks=False)
                os.chmod(os.path.join(target, name), 0o644)
    except OSError:
        return None
    return target


def _fill_seed(store: str, target: str) -> None:
    """Copy the regular files of the JAX store ``store`` into the existing folder ``target``
    (mode 0644, never following links, never overwriting): a spare's seed folder."""
    import shutil
    import stat
    try:
        names = os.listdir(store)
    except OSError:
        return
    for name in names:
        src, dst = os.path.join(store, name), os.path.join(target, name)
        try:
            if stat.S_ISREG(os.lstat(src).st_mode) and not os.path.lexists(dst):
                shutil.copyfile(src, dst, follow_symlinks=False)
                os.chmod(dst, 0o644)
        except OSError:
            pass



#: the request and reply pipes' buffer (``F_SETPIPE_SZ``; Linux's default is 64 KiB and an
#: unprivileged user may raise it to ``/proc/sys/fs/pipe-max-size``, 1 MiB by default)
PIPE_BYTES = 1 << 20


#: errno values of a fork or exec refused for want of processes or memory (EAGAIN: the user's
#: process limit, RLIMIT_NPROC or a pids cgroup; ENOMEM)
SPENT_ERRNOS = (errno.EAGAIN, errno.ENOMEM)
#: the start of the one line a check that could not start its child says (``grader grade``
#: starts that learner's check again: ``grader.batch.pool``)
RESOURCES_SPENT = "the machine has no process or memory left"
SPAWN_RETRIES, SPAWN_PAUSE = 3, 0.5


def _spent_error(what: str, why: object) -> Exception:
    """The ``GraderError`` (exit 2, no verdict) of a check that could not ``what`` for want of
    processes, threads or memory: :data:`RESOURCES_SPENT`, which ``grader grade`` retries on."""
    from .errors import GraderError
    return GraderError(f"{RESOURCES_SPENT} to {what} ({why}); grade it again when fewer processes run")


def _spawn(argv: list[str], out_w: int, err_w: int, keep: tuple[int, int], cwd: str,
           env: dict[str, str]) -> subprocess.Popen:
    """The submission's process, started; a start refused for want of processes or memory
    (:data:`SPENT_ERRNOS`: another learner's threads at the user's limit, attack round 58's
    class) is tried again :data:`SPAWN_RETRIES` times, :data:`SPAWN_PAUSE` seconds apart and more.
    A refusal then, or any other, is the caller's (it gave a crash verdict to an innocent file).

    Raises:
        OSError: the process could not be started.
    """
    for attempt in range(SPAWN_RETRIES + 1):
        try:
            return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out_w, stderr=err_w, pass_fds=keep,
                                    cwd=cwd, env=env, start_new_session=True)
        except OSError as exc:
            if exc.errno not in SPENT_ERRNOS or attempt == SPAWN_RETRIES:
                raise
            time.sleep(SPAWN_PAUSE * (attempt + 1))
    raise AssertionError("unreachable")


def _widen(fd: int) -> None:
    """Give the pipe of ``fd`` a buffer of :data:`PIPE_BYTES` where the kernel allows it (else
    it keeps its own). A case's inputs and result cross these pipes: tied_lm_head's real_size
    inputs (17 MB in float64) took 96 ms in 64 KiB steps, each a switch between the grader and
    the child, for a 3 ms matmul. The child cannot change it (its seccomp filter refuses
    ``F_SETPIPE_SZ``); the grader sets it before the child starts."""
    import fcntl
    with contextlib.suppress(OSError, AttributeError):
        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_BYTES)

class Worker:
    """One submission process: import once, then call the function many times.

    Args:
        submission: path of the learner's file.
        function: the function name to call.
        framework: ``"numpy"`` or ``"jax"`` (what the inputs are converted to in the child).
        limits: resource limits.
        wrap: the :class:`grader.sandbox.Sandbox` of the tier to run in (from
            ``sandbox.choose_tier``); any callable ``wrap(argv, submission, workdir) -> argv``
            works too. None runs the child directly with the common limits only (tier ``none``).
        jax_store: for ``framework="jax"``, the folder of warm JAX compilations of this exact
            source (``grader.cache.jax_submission_store``), or None. The child gets a private
            cache folder in its working folder, first filled from a read-only view of the
            store; :meth:`close` takes new entries back through the protocol and stores only
            those that pass ``grader.cache.store_jax_entries`` (unless ``keep_cache=False``).
        folder: the folder holding ``submission`` and its sibling modules, shown read-only in
            the sandbox instead of the file alone (``grader.check.PrivateCopy.folder``: a
            private folder the grader wrote, holding nothing else), or None (the file alone).
        shared: folders the grader made for this child that its sandbox user must enter
            (``PrivateCopy.root``): while the child runs they belong to that user's group, mode
            0750 (only when the grader runs as root, :func:`grader.sandbox.needs_user`).

    Attributes:
        deadline: a ``time.monotonic()`` value past which no step waits (the run's
            ``--total-timeout``), or None.
        user: the :class:`grader.sandbox.SandboxUser` the child runs as, while it runs (root only).

    Use as a context manager, or call :meth:`close`; either kills the child, everything it
    started, and its working folder.
    """

    def __init__(self, submission: str | os.PathLike[str], function: str, framework: str,
                 limits: Limits | None = None, wrap: Any = None, jax_store: str | None = None,
                 folder: str | None = None, shared: tuple[str, ...] = (), deadline: float | None = None) -> None:
        self.submission = str(Path(submission).resolve())
        self.folder = str(Path(folder).resolve()) if folder else None
        if self.folder is not None and os.path.dirname(self.submission) != self.folder:
            raise ValueError(f"the submission {self.submission} is not directly in {self.folder}")
        self.function = function
        self.framework = framework
        self.limits = limits or Limits()
        self.wrap = wrap
        self.jax_store = jax_store if framework == "jax" and jax_store else None
        #: a notebook's lines as cells (``Notebook.cell_runs``), for the child's warnings; else None
        self.cells: list[list[int]] | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.seq = 0
        self.token = secrets.token_hex(8)
        self.layers: list[str] = []
        self.shared = tuple(shared)
        self.deadline = deadline
        self.user: Any = None
        self._cpu_pids: list[int] = []
        self._cpu_polls = 0
        self._workdir: Any = None
        self._drains: list[_Drain] = []
        self._watch: DiskWatch | None = None
        self._wrapped = False
        self._awaiting = False
        self._spare_seed: str | None = None   # a JAX spare's seed folder, filled at hand_over
        self.stdout_total = 0
        self.stderr_total = 0
        self._stdout = bytearray()
        self._stderr = bytearray()
        self._confined = False   # the child said it is confined (before any submission code ran)

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> ImportOutcome:
        """Start the process and import the submission; never raises for the submission's faults."""
        failed = self.launch()
        return failed if failed is not None else self.wait_ready()

    def launch(self, awaiting: bool = False) -> ImportOutcome | None:
        """Start the process without waiting for the import (so the grader can work meanwhile).

        With ``awaiting`` the process is a spare (:class:`Spare`): it confines itself and imports
        its framework, then waits, holding no submission, until :meth:`hand_over` names the file
        the grader has since written into :attr:`folder` (which must be given, and empty).

        Returns None once started, or an ``ImportOutcome(status="crash")`` if the process could not start.
        """
        from .cleanup import PrivateFolder
        from .sandbox import SandboxUser, needs_user, uid_range

        prctl(PR_SET_DUMPABLE, 0)  # whoever uses the runner: the child must not read this process
        self._started = time.monotonic()
        sandboxed = self.wrap is not None and hasattr(self.wrap, "policy")
        wants_user = sandboxed and needs_user(self.wrap.tier)
        # a killed root grader's working folders belong to their sandbox users: its sweep needs the range
        self._workdir = PrivateFolder("grader-run-", sandbox_uids=uid_range() if wants_user else None)
        workdir = self._workdir.name
        inside = workdir
        policy: dict[str, Any] = {"tier": "none"}
        seed = self.jax_store if self.jax_store and os.path.isdir(self.jax_store) else None
        if awaiting and self.framework == "jax":
            # the warm entries are staged here at hand-over, before any submission code runs
            seed = self._spare_seed = os.path.join(workdir, ".jax-seed")
            os.mkdir(seed, 0o755)
            os.chmod(seed, 0o755)   # whatever the umask (a root grader's 077 shut the child out)
        if wants_user:
            self.user = SandboxUser.take()    # GraderError when none is free: the machine's fault
            os.chown(workdir, self.user.uid, self.user.gid)   # the rlimits tier works there
            for folder in self.shared:
                os.chown(folder, -1, self.user.gid)
                os.chmod(folder, 0o750)
            if seed and not awaiting:  # the store is root's (0700): a copy the sandbox user can read
                seed = _stage_seed(seed, os.path.join(workdir, ".jax-seed"))
        jax_cache = {"dir": os.path.join(workdir, ".jax-cache"), "seed": seed} \
            if self.jax_store or self._spare_seed else None
        limits = child_limits(self.limits, self.user, self.wrap)
        memory = self.limits.memory_bytes
        if sandboxed:
            from .sandbox import address_space_bytes
            policy = self.wrap.policy(self.submission, workdir, seed, memory, folder=self.folder, user=self.user)
            inside = self.wrap.workdir_inside(workdir)
            if jax_cache:
                jax_cache = self.wrap.jax_cache(workdir, seed)
            limits["memory_bytes"] = address_space_bytes(memory, self.wrap)   # the tmpfs come out of it
        config = {"limits": limits, "policy": policy, "token": self.token, "parent_pid": os.getpid(),
                  "jax_cache": jax_cache, "await": awaiting, "cells": None if awaiting else self.cells}
        self._awaiting = awaiting
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        _widen(req_w)
        _widen(rep_w)
        # -u: unbuffered stdout and stderr (-I ignores PYTHONUNBUFFERED), so what the submission
        # printed before a timeout, a crash or a kill is in the pipes, not lost in a buffer
        argv = [sys.executable, "-I", "-u", "-X", "faulthandler", str(CHILD_SCRIPT), str(req_r), str(rep_w),
                self.submission, self.function, self.framework, json.dumps(config)]
        if self.wrap is not None:
            argv = self.wrap(argv, self.submission, workdir, seed, memory, folder=self.folder) if sandboxed else \
                self.wrap(argv, self.submission, workdir)
            self._wrapped = argv[0] != sys.executable
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            self.proc = _spawn(argv, out_w, err_w, (req_r, rep_w), workdir,
                               child_environment(self.framework, inside, self.token))
        except OSError as exc:
            for fd in (req_r, req_w, rep_r, rep_w, out_r, out_w, err_r, err_w):
                os.close(fd)
            self._workdir.cleanup()
            self._workdir = None
            if self.user is not None:
                self.user.release()
                self.user = None
            if exc.errno in SPENT_ERRNOS:   # the machine's state, not the submission: no verdict
                raise _spent_error("start the submission's process", exc.strerror or exc) from None
            return ImportOutcome(status="crash", message=f"could not start the submission's process: {exc}")
        # every write to the child waits only until a deadline: a child that fills its own
        # request pipe (through /proc/self/fd) and stops reading cannot hang the grader
        os.set_blocking(req_w, False)
        track_child(self.proc.pid)
        track_marker(self.token)
        for fd in (req_r, rep_w, out_w, err_w):
            os.close(fd)
        self._req, self._rep = req_w, rep_r
        self._drains = [_Drain(out_r, self.limits.output_cap), _Drain(err_r, self.limits.output_cap)]
        try:
            if getattr(self.wrap, "tier", "none") not in ("bwrap", "unshare"):   # a host folder, no tmpfs cap
                watch = DiskWatch(workdir, self.proc.pid, self.limits.workdir_bytes, self.limits.workdir_files)
                watch.start()
                self._watch = watch   # only once it runs: the clean-up waits for it
            for d in self._drains:
                d.start()
        except RuntimeError as exc:   # "can't start new thread": the machine's, said as such (round 59)
            self.kill()
            raise _spent_error("watch the submission's process", exc) from None
        return None

    def hand_over(self, name: str, function: str, jax_store: str | None, deadline: float | None) -> bool:
        """Give a spare (``launch(awaiting=True)``) its one submission: ``name``, a file the
        grader has written into :attr:`folder`, and the ``function`` to call; ``jax_store``, the
        submission's store of warm JAX compilations (staged into the spare's seed folder first);
        ``deadline``, the run's end. Then :meth:`wait_ready` as after :meth:`launch`.

        Everything here happens before any submission code runs in the child: it has been
        waiting for this message since it confined itself and imported its framework.

        Returns:
            False when the spare is not waiting (it died or failed to set up): the caller closes
            it and starts a process of its own.
        """
        if not getattr(self, "_awaiting", False) or self.proc is None or self.proc.poll() is not None:
            return False
        try:
            header, _ = protocol.read_frame(self._rep, time.monotonic() + max(self.limits.import_timeout, 5.0),
                                            max_payload=0)
        except protocol.ProtocolError:
            return False
        if header.get("token") != self.token or header.get("status") != "waiting":
            return False
        self._confined = True
        if self._spare_seed is not None:   # the seed folder launch() made, still empty
            self.jax_store = jax_store
            if jax_store and os.path.isdir(jax_store):
                _fill_seed(jax_store, self._spare_seed)
        self.submission = os.path.join(os.path.dirname(self.submission), name)
        self.function = function
        self.deadline = deadline
        self._awaiting = False
        self._started = time.monotonic()
        try:
            # the name as its bytes in hex: a name that is not UTF-8 (a learner's "caf\xe9.py") came
            # through JSON as escaped text the child could not open
            protocol.write_frame(self._req, {"seq": 0, "token": self.token, "op": "import",
                                             "file_hex": os.fsencode(name).hex(), "function": function,
                                             "cells": self.cells},
                                 deadline=time.monotonic() + 5.0)
        except (protocol.PeerClosed, protocol.Timeout):
            return False
        return True

    def wait_ready(self) -> ImportOutcome:
        """Wait for the submission's import to finish (after :meth:`launch`)."""
        started, limits = self._started, self.limits
        if self.proc is None:
            return ImportOutcome(status="crash", message="the submission's process is not running")
        cpu_limit = limits.import_timeout
        deadline, kind = self._end(started, limits.backstop(cpu_limit))
        if not self._confined:
            unconfined = self._wait_confined(deadline, kind)
            if unconfined is not None:
                return unconfined
        try:
            header, _ = protocol.read_frame(self._rep, deadline, max_payload=0,
                                            watch=lambda: self._watch_cpu(0.0, cpu_limit))
        except _CpuExceeded:
            self.kill()
            return ImportOutcome(status="timeout",
                                 message=f"importing the submission used more than {cpu_limit:g} s of CPU time",
                                 seconds=time.monotonic() - started)
        except protocol.Timeout:
            self.kill()
            if kind == "total":
                return ImportOutcome(status="timeout",
                                     message="the whole run's time limit (--total-timeout) ran out while the "
                                                "submission was being imported", seconds=time.monotonic() - started)
            return ImportOutcome(status="timeout",
                                 message=f"importing the submission took longer than {deadline - started:.0f} s of "
                                            f"wall-clock time (the backstop of its {cpu_limit:g} s CPU-time limit): "
                                            "it was waiting, sleeping or blocked", seconds=time.monotonic() - started)
        except protocol.ProtocolError as exc:
            code = self._wait_exit(exc)
            return ImportOutcome(status="crash", message=self._death_message(code, "while being imported", exc),
                                 seconds=time.monotonic() - started)
        status = header.get("status")
        if header.get("token") != self.token or header.get("seq") != 0:
            self.kill()
            return ImportOutcome(status="crash",
                                 message="the submission wrote a message of its own on the grader's channel "
                                          "while being imported", seconds=time.monotonic() - started)
        if status == "ready":
            raw = header.get("versions")
            raw = raw if isinstance(raw, dict) else {}
            layers = raw.get("sandbox_layers")
            self.layers = [_text(x, 64) for x in layers[:16] if isinstance(x, str)] if isinstance(layers, list) else []
            return ImportOutcome(status="ok", versions=_versions(raw), seconds=time.monotonic() - started)
        if status == "import_error":
            self.kill()
            return ImportOutcome(status="import_error", message=_text(header.get("message")),
                                 frames=frames_of(header.get("frames"), os.path.basename(self.submission)),
                                 exception=_text(header.get("exception"), 2000), seconds=time.monotonic() - started)
        self.kill()
        if status == "sandbox_error":
            # written before any submission code ran, unless the submission forged it: either way
            # the submission is not graded as passed
            return ImportOutcome(status="crash",
                                 message=f"the sandbox could not be set up: {_text(header.get('message'), 2000)}",
                                 seconds=time.monotonic() - started)
        return ImportOutcome(status="crash", message=f"unexpected first message {_text(status, 64)!r}",
                             seconds=time.monotonic() - started)

    def _wait_confined(self, deadline: float, kind: str = "wall") -> ImportOutcome | None:
        """Read the child's first frame, which it writes once confined and before any of the
        submission's code runs: None when it came, else an ``unconfined`` outcome (the sandbox
        failed to start the process, or the process ended or stalled before it was confined:
        attack round 41 saw bubblewrap refused its mounts under a Landlock domain, which was
        graded as the submission's import failure, FAIL 0.0). A ``sandbox_error`` the child
        reports here is the machine's too (later, the submission could have forged it).
        ``deadline`` is the run's own end when ``kind`` is ``total``: waiting past it is the
        run's timeout, never the sandbox's (attack round 44: wrong code that crashed just before
        --total-timeout had its restart cut there, and was told "could not run", exit 2)."""
        started = time.monotonic()
        try:
            header, _ = protocol.read_frame(self._rep, deadline, max_payload=0)
        except (protocol.ProtocolError, protocol.Timeout) as exc:
            code = self._wait_exit(exc) if isinstance(exc, protocol.ProtocolError) else None
            if code is None:
                self.kill()
            if isinstance(exc, protocol.Timeout) and kind == "total":
                return ImportOutcome(status="timeout", seconds=time.monotonic() - started,
                                     message="the whole run's time limit (--total-timeout) ran out while the "
                                             "submission's process was starting")
            said = self._stderr.decode("utf-8", errors="replace").strip().splitlines()
            why = f" ({_text(said[-1], 300)})" if said else ""
            return ImportOutcome(status="unconfined", seconds=time.monotonic() - started,
                                 message=f"the sandbox ({getattr(self.wrap, 'tier', None) or 'rlimits'}) could not "
                                         f"start the submission's process{why}")
        if header.get("token") == self.token and header.get("status") == "confined":
            self._confined = True
            return None
        self.kill()
        if header.get("token") == self.token and header.get("status") == "import_error":
            # its framework could not be imported (not installed, too little memory): the child's
            # own words, before any of the submission's code (the frame above comes after it)
            return ImportOutcome(status="import_error", message=_text(header.get("message")),
                                 seconds=time.monotonic() - started)
        if header.get("token") == self.token and header.get("status") == "sandbox_error":
            return ImportOutcome(status="unconfined", seconds=time.monotonic() - started,
                                 message=f"the sandbox could not be set up: {_text(header.get('message'), 2000)}")
        return ImportOutcome(status="crash", message=f"unexpected first message {_text(header.get('status'), 64)!r}",
                             seconds=time.monotonic() - started)

    def _tree(self) -> list[int]:
        """The child's process and its descendants (bwrap and unshare put the Python below them)."""
        assert self.proc is not None
        out, todo = [], [self.proc.pid]
        while todo:
            pid = todo.pop()
            out.append(pid)
            try:
                for task in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{task}/children") as fh:
                        todo += [int(x) for x in fh.read().split()]
            except (OSError, ValueError):
                if pid == self.proc.pid:   # no children files (an old kernel): the slow way
                    return [pid, *descendants(pid)]
        return out

    def cpu_used(self) -> float | None:
        """CPU seconds the child's processes have used since they started (None: unknown)."""
        if self.proc is None:
            return None
        if not self._cpu_pids or self._cpu_polls % 10 == 0:   # the tree is fixed once confined
            self._cpu_pids = self._tree()
        self._cpu_polls += 1
        return cpu_seconds(self._cpu_pids)

    def _end(self, start: float, seconds: float) -> tuple[float, str]:
        """When a step begun at ``start`` with a wall-clock allowance of ``seconds`` ends, and
        which limit that is: ``wall``, or ``total`` when :attr:`deadline` comes first."""
        if self.deadline is not None and self.deadline < start + seconds:
            return self.deadline, "total"
        return start + seconds, "wall"

    def _watch_cpu(self, base: float, limit: float) -> None:
        used = self.cpu_used()
        if used is not None and used - base > limit:
            raise _CpuExceeded(used - base)

    def call(self, arrays: dict[str, np.ndarray], timeout: float | None = None, *,
             keywords: tuple[str, ...] = (), scalars: tuple[str, ...] = ()) -> CallOutcome:
        """Call the function with ``arrays`` (parameter name -> array, in call order).

        ``keywords`` are passed by keyword, the others by position; ``scalars`` (0-d arrays)
        reach the function as Python values (``grader.cases.Case``).

        ``timeout`` is the call's CPU-time limit in seconds (default ``limits.call_timeout``);
        the call also ends at its wall-clock backstop (``limits.backstop(timeout)``) and at
        :attr:`deadline`, and the outcome's ``limit`` says which one ended it. Every write and
        read is bounded by the same deadlines. Never raises for the submission's faults: a
        timeout, a death or a protocol violation is returned as an outcome, and the process is
        then gone (call :meth:`start` again to go on).
        """
        if self.proc is None or self.proc.poll() is not None:
            if self._watch is not None and self._watch.exceeded:   # stopped between two calls
                return CallOutcome(status="crash", message=f"the submission's process was stopped: it wrote "
                                                    f"{self._watch.exceeded}")
            return CallOutcome(status="crash", message="the submission's process is not running")
        self.seq += 1
        seq = self.seq
        timeout = self.limits.call_timeout if timeout is None else timeout
        t0 = time.monotonic()
        base = self.cpu_used()
        # no /proc to read CPU time from: the limit itself is wall-clock
        backstop = self.limits.backstop(timeout) if base is not None else timeout
        end, kind = self._end(t0, backstop)

        def watch() -> None:
            if base is not None:
                self._watch_cpu(base, timeout)

        try:
            request = {"seq": seq, "token": self.token, "op": "call", "order": list(arrays)}
            if keywords:
                request["keywords"] = list(keywords)
            if scalars:
                request["scalars"] = list(scalars)
            protocol.write_frame(self._req, request, arrays, deadline=end, watch=watch)
            header, out = protocol.read_frame(self._rep, end, max_payload=self.limits.reply_bytes, watch=watch)
        except _CpuExceeded as exc:
            self.kill()
            return CallOutcome(status="timeout", message=f"the call used more than {timeout:g} s of CPU time and was "
                                                  "stopped", seconds=time.monotonic() - t0, limit="cpu",
                               cpu_seconds=float(exc.args[0]))
        except protocol.Timeout:
            now = self.cpu_used()
            used = None if now is None or base is None else now - base
            self.kill()
            if kind == "total":
                msg = "the whole run's time limit (--total-timeout) ran out during the call, which was stopped"
            elif base is None:
                msg = f"the call took longer than {timeout:g} s and was stopped"
            else:
                msg = (f"the call took longer than {backstop:g} s of wall-clock time (the backstop of its "
                       f"{timeout:g} s CPU-time limit) having used {used or 0:.1f} s of CPU: it was waiting, "
                       "sleeping or blocked, and was stopped")
            return CallOutcome(status="timeout", message=msg, seconds=time.monotonic() - t0, limit=kind,
                               cpu_seconds=used)
        except protocol.ProtocolError as exc:
            code = self._wait_exit(exc)
            return CallOutcome(status="crash", message=self._death_message(code, "during the call", exc),
                               seconds=time.monotonic() - t0)
        seconds = time.monotonic() - t0
        now = self.cpu_used()
        cpu = None if now is None or base is None else max(0.0, now - base)   # the call's CPU seconds
        if header.get("seq") != seq or header.get("token") != self.token:
            self.kill()
            return CallOutcome(status="crash", message=f"reply out of sequence or not from the grader's child "
                                                f"(seq {_seq(header.get('seq'))} for {seq})", seconds=seconds)
        status = header.get("status")
        mutated_raw = header.get("mutated")
        mutated = [_text(m, 200) for m in mutated_raw if isinstance(m, str)][:64] if isinstance(mutated_raw, list) else []
        if status == "ok":
            several = several_results(header, out)
            if several is not None:   # a tuple, list or dict of arrays (grader._child._convert)
                return CallOutcome(status="ok", results=several[0], result_types=several[1], mutated=mutated,
                                   seconds=seconds, result_type=_text(header.get("result_type"), 200), cpu_seconds=cpu)
            if set(out) != {"result"}:
                self.kill()
                return CallOutcome(status="crash", message="reply without exactly one result array", seconds=seconds)
            return CallOutcome(status="ok", result=out["result"], mutated=mutated, seconds=seconds,
                               result_type=_text(header.get("result_type"), 200), cpu_seconds=cpu)
        if status == "type":
            item = header.get("bad_item")   # a container's first item that is no array: [key, what it is]
            bad = {_text(item[0], 64): _text(item[1], 200)} if isinstance(item, list) and len(item) == 2 \
                and all(isinstance(x, str) for x in item) else {}
            return CallOutcome(status="type", message=_text(header.get("type_name"), 200) or "?", mutated=mutated,
                               seconds=seconds, cpu_seconds=cpu, result_types=bad)
        if status in ("exception", "memory"):
            mro = header.get("error_mro")
            types = [_text(m, 200) for m in mro if isinstance(m, str)][:32] if isinstance(mro, list) else []
            return CallOutcome(status=status, message=_text(header.get("message")),
                               frames=frames_of(header.get("frames"), os.path.basename(self.submission)),
                               exception=_text(header.get("exception"), 2000), seconds=seconds,
                               error_types=types or [_text(header.get("error"), 200)], cpu_seconds=cpu,
                               mutated=mutated)
        self.kill()
        return CallOutcome(status="crash", message=f"unknown reply status {_text(status, 64)!r}", seconds=seconds)

    def _wait_exit(self, exc: Exception) -> int | None:
        """After a protocol failure: the exit code if the child has ended (waiting up to 2 s when
        it closed the channel, as when it exits), else None; the child is killed either way."""
        assert self.proc is not None
        code = self.proc.poll()
        if code is None and isinstance(exc, protocol.PeerClosed):
            code = wait_exit(self.proc, 2.0)
        self.kill()
        return code

    def _death_message(self, code: int | None, when: str, exc: Exception) -> str:
        if self._watch is not None and self._watch.exceeded:
            return f"the submission's process was stopped {when}: it wrote {self._watch.exceeded}"
        if code is None or not isinstance(exc, protocol.PeerClosed):
            return f"the submission broke the grader's protocol {when}: {exc}"
        if code > 128 and self._wrapped:  # bwrap and unshare report a signal as 128 + its number
            code = -(code - 128)
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            if name in ("SIGSEGV", "SIGILL", "SIGTRAP") and self._aborted():
                # the child is its PID namespace's init in the namespace tiers: the kernel does not
                # deliver SIGABRT to it, so abort() ends in glibc's fallback fault instead
                name = "SIGABRT"
            extra = {"SIGSEGV": " (segmentation fault)", "SIGKILL": " (killed; out of memory or CPU time?)",
                     "SIGXCPU": " (CPU time limit)", "SIGABRT": " (aborted)", "SIGXFSZ": " (file size limit)"}
            return f"the submission's process died {when}: {name}{extra.get(name, '')}"
        return f"the submission's process exited with code {code} {when}"

    def _aborted(self) -> bool:
        """Whether the child's stderr says it called ``abort()`` (faulthandler's "Fatal Python
        error: Aborted"), read for up to 0.5 s more after its death."""
        mark = b"Fatal Python error: Aborted"
        if mark in self._stderr:   # kill() has moved what the drains read here
            return True
        if len(self._drains) < 2:
            return False
        drain = self._drains[1]
        drain.join(timeout=0.5)
        return mark in bytes(drain.head)

    def kill(self) -> None:
        """SIGKILL the child, its process group, every descendant and its orphans; reap; clean up.

        Idempotent. Orphans are the grader's children (as a subreaper) that carry this run's
        ``GRADER_RUN`` marker or its process group; in the namespace tiers the PID namespace
        dies with the child anyway.
        """
        proc = self.proc
        if proc is None:
            return
        if self._watch is not None:
            self._watch.stop()
            self._watch.join(timeout=2)      # never signals a pid after it has been reaped
        tree = descendants(proc.pid)
        for target in [-proc.pid, proc.pid, *tree]:
            try:
                os.kill(target, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        wait_exit(proc, 5.0)
        untrack_child(proc.pid)
        self._sweep_orphans(proc.pid)
        for fd in ("_req", "_rep"):
            if hasattr(self, fd):
                try:
                    os.close(getattr(self, fd))
                except OSError:
                    pass
                delattr(self, fd)
        for d in self._drains:
            d.stop(grace=0.5)
        if self._drains:
            self._stdout += self._drains[0].head[: max(0, self.limits.output_cap - len(self._stdout))]
            self._stderr += self._drains[1].head[: max(0, self.limits.output_cap - len(self._stderr))]
            self.stdout_total += self._drains[0].total
            self.stderr_total += self._drains[1].total
            for d in self._drains:
                if not d.is_alive():
                    try:
                        os.close(d.fd)
                    except OSError:
                        pass
            self._drains = []
        self.proc = None
        if self.user is not None:   # kills whatever still runs as the sandbox user first
            self.user.release()
            self.user = None
        if self._workdir is not None:
            self._workdir.cleanup()  # never raises, whatever the child left (grader.cleanup)
            self._workdir = None

    def _sweep_orphans(self, pid: int) -> None:
        """Kill and reap the grader's children that are orphans of this run, and everything below
        them, until none is alive (subreaper only; ``grader.processes.kill_orphan_trees``)."""
        if not is_subreaper():
            return
        marker = f"GRADER_RUN={self.token}".encode()

        def ours(other: int, fields: list[str]) -> bool:
            return not REGISTRY.is_tracked(other) and (
                int(fields[2]) == pid or int(fields[3]) == pid or environ_has(other, marker))
        kill_orphan_trees(ours, ORPHAN_WAIT)

    def _export_jax_cache(self) -> int:
        """Take the child's JAX cache entries back into :attr:`jax_store`; how many were stored.

        The reply is untrusted data: only what ``grader.cache.store_jax_entries`` accepts
        (safe names, regular files written by the grader, size caps) is kept. A timeout or a
        broken reply stores nothing.
        """
        from .cache import JAX_EXPORT_BYTES, store_jax_entries

        self.seq += 1
        end, _ = self._end(time.monotonic(), 5.0)
        try:
            protocol.write_frame(self._req, {"seq": self.seq, "token": self.token, "op": "export_cache",
                                             "max_bytes": JAX_EXPORT_BYTES}, deadline=end)
            header, files = protocol.read_frame(self._rep, end, max_payload=JAX_EXPORT_BYTES)
        except (protocol.ProtocolError, protocol.Timeout):
            return 0
        if header.get("seq") != self.seq or header.get("token") != self.token or header.get("status") != "cache":
            return 0
        return store_jax_entries(self.jax_store, files) if self.jax_store else 0

    def close(self, keep_cache: bool = True) -> None:
        """Ask the child to exit, then kill it and everything it started.

        With ``keep_cache`` (and a :attr:`jax_store`), new JAX compilations are first taken back
        (:meth:`_export_jax_cache`); pass False for a process whose state must not outlive it
        (one that ran hidden cases).
        """
        if keep_cache and self.jax_store and self.proc is not None and self.proc.poll() is None \
                and hasattr(self, "_req"):
            self._export_jax_cache()
        if self.proc is not None and self.proc.poll() is None and hasattr(self, "_req"):
            try:
                protocol.write_frame(self._req, {"seq": 0, "token": self.token, "op": "exit"},
                                     deadline=time.monotonic() + 0.5)
                wait_exit(self.proc, 0.5)
            except (protocol.PeerClosed, protocol.Timeout):
                pass
        self.kill()

    def output(self) -> dict[str, Any]:
        """The captured stdout/stderr heads and whether anything was cut (after :meth:`close`)."""
        return {"stdout": self._stdout.decode("utf-8", errors="replace"),
                "stderr": self._stderr.decode("utf-8", errors="replace"),
                "stdout_bytes": self.stdout_total, "stderr_bytes": self.stderr_total,
                "truncated": self.stdout_total > len(self._stdout) or self.stderr_total > len(self._stderr)}

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
