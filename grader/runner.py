"""Run a submission in a separate, limited process and call its function.

One :class:`Worker` is one child process (``grader/_child.py``) that imports the submission once
and then answers call requests over two pipes (``grader.protocol``). Each call returns a
:class:`CallOutcome` record: the result array or what went wrong, and the time it took; the
grader compares results in its own process only.

Limits applied to the child (see docs/security.md for the threat model):

- its own session and process group, killed as a group with SIGKILL at a deadline and at the end;
- rlimits (address space, CPU seconds, file size, core dumps, open files, processes), set by
  the child on itself before any submission code runs (no preexec_fn: JAX in the grader is
  multithreaded, and fork-with-preexec would risk a deadlock);
- a wall-clock deadline per call (``call_timeout``) and for the import (``import_timeout``);
- a scrubbed environment, a temporary working directory, stdin from /dev/null, stdout and
  stderr drained by threads and capped at ``output_cap`` bytes each (the head is kept);
- the grader marks itself non-dumpable (``PR_SET_DUMPABLE``) so the child cannot read its memory;
- the launch is wrapped by the sandbox tier chosen in ``grader.sandbox``.
"""
from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import protocol

CHILD_SCRIPT = Path(__file__).with_name("_child.py")
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36


@dataclass
class Limits:
    """Resource limits for one submission process.

    Attributes:
        call_timeout: wall-clock seconds for one call.
        import_timeout: wall-clock seconds to start the process and import the submission.
        memory_bytes: address-space limit (RLIMIT_AS) in bytes; JAX alone maps about 1.5 GB.
        cpu_seconds: CPU-time limit (RLIMIT_CPU) for the whole process, in seconds.
        file_bytes: largest file the process may write (RLIMIT_FSIZE), in bytes.
        open_files: RLIMIT_NOFILE.
        processes: RLIMIT_NPROC (ignored by the kernel for root; the sandbox tier covers it).
        output_cap: bytes kept of each of stdout and stderr (the rest is counted, not kept).
    """

    call_timeout: float = 10.0
    import_timeout: float = 30.0
    memory_bytes: int = 4 << 30
    cpu_seconds: int = 300
    file_bytes: int = 64 << 20
    open_files: int = 256
    processes: int = 256
    output_cap: int = 64 << 10


@dataclass
class CallOutcome:
    """What one call of the submission's function gave.

    ``status`` is one of ``ok`` (``result`` holds the array), ``type`` (not an array;
    ``message`` names the type), ``exception`` / ``memory`` (``message`` and ``traceback``),
    ``timeout`` (the call passed its deadline; the process was killed) or ``crash`` (the process
    died or broke the protocol; ``message`` says how). ``mutated`` lists the inputs changed in
    place. ``seconds`` is the call's duration in seconds as measured by the grader.
    """

    status: str
    result: np.ndarray | None = None
    message: str = ""
    traceback: str = ""
    mutated: list[str] = field(default_factory=list)
    seconds: float = 0.0
    result_type: str = ""


@dataclass
class ImportOutcome:
    """Starting the submission: ``ok``, or ``import_error`` / ``timeout`` / ``crash`` with a message."""

    status: str
    message: str = ""
    traceback: str = ""
    versions: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0


class _Drain(threading.Thread):
    """Reads a pipe to its end, keeping the first ``cap`` bytes and counting the rest."""

    def __init__(self, stream: Any, cap: int) -> None:
        super().__init__(daemon=True)
        self.stream, self.cap = stream, cap
        self.head = bytearray()
        self.total = 0

    def run(self) -> None:
        try:
            while True:
                chunk = self.stream.read1(1 << 16) if hasattr(self.stream, "read1") else self.stream.read(1 << 16)
                if not chunk:
                    break
                self.total += len(chunk)
                if len(self.head) < self.cap:
                    self.head += chunk[: self.cap - len(self.head)]
        except (OSError, ValueError):
            pass

    def text(self) -> str:
        return self.head.decode("utf-8", errors="replace")


