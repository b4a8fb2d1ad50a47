"""The page's Run: ``grader check FILE --format json --audience learner`` of the source saved
as a file, one at a time per page.

Each check is that command line, in a fresh private folder, sent to this ``grader serve``'s
fork server over its socket as ``grader check`` itself sends it (:mod:`grader.forkserver`'s
protocol): the server forks a whole ``grader check`` with that folder, environment and
arguments, and its stdout is the report. Asking from this process saves a client process's start
and imports on every Run. When the fork server does not answer (gone, refused, another shape),
the check runs as a ``python -I -c ... check`` process instead, which asks it or runs cold: the
report is what the learner's ``grader check`` of that file prints either way.

A page (its session id) has at most one check running: a Run while one is in progress cancels
the earlier one (SIGINT, then SIGKILL after :data:`CANCEL_GRACE` seconds) and starts once it has
ended, so two never run at once; the earlier request answers 409.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import secrets
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: seconds a check may take before the page gives up on it (the check's own limits come first)
CHECK_WAIT = 600.0
#: seconds between SIGINT and SIGKILL of a cancelled check
CANCEL_GRACE = 2.0
#: run by ``python -I -c``: ``grader ARGV`` of this grader (its folder, argv[1], on sys.path)
CHECK_BOOT = ("import sys; root = sys.argv.pop(1); root in sys.path or sys.path.insert(0, root); "
              "from grader.cli import main; sys.exit(main(sys.argv[1:]))")
ROOT = str(Path(__file__).resolve().parents[2])
#: the file name the source is saved as (the report's ``submission``)
FILE_NAME = "submission.py"


#: the most of a check's stderr read (from its end) for its last progress line
PROGRESS_TAIL = 4096


def last_progress(err: Any) -> tuple[str, int, int] | None:
    """The last ``grader: progress: PHASE DONE TOTAL`` line (``grader check --progress``) in
    the temporary file ``err`` a running check writes its stderr to, as ``(phase, done,
    total)``; None before the first. Reads at most :data:`PROGRESS_TAIL` bytes of its end,
    without moving the file's offset."""
    from ..commands import PROGRESS_PREFIX
    try:
        size = os.fstat(err.fileno()).st_size
        tail = os.pread(err.fileno(), PROGRESS_TAIL, max(0, size - PROGRESS_TAIL))
    except (OSError, ValueError):
        return None
    for line in reversed(tail.split(b"\n")):
        parsed = _progress_of(line)
        if parsed is not None:
            return parsed[:3]
    return None


def _progress_of(line: bytes) -> tuple[str, int, int, float | None] | None:
    """One ``grader: progress: PHASE DONE TOTAL [SECONDS]`` line as its fields, else None."""
    from ..commands import PROGRESS_PREFIX
    prefix = PROGRESS_PREFIX.encode()
    if not line.startswith(prefix):
        return None
    parts = line[len(prefix):].split()
    if len(parts) not in (3, 4) or not (parts[1].isdigit() and parts[2].isdigit()):
        return None
    seconds = None
    if len(parts) == 4:
        try:
            seconds = float(parts[3])
        except ValueError:
            return None
    return parts[0].decode("ascii", "replace"), int(parts[1]), int(parts[2]), seconds


def phase_split(err: bytes, started: float, ended: float) -> dict[str, float]:
    """Where a check's wall time went, in seconds, from its progress lines' clock (the same
    monotonic clock as ``started`` and ``ended``, this process's): ``plan`` (the fork, the
    grader's start-up and the plan: cases and reference values), ``import`` (the child started
    or handed over, the submission imported), ``cases`` (the visible calls and their judging),
    ``shrink`` (the search for a smaller failing input), and ``finish`` (the hidden cases, the
    report built and printed, the process's exit). Phases without lines are left out."""
    marks: list[tuple[str, float]] = []
    for line in err.split(b"\n"):
        parsed = _progress_of(line)
        if parsed is None or parsed[3] is None:
            continue
        phase, done, total, at = parsed
        if phase == "cases" and done == 0:
            marks.append(("cases", at))
        elif phase in ("import", "shrink", "hidden") and not any(p == phase for p, _ in marks):
            marks.append((phase, at))
        elif phase == "cases" and done == total:
            marks.append(("cases-end", at))
    split: dict[str, float] = {}
    last_name, last_at = "plan", started
    for name, at in marks:
        if name == "cases-end":
            name = "after-cases"
        split[last_name] = split.get(last_name, 0.0) + max(0.0, at - last_at)
        last_name, last_at = name, at
    split[last_name] = split.get(last_name, 0.0) + max(0.0, ended - last_at)
    if "after-cases" in split or "hidden" in split:
        split["finish"] = split.pop("after-cases", 0.0) + split.pop("hidden", 0.0)
    return split


