"""The page's Run: ``grader check FILE --format json --audience learner`` of the source saved
as a file, one at a time per page.

Each check is the real command line, run as ``python -I -m grader check`` in a fresh private
folder: it asks this ``grader serve``'s fork server (the warm path, ``environment.served``) and
runs the check itself when that cannot answer, so the report is what the learner's
``grader check`` of that file would print. A page (its session id) has at most one check
running: a Run while one is in progress cancels the earlier one (its process group gets SIGINT,
then SIGKILL) and starts once it has ended, so two never run at once; the earlier request
answers 409.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
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


class Cancelled(Exception):
    """A newer Run of the same page replaced this check."""


class CheckFailed(Exception):
    """The check ran but gave no report (its one-line complaint is the message)."""


@dataclass
class _Slot:
    """One page's checks: the newest Run's number, the running process, and a lock that lets
    one check run at a time."""

    generation: int = 0
    proc: asyncio.subprocess.Process | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


@dataclass
class Result:
    """A finished check: the learner JSON report, ``grader check``'s exit code and the wall seconds."""

    report: dict[str, Any]
    code: int
    seconds: float


class Checker:
    """Runs the page's checks: ``socket`` is the fork server's (None: the default one),
    ``problems_dir`` the folder of specs (None: the bundled problems)."""

    def __init__(self, socket: str | None = None, problems_dir: str | None = None) -> None:
        self.socket = socket
        self.problems_dir = problems_dir
        self.slots: dict[str, _Slot] = {}
        #: checks running now per session, and the most ever seen at once (tests read it)
        self.running: dict[str, int] = {}
        self.peak: dict[str, int] = {}

    def command(self, problem: str, framework: str) -> list[str]:
        """The ``grader check`` command line of one Run (run in the attempt's folder)."""
        argv = [sys.executable, "-I", "-c", CHECK_BOOT, ROOT, "check", FILE_NAME, "--problem", problem,
                "--framework", framework, "--format", "json", "--audience", "learner"]
        if self.problems_dir:
            argv += ["--problems-dir", self.problems_dir]
        return argv

    def environment(self) -> dict[str, str]:
        """The check's environment: this process's, asking this server's fork server."""
        env = dict(os.environ)
        env["GRADER_SERVE"] = "1"
        if self.socket:
            env["GRADER_SERVE_SOCKET"] = self.socket
        return env

    async def run(self, session: str, problem: str, framework: str, source: str) -> Result:
        """Check ``source`` as ``problem``'s submission in ``framework``; cancel this session's
        check in progress first.

        Raises:
            Cancelled: a newer Run of ``session`` came before this one ended.
            CheckFailed: ``grader check`` gave no report (its stderr's last line says why).
        """
        slot = self.slots.setdefault(session, _Slot())
        slot.generation += 1
        mine = slot.generation
        if slot.proc is not None:
            asyncio.ensure_future(self._stop(slot.proc))
        async with slot.lock:
            if slot.generation != mine:
                raise Cancelled()
            folder = tempfile.mkdtemp(prefix="grader-web-")
            try:
                path = os.path.join(folder, FILE_NAME)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(source)
                start = time.monotonic()
                proc = await asyncio.create_subprocess_exec(
                    *self.command(problem, framework), cwd=folder, env=self.environment(),
                    stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE, start_new_session=True)
                slot.proc = proc
                self.running[session] = self.running.get(session, 0) + 1
                self.peak[session] = max(self.peak.get(session, 0), self.running[session])
                try:
                    try:
                        out, err = await asyncio.wait_for(proc.communicate(), CHECK_WAIT)
                    except asyncio.TimeoutError:
                        await self._stop(proc)
                        raise CheckFailed(f"the check took more than {CHECK_WAIT:.0f} s and was stopped")
                    except asyncio.CancelledError:      # the request went away: so does its check
                        await self._stop(proc)
                        raise
                finally:
                    slot.proc = None
                    self.running[session] -= 1
                seconds = time.monotonic() - start
            finally:
                shutil.rmtree(folder, ignore_errors=True)
            if slot.generation != mine:
                raise Cancelled()
            return Result(_report(proc.returncode, out, err), proc.returncode or 0, seconds)

    async def _stop(self, proc: asyncio.subprocess.Process) -> None:
        """End a check: SIGINT to its process group (it stops as ``grader check`` does on
        Ctrl-C), SIGKILL if it is still there after :data:`CANCEL_GRACE` seconds."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGINT)
        try:
            await asyncio.wait_for(asyncio.shield(proc.wait()), CANCEL_GRACE)
        except asyncio.TimeoutError:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)


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
    lines = [line for line in err.decode("utf-8", "replace").splitlines() if line.strip()]
    raise CheckFailed(lines[-1] if lines else f"grader check ended with exit code {code} and no report")