def harden_grader_process() -> None:
    """Make the grader's memory unreadable by same-user children and adopt their orphans.

    ``PR_SET_DUMPABLE=0`` blocks ``/proc/<pid>/mem`` reads and ptrace from the child;
    ``PR_SET_CHILD_SUBREAPER`` re-parents double-forked descendants to the grader so that
    :func:`reap_orphans` can kill them. Both are Linux ``prctl(2)`` options; elsewhere no-ops.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def reap_orphans(keep: set[int] | None = None) -> int:
    """SIGKILL and reap every child process of the grader not in ``keep``; return how many.

    With the subreaper flag set, a submission's double-forked or setsid'd descendants become
    the grader's children once their parents die, so this finds them too.
    """
    keep = keep or set()
    me, killed = os.getpid(), 0
    for _ in range(20):
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) in keep:
                continue
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[1]) == me:
                found.append(int(entry))
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except OSError:
                pass
        for pid in found:
            try:
                os.waitpid(pid, 0)
            except (ChildProcessError, OSError):
                pass
    return killed


def child_environment(framework: str, workdir: str) -> dict[str, str]:
    """The scrubbed environment the submission runs with: no secrets, one BLAS thread, CPU JAX."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
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
        "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
        "TF_CPP_MIN_LOG_LEVEL": "2",
    }
    for key in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "GRADER_JAX_CACHE"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


