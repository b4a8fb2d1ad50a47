"""A warm grader for ``check(fn)``: one grader process per notebook kernel that stays imported.

``check(fn)`` once started ``python -I -m grader check`` for every call, paying the grader's
imports, the spec and case loading and the sandbox probe each time (about 1.8 of a warm NumPy
check's 3.5 s). :class:`WarmGrader` starts ``python -I -m grader._warm_server`` on the first call and
sends it each later check as one request; the process (:mod:`grader._warm_server`) runs
``grader check`` in itself (:func:`grader.cli.main`) and answers with the exit code and what
the command wrote.

Security is unchanged: the warm process is the grader, not the learner's code. Every check
still starts a fresh sandboxed child for the submission (``grader.run``), which is never
reused; the warm process runs no learner code, reads no learner file but the one it is asked
to check, and runs from an empty folder of its own (``-I``: no ``PYTHON*`` variable, no
user site, no working folder on ``sys.path``).

Protocol (one JSON object per line): a request ``{"argv": [...]}`` on the process's stdin; a
response ``{"code": int, "stdout": str, "stderr": str}`` on the file descriptor that was its
stdout (file descriptor 1 itself is pointed at the null device, so that nothing else written
there can be taken for a response). End of input: the process exits. An interrupt (SIGINT,
the notebook's stop button) ends the check in progress as ``grader check`` ends on one (exit
130, its children cleaned up), answers, and exits: the next ``check(fn)`` starts a new one.
"""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from typing import Any

#: environment variable: ``0`` makes ``check(fn)`` start a grader per call, as before
WARM_ENV = "GRADER_WARM"


class WarmGrader:
    """The kernel's warm grader process (started by :meth:`run` on first use; gone with the
    kernel, whose end closes its stdin)."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[str] | None = None
        self.folder: str | None = None
        self.environ: dict[str, str] = {}  # the environment it was started with

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        """Start ``python -I -m grader._warm_server`` from an empty folder of its own."""
        self.folder = tempfile.mkdtemp(prefix="grader-warm-")
        self.environ = dict(os.environ)
        self.proc = subprocess.Popen([sys.executable, "-I", "-m", "grader._warm_server"], cwd=self.folder,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, encoding="utf-8", start_new_session=True, bufsize=1)

    def stop(self) -> None:
        """End the process (closing its input; killed if it does not end within 5 s)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        with contextlib.suppress(OSError):
            proc.stdin.close()  # type: ignore[union-attr]
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if self.folder:
            import shutil
            shutil.rmtree(self.folder, ignore_errors=True)

    def run(self, argv: list[str], grace: float) -> tuple[str, str, int] | None:
        """``grader <argv>`` in the warm process: (stdout, stderr, exit code), or None when the
        process cannot answer (it died, or never started): the caller then runs a grader of its
        own. An interrupt is passed on as SIGINT (the check ends as ``grader check`` ends on one,
        within ``grace`` seconds, else the process is killed) and raised again.
        """
        import signal

        if not self.alive() or self.environ != dict(os.environ):
            # a kernel that changed its environment (GRADER_PROBLEMS_DIR, GRADER_CACHE_DIR...)
            # gets a grader that reads the new one, as a grader per call would
            self.stop()
            try:
                self.start()
            except OSError:
                return None
        proc = self.proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(json.dumps({"argv": argv}) + "\n")
            proc.stdin.flush()
        except OSError:
            self.stop()
            return None
        try:
            line = proc.stdout.readline()
        except KeyboardInterrupt:
            try:  # a second interrupt while it ends must not keep the process (and its stale answer)
                with contextlib.suppress(OSError):
                    proc.send_signal(signal.SIGINT)
                try:
                    proc.wait(timeout=grace)
                except subprocess.TimeoutExpired:
                    proc.kill()
            finally:
                if self.proc is proc:
                    with contextlib.suppress(OSError):
                        proc.kill()
                    self.stop()
            raise
        try:
            answer: dict[str, Any] = json.loads(line)
            return answer["stdout"], answer["stderr"], int(answer["code"])
        except (ValueError, KeyError, TypeError):
            self.stop()  # it died mid-check (killed, out of memory): a new one next time
            return None