class Cancelled(Exception):
    """A newer Run of the same page replaced this check."""


class CheckFailed(Exception):
    """The check ran but gave no report (its one-line complaint is the message)."""


class _Refused(Exception):
    """The fork server refused the check or went away before it started: run it as a process."""


class _Process:
    """A check run as ``python -I -c ... check`` (the cold path, or a client of the fork server)."""

    def __init__(self, proc: asyncio.subprocess.Process, err: Any) -> None:
        self.proc = proc
        self.err = err

    @classmethod
    async def start(cls, argv: list[str], folder: str, env: dict[str, str]) -> "_Process":
        """Start ``argv`` in ``folder`` in a session of its own (stderr to a temporary file,
        which :meth:`progress` reads while it runs)."""
        err = tempfile.TemporaryFile()
        try:
            return cls(await asyncio.create_subprocess_exec(
                *argv, cwd=folder, env=env, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=err, start_new_session=True), err)
        except BaseException:
            err.close()
            raise

    def progress(self) -> tuple[str, int, int] | None:
        """Its last progress line so far (:func:`last_progress`)."""
        return last_progress(self.err)

    async def wait(self) -> tuple[int, bytes, bytes]:
        """Its exit code, stdout and stderr once it has ended."""
        try:
            out, _ = await self.proc.communicate()
            self.err.seek(0)
            err = self.err.read()
        finally:
            self.err.close()
        return self.proc.returncode if self.proc.returncode is not None else -signal.SIGKILL, out, err

    async def stop(self) -> None:
        """SIGINT to its process group (it stops as ``grader check`` does on Ctrl-C), SIGKILL
        if it is still there after :data:`CANCEL_GRACE` seconds."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGINT)
        try:
            await asyncio.wait_for(asyncio.shield(self.proc.wait()), CANCEL_GRACE)
        except asyncio.TimeoutError:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)


class _Forked:
    """A check forked by ``grader serve``'s fork server, asked directly over its socket (the
    protocol of :mod:`grader.forkserver`, as ``grader check`` asks it): no Python start and
    imports of a client process. Its stdout and stderr go to temporary files."""

    def __init__(self, sock: Any, out: Any, err: Any) -> None:
        from ..forkserver import Reader
        self.sock, self.out, self.err = sock, out, err
        self.reader = Reader(sock)
        self.started = False
        self.done = asyncio.Event()

    @classmethod
    async def start(cls, path: str | None, argv: list[str], folder: str, env: dict[str, str]) -> "_Forked":
        """Send the request for ``grader ARGV`` in ``folder``.

        Raises:
            _Refused: no fork server of this user answers at ``path`` (None: the default socket).
        """
        from .. import forkserver
        sock = forkserver.connect_any(Path(path) if path else None)
        if sock is None:
            raise _Refused()
        out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        try:
            with open(os.devnull, "rb") as null:
                forkserver.send_request(sock, argv, env, folder, [null.fileno(), out.fileno(), err.fileno()])
        except OSError:
            sock.close()
            out.close()
            err.close()
            raise _Refused()
        sock.setblocking(False)
        return cls(sock, out, err)

    def progress(self) -> tuple[str, int, int] | None:
        """Its last progress line so far (:func:`last_progress`)."""
        return None if self.done.is_set() else last_progress(self.err)

    async def _readable(self) -> None:
        loop = asyncio.get_running_loop()
        ready = loop.create_future()
        loop.add_reader(self.sock.fileno(), lambda: ready.done() or ready.set_result(None))
        try:
            await ready
        finally:
            loop.remove_reader(self.sock.fileno())

    async def wait(self) -> tuple[int, bytes, bytes]:
        """Its exit code (negative for a signal), stdout and stderr once it has ended.

        Raises:
            _Refused: the server refused it (stale code, say) before it started.
        """
        try:
            code = None
            while code is None:
                await self._readable()
                for message in self.reader.poll():
                    if "refused" in message and not self.started:
                        raise _Refused()
                    if "pid" in message:
                        self.started = True
                    if "code" in message:
                        code = int(message["code"])
                if self.reader.closed and code is None:
                    if not self.started:
                        raise _Refused()
                    code = -signal.SIGKILL        # the server went away (and killed its checks)
            self.out.seek(0)
            self.err.seek(0)
            return code, self.out.read(), self.err.read()
        finally:
            self.done.set()
            self.sock.close()
            self.out.close()
            self.err.close()

    def _signal(self, name: str) -> None:
        with contextlib.suppress(OSError):
            self.sock.send(json.dumps({"signal": name}).encode() + b"\n")

    async def stop(self) -> None:
        """SIGINT to the check, SIGKILL after :data:`CANCEL_GRACE` seconds (through the server)."""
        self._signal("INT")
        try:
            await asyncio.wait_for(self.done.wait(), CANCEL_GRACE)
        except asyncio.TimeoutError:
            self._signal("KILL")


@dataclass
class _Slot:
    """One page's checks: the newest Run's number, the running check, and a lock that lets
    one check run at a time."""

    generation: int = 0
    check: Any = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    #: when the running check started (time.monotonic()), None when none runs
    started: float | None = None
    #: Runs waiting for the lock (a cancelled check still ending)
    waiting: int = 0


@dataclass
class Result:
    """A finished check: the learner JSON report, ``grader check``'s exit code, the wall
    seconds and their split (:func:`phase_split`)."""

    report: dict[str, Any]
    code: int
    seconds: float
    phases: dict[str, float] = field(default_factory=dict)


class Checker:
    """Runs the page's checks: ``socket`` is the fork server's (None: the default one),
    ``problems_dir`` the folder of specs (None: the bundled problems). ``direct``: ask the fork
    server over its socket from this process (else, or when it does not answer, each check is a
    ``grader check`` process, which asks it itself or runs cold)."""

    def __init__(self, socket: str | None = None, problems_dir: str | None = None, direct: bool = True) -> None:
        self.socket = socket
        self.problems_dir = problems_dir
        self.direct = direct
        self.slots: dict[str, _Slot] = {}
        #: checks running now per session, and the most ever seen at once (tests read it)
        self.running: dict[str, int] = {}
        self.peak: dict[str, int] = {}
        #: how the last check ran: "forked" (asked directly) or "process"
        self.last_path = ""
        #: one learner's page: their edited JAX functions share warm compilations (--jax-cache-scope)
        self.scope = secrets.token_hex(16)

    def arguments(self, problem: str, framework: str, shrink: bool = True) -> list[str]:
        """``grader`` ARGV of one Run (run in the attempt's folder): with ``--progress``, and
        ``--no-shrink`` when ``shrink`` is off."""
        argv = ["check", FILE_NAME, "--problem", problem, "--framework", framework, "--format", "json",
                "--audience", "learner", "--progress", "--jax-cache-scope", self.scope]
        if not shrink:
            argv.append("--no-shrink")
        if self.problems_dir:
            argv += ["--problems-dir", self.problems_dir]
        return argv

    def command(self, problem: str, framework: str, shrink: bool = True) -> list[str]:
        """The ``grader check`` command line of one Run as a process."""
        return [sys.executable, "-I", "-c", CHECK_BOOT, ROOT, *self.arguments(problem, framework, shrink)]

    def environment(self) -> dict[str, str]:
        """The check's environment: this process's, asking this server's fork server."""
        env = dict(os.environ)
        env["GRADER_SERVE"] = "1"
        if self.socket:
            env["GRADER_SERVE_SOCKET"] = self.socket
        return env

    def progress(self, session: str) -> dict[str, Any]:
        """How ``session``'s check is going, for ``GET /api/progress``: ``running``,
        ``seconds`` since it started, ``phase`` (``starting``; ``import`` as the child starts and
        imports the submission; then ``cases``, ``shrink``, ``hidden``), ``done`` and ``total`` (visible
        cases), and ``queued`` (Runs waiting for a cancelled check to end)."""
        slot = self.slots.get(session)
        if slot is None or (slot.started is None and not slot.waiting):
            return {"running": False, "queued": 0}
        out: dict[str, Any] = {"running": slot.started is not None, "queued": slot.waiting,
                               "seconds": round(time.monotonic() - slot.started, 2) if slot.started else 0.0,
                               "phase": "starting", "done": 0, "total": 0}
        line = getattr(slot.check, "progress", lambda: None)() if slot.check is not None else None
        if line is not None:
            out["phase"], out["done"], out["total"] = line
        return out

    async def _check(self, slot: _Slot, problem: str, framework: str, folder: str,
                     shrink: bool = True) -> tuple[int, bytes, bytes]:
        """Run one check in ``folder``: forked directly when the fork server answers, else as a process."""
        env = self.environment()
        if self.direct:
            try:
                slot.check = await _Forked.start(self.socket, self.arguments(problem, framework, shrink), folder, env)
                self.last_path = "forked"
                return await slot.check.wait()
            except _Refused:
                pass
            except (ImportError, AttributeError, TypeError):   # a fork server of another shape: ask as a client
                pass
        slot.check = await _Process.start(self.command(problem, framework, shrink), folder, env)
        self.last_path = "process"
        return await slot.check.wait()

    async def run(self, session: str, problem: str, framework: str, source: str, shrink: bool = True) -> Result:
        """Check ``source`` as ``problem``'s submission in ``framework`` (``shrink``: search for
        the smallest failing input); cancel this session's check in progress first.

        Raises:
            Cancelled: a newer Run of ``session`` came before this one ended.
            CheckFailed: ``grader check`` gave no report (its stderr's last line says why).
        """
        slot = self.slots.setdefault(session, _Slot())
        slot.generation += 1
        mine = slot.generation
        if slot.check is not None:
            asyncio.ensure_future(slot.check.stop())
        slot.waiting += 1
        try:
            await slot.lock.acquire()
        finally:
            slot.waiting -= 1
        try:
            if slot.generation != mine:
                raise Cancelled()
            folder = tempfile.mkdtemp(prefix="grader-web-")
            self.running[session] = self.running.get(session, 0) + 1
            self.peak[session] = max(self.peak.get(session, 0), self.running[session])
            try:
                with open(os.path.join(folder, FILE_NAME), "w", encoding="utf-8") as f:
                    f.write(source)
                start = slot.started = time.monotonic()
                task = asyncio.ensure_future(self._check(slot, problem, framework, folder, shrink))
                try:
                    code, out, err = await asyncio.wait_for(asyncio.shield(task), CHECK_WAIT)
                except asyncio.TimeoutError:
                    await self._stop_task(slot, task)
                    raise CheckFailed(f"the check took more than {CHECK_WAIT:.0f} s and was stopped")
                except asyncio.CancelledError:      # the request went away: so does its check
                    await self._stop_task(slot, task)
                    raise
                ended = time.monotonic()
                seconds = ended - start
            finally:
                slot.check = None
                slot.started = None
                self.running[session] -= 1
                shutil.rmtree(folder, ignore_errors=True)
            if slot.generation != mine:
                raise Cancelled()
            return Result(_report(code, out, err), code, seconds, phase_split(err, start, ended))
        finally:
            slot.lock.release()

    @staticmethod
    async def _stop_task(slot: _Slot, task: "asyncio.Future[Any]") -> None:
        if slot.check is not None:
            await slot.check.stop()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(task, CANCEL_GRACE + 5)


def _report(code: int | None, out: bytes, err: bytes) -> dict[str, Any]:
    """The JSON report ``grader check`` printed.

    Raises:
        CheckFailed: it printed none; the message is its stderr's last line.
    """
    if code in (0, 1):
        with contextlib.suppress(ValueError, UnicodeDecodeError):
            report = json.loads(out.decode("utf-8"))
            if isinstance(report, dict):
                return report
    from ..commands import PROGRESS_PREFIX
    lines = [line for line in err.decode("utf-8", "replace").splitlines()
             if line.strip() and not line.startswith(PROGRESS_PREFIX)]
    raise CheckFailed(lines[-1] if lines else f"grader check ended with exit code {code} and no report")