class Worker:
    """One submission process: import once, then call the function many times.

    Args:
        submission: path of the learner's file.
        function: the function name to call.
        framework: ``"numpy"`` or ``"jax"`` (what the inputs are converted to in the child).
        limits: resource limits.
        wrap: a function turning the child's argv into the sandboxed argv (``grader.sandbox``),
            given the argv, the submission path and the working directory; None runs it directly.

    Use as a context manager, or call :meth:`close`; either kills the whole process group.
    """

    def __init__(self, submission: str | os.PathLike[str], function: str, framework: str,
                 limits: Limits | None = None, wrap: Any = None) -> None:
        self.submission = str(Path(submission).resolve())
        self.function = function
        self.framework = framework
        self.limits = limits or Limits()
        self.wrap = wrap
        self.proc: subprocess.Popen[bytes] | None = None
        self.seq = 0
        self._workdir: tempfile.TemporaryDirectory[str] | None = None
        self._drains: list[_Drain] = []
        self.stdout_total = 0
        self.stderr_total = 0
        self._stdout = bytearray()
        self._stderr = bytearray()

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> ImportOutcome:
        """Start the process and import the submission; never raises for the submission's faults."""
        failed = self.launch()
        return failed if failed is not None else self.wait_ready()

    def launch(self) -> ImportOutcome | None:
        """Start the process without waiting for the import (so the grader can work meanwhile).

        Returns None once started, or an ``ImportOutcome("crash")`` if the process could not start.
        """
        self._started = time.monotonic()
        self._workdir = tempfile.TemporaryDirectory(prefix="grader-run-")
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        argv = [sys.executable, "-I", "-X", "faulthandler", str(CHILD_SCRIPT), str(req_r), str(rep_w),
                self.submission, self.function, self.framework, json.dumps(asdict(self.limits))]
        if self.wrap is not None:
            argv = self.wrap(argv, self.submission, self._workdir.name)
        limits = self.limits
        try:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                pass_fds=(req_r, rep_w), cwd=self._workdir.name,
                env=child_environment(self.framework, self._workdir.name),
                start_new_session=True,
            )
        except OSError as exc:
            for fd in (req_r, req_w, rep_r, rep_w):
                os.close(fd)
            return ImportOutcome("crash", f"could not start the submission's process: {exc}")
        os.close(req_r)
        os.close(rep_w)
        self._req, self._rep = req_w, rep_r
        self._drains = [_Drain(self.proc.stdout, limits.output_cap), _Drain(self.proc.stderr, limits.output_cap)]
        for d in self._drains:
            d.start()
        return None

    def wait_ready(self) -> ImportOutcome:
        """Wait for the submission's import to finish (after :meth:`launch`)."""
        started, limits = self._started, self.limits
        deadline = time.monotonic() + limits.import_timeout
        try:
            header, _ = protocol.read_frame(self._rep, deadline)
        except protocol.Timeout:
            self.kill()
            return ImportOutcome("timeout", f"importing the submission took longer than {limits.import_timeout:g} s",
                                 seconds=time.monotonic() - started)
        except protocol.ProtocolError as exc:
            code = self._wait_exit()
            return ImportOutcome("crash", self._death_message(code, "while being imported", exc),
                                 seconds=time.monotonic() - started)
        status = header.get("status")
        if status == "ready":
            return ImportOutcome("ok", versions=dict(header.get("versions") or {}),
                                 seconds=time.monotonic() - started)
        if status == "import_error":
            self.kill()
            return ImportOutcome("import_error", str(header.get("message", "")),
                                 str(header.get("traceback", "")), seconds=time.monotonic() - started)
        self.kill()
        return ImportOutcome("crash", f"unexpected first message {status!r}", seconds=time.monotonic() - started)

    def call(self, arrays: dict[str, np.ndarray], timeout: float | None = None) -> CallOutcome:
        """Call the function with ``arrays`` (parameter name -> array, in call order).

        Never raises for the submission's faults: a timeout, a death or a protocol violation is
        returned as an outcome, and the process is then gone (call :meth:`start` again to go on).
        """
        if self.proc is None or self.proc.poll() is not None:
            return CallOutcome("crash", message="the submission's process is not running")
        self.seq += 1
        seq = self.seq
        timeout = self.limits.call_timeout if timeout is None else timeout
        t0 = time.monotonic()
        try:
            protocol.write_frame(self._req, {"seq": seq, "op": "call", "order": list(arrays)}, arrays)
            header, out = protocol.read_frame(self._rep, t0 + timeout)
        except protocol.Timeout:
            self.kill()
            return CallOutcome("timeout", message=f"the call took longer than {timeout:g} s and was stopped",
                               seconds=time.monotonic() - t0)
        except protocol.ProtocolError as exc:
            code = self._wait_exit()
            return CallOutcome("crash", message=self._death_message(code, "during the call", exc),
                               seconds=time.monotonic() - t0)
        seconds = time.monotonic() - t0
        if header.get("seq") != seq:
            self.kill()
            return CallOutcome("crash", message=f"reply out of sequence ({header.get('seq')!r} for {seq})",
                               seconds=seconds)
        status = header.get("status")
        mutated = [str(m) for m in header.get("mutated") or [] if isinstance(m, str)]
        if status == "ok":
            if "result" not in out:
                self.kill()
                return CallOutcome("crash", message="reply without a result array", seconds=seconds)
            return CallOutcome("ok", result=out["result"], mutated=mutated, seconds=seconds,
                               result_type=str(header.get("result_type", "")))
        if status == "type":
            return CallOutcome("type", message=str(header.get("type_name", "?")), mutated=mutated, seconds=seconds)
        if status in ("exception", "memory"):
            return CallOutcome(status, message=str(header.get("message", "")),
                               traceback=str(header.get("traceback", "")), seconds=seconds)
        self.kill()
        return CallOutcome("crash", message=f"unknown reply status {status!r}", seconds=seconds)

    def _wait_exit(self) -> int | None:
        assert self.proc is not None
        try:
            code = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        self.kill()
        return code

    def _death_message(self, code: int | None, when: str, exc: Exception) -> str:
        if code is None:
            return f"the submission broke the grader's protocol {when}: {exc}"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            extra = {"SIGSEGV": " (segmentation fault)", "SIGKILL": " (killed; out of memory or CPU time?)",
                     "SIGXCPU": " (CPU time limit)", "SIGABRT": " (aborted)", "SIGXFSZ": " (file size limit)"}
            return f"the submission's process died {when}: {name}{extra.get(name, '')}"
        return f"the submission's process exited with code {code} {when}"

    def kill(self) -> None:
        """SIGKILL the child's whole process group and reap it (idempotent)."""
        proc = self.proc
        if proc is None:
            return
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for fd in ("_req", "_rep"):
            if hasattr(self, fd):
                try:
                    os.close(getattr(self, fd))
                except OSError:
                    pass
                delattr(self, fd)
        for d in self._drains:
            d.join(timeout=1)
        if self._drains:
            self._stdout += self._drains[0].head[: max(0, self.limits.output_cap - len(self._stdout))]
            self._stderr += self._drains[1].head[: max(0, self.limits.output_cap - len(self._stderr))]
            self.stdout_total += self._drains[0].total
            self.stderr_total += self._drains[1].total
            self._drains = []
        for stream in (proc.stdout, proc.stderr):
            try:
                stream.close()
            except (OSError, AttributeError):
                pass
        self.proc = None
        if self._workdir is not None:
            self._workdir.cleanup()
            self._workdir = None

    def close(self) -> None:
        """Ask the child to exit, then kill its process group."""
        if self.proc is not None and self.proc.poll() is None and hasattr(self, "_req"):
            try:
                protocol.write_frame(self._req, {"seq": 0, "op": "exit"})
                self.proc.wait(timeout=0.5)
            except (protocol.PeerClosed, subprocess.TimeoutExpired):
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
