"""``grader grade``: every submission graded in a pool of check processes (:func:`cmd_grade`).

Each submission is graded by its own ``python -I ... grader check FILE --format json --output
DIR/reports/<name>.json ...`` process (:func:`grader_command`: isolated mode, so nothing is
imported from the working directory), started in its own session and killed (its whole
process group, and whatever it left behind) when it passes a hard wall-clock limit. A hostile
or hung submission, or a grader crash on one submission, so costs only that submission's row:
a check that dies or writes no report gets a row of kind ``crash`` and a placeholder report
saying why, and the batch goes on. Rows are appended to the gradebook as they come, with a
progress bar on a terminal or one line per submission elsewhere; the folder's other files are
written at the end (:mod:`grader.batch.outputs`).

``--resume`` keeps a learner's row only while their files give the digest their report records
(``environment.submission_sha256``: :func:`grader.check.submission_digest` of the main file and
the siblings taken along); a learner whose files changed, or whose report records none, is
graded again; a folder graded with other settings is refused (:mod:`grader.batch.settings`).
Each check runs in an empty folder of the batch's (:func:`grader.isolation.neutral_folder`),
given absolute paths, and ``--shown`` the path as found.
"""
from __future__ import annotations

import argparse
import contextlib
import ctypes
import io
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Callable

from .._args import add_check_options, int_at_least, parse_shard, positive_float
from ..errors import EXIT_FAILED, EXIT_PASSED, GraderError
from ..processes import SLOT_HELD_ENV, release_user_slot, wait_user_slot
from ..results import Failure
from ..reports.summary_md import tally
from .discovery import Submission, absolute_path, anchored, choose, enumerate_learners, in_shard
from .gradebook import (FEEDBACK, GRADEBOOK, JUNIT, REPORTS, SUMMARY, SUMMARY_HTML, Appender, Row, add_note,
                        load_report, placeholder_report, read_gradebook, report_path, write_gradebook,
                        write_report)
from .history import archive, cost_guess, longest_first
from .outputs import SIMILARITY_HTML, write_feedback, write_outputs
from .times import parse_deadline, record as record_times
from .settings import SETTINGS, grade_settings, read_settings, settings_diff, settings_of_reports, write_settings


HARD_TIMEOUT_MARGIN = 60.0  # seconds allowed on top of --total-timeout: start-up, reference, shrinking
POLL_SECONDS = 0.05         # how often running checks are polled
STDERR_TAIL = 4096          # bytes of a crashed check's stderr kept in its placeholder report
PR_SET_PDEATHSIG = 1


def add_parser(sub: Any) -> None:
    """Add the ``grade`` subcommand to the CLI's subparsers ``sub``."""
    grade = sub.add_parser(
        "grade", help="grade a whole class in parallel: gradebook, reports, JUnit XML, summary",
        description="Grade every submission under PATHS, each in its own process. Exit 0 when every "
                    "submission passed, 1 when some failed, 2 when the grader could not run. Reports are "
                    "for the instructor (every case shown) unless --audience learner.")
    grade.add_argument("paths", nargs="+", metavar="PATH",
                       help=".py files (one learner each) or folders (a learner's folder, or a folder of "
                            "learners' files and folders)")
    add_check_options(grade, audience="instructor",
                      problem_help="problem id (default: the only problem known; a batch grades one problem)")
    grade.add_argument("--jobs", type=int_at_least(1), default=None, metavar="N",
                       help="submissions graded at once (default: the number of cores)")
    grade.add_argument("--out", default="grades", metavar="DIR",
                       help="output folder (default ./grades); a run already there is moved to DIR/history/<time>/ "
                            "and summary.html says whose score changed since, and why")
    grade.add_argument("--resume", action="store_true",
                       help="keep the rows already in DIR/gradebook.csv whose report is there and whose "
                            "learner's files are still those it graded (a digest in the report), grade the rest "
                            "(delete a report to grade that learner again)")
    grade.add_argument("--shard", type=parse_shard, metavar="I/N",
                       help="grade only shard I of N (by a hash of the learner id); join with grader merge")
    grade.add_argument("--hard-timeout", type=positive_float, metavar="SECONDS",
                       help="wall-clock limit of one submission's whole check, after which its processes "
                            f"are killed and its row says crash (default: --total-timeout + {HARD_TIMEOUT_MARGIN:g})")
    grade.add_argument("--roster", metavar="FILE",
                       help="the class list (a CSV from the LMS: Canvas, Moodle, Blackboard, or one with an id "
                            "column): every learner on it gets a row, 'no submission' and 0 points where nothing "
                            "was found; a submission of someone not on it is graded and named in a warning")
    grade.add_argument("--key", metavar="COLUMN",
                       help="the roster's column that holds the learner ids (file or folder names): login, sis, "
                            "id, email, idnumber, username or a column's name (default: the first of SIS Login "
                            "ID, Username, Email address, ID number, ID, id, learner the roster has)")
    grade.add_argument("--deadline", metavar="WHEN",
                       help="the due time (ISO 8601, e.g. 2026-12-05T23:59 or 2026-12-05T23:59-05:00; without an "
                            "offset, UTC): summary.html says how late each submission is (its time: Gradescope's "
                            "submission metadata, the Git commit of a learner's repository, else the file's)")
    grade.add_argument("--starter", metavar="FILE", action="append", default=[],
                       help="the starter code handed out (repeatable): left out of the similarity report")
    grade.add_argument("--similarity", type=_share, default=0.5, metavar="SHARE",
                       help="the share of a submission's code found in another's from which similarity.html "
                            "lists the pair (default 0.5; 0 lists every pair, above 1 none)")


def _share(text: str) -> float:
    """``--similarity``: a finite number of 0 or more (a share; above 1 lists no pair).

    Raises:
        argparse.ArgumentTypeError: anything else.
    """
    import math
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a share of 0 or more (e.g. 0.5)")
    return value


def _refuse_links(out: Path) -> None:
    """Refuse an output folder that is, or holds where the grader writes, a symbolic link or a
    special file: a learner's folder named like ``--out`` in the class folder made root write
    every report through links to where the learner chose (found by an attacker helper).

    Raises:
        GraderError: one of them is a link or not a regular file (or folder).
    """
    import stat
    from .history import HISTORY
    from .times import TIMES
    for path in (out, out / REPORTS, out / FEEDBACK, out / GRADEBOOK, out / SETTINGS, out / JUNIT, out / SUMMARY,
                 out / SUMMARY_HTML, out / HISTORY, out / TIMES, out / SIMILARITY_HTML):
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise GraderError(f"cannot use --out {str(out)!r}: {path}: {exc.strerror or exc}") from None
        if stat.S_ISLNK(st.st_mode) or not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
            raise GraderError(f"--out {str(out)!r}: {path} is a symbolic link or a special file; the grader "
                              "writes no output through one: give another --out")


def check_flags(args: argparse.Namespace, problem_id: str, assignment: str | None = None) -> list[str]:
    """The ``grader check`` flags that carry the check options of parsed ``grade`` ``args``.

    The options are read from :func:`grader._args.add_check_options` itself, so an option added
    there is forwarded without a change here. Only values that differ from ``check``'s defaults
    are written, and ``--problem`` is always ``problem_id``, or ``--assignment`` the file
    ``assignment`` (an absolute path) when it is given.
    """
    probe = argparse.ArgumentParser(add_help=False)
    add_check_options(probe)
    flags = ["--assignment", assignment] if assignment else ["--problem", problem_id]
    for action in probe._actions:  # argparse has no public list of a parser's options
        value = getattr(args, action.dest, action.default)
        if action.dest in ("problem", "assignment") or not action.option_strings or value is None \
                or value == action.default:
            continue
        flag = max(action.option_strings, key=len)
        if action.nargs == 0:  # store_true and the like
            flags.append(flag)
        else:
            for item in value if isinstance(value, list) else [value]:
                flags += [flag, str(item)]
    return flags


#: run by ``python -I -c``: put the grader's own folder (argv[1]) on sys.path if isolated mode
#: left it out (a checkout run with PYTHONPATH), then run the CLI on the remaining arguments
_BOOT = ("import sys; root = sys.argv.pop(1); "
         "root in sys.path or sys.path.insert(0, root); "
         "from grader.cli import main; sys.exit(main())")


def grader_command() -> list[str]:
    """The argv prefix that runs this grader's CLI in a new interpreter, safely in any folder.

    Python runs in isolated mode (``-I``): neither the working directory (where learners' files
    may be, e.g. an ``argparse.py``) nor a script's folder is put on ``sys.path``, and
    ``PYTHON*`` variables and the user's site-packages are ignored. The grader is imported from
    the folder this process imported it from, so both run the same code.
    """
    root = str(Path(__file__).resolve().parents[2])  # the folder that holds grader/
    return [sys.executable, "-I", "-c", _BOOT, root]


#: environment variables naming a folder that a check reads; made absolute for the checks,
#: which run in another working folder than the batch (``_Grader.start``)
PATH_VARIABLES = ("GRADER_PROBLEMS_DIR", "GRADER_CACHE_DIR", "GRADER_JAX_CACHE", "XDG_CACHE_HOME")


def check_environment(siblings: bool = True) -> dict[str, str]:
    """The environment of a check process: this one's, with :data:`PATH_VARIABLES` made absolute,
    and ``GRADER_SIBLINGS=0`` (``grader.check.SIBLINGS_ENV``) when ``siblings`` is false: a file
    among other learners' files imports none of theirs."""
    env = dict(os.environ)
    for name in PATH_VARIABLES:
        if env.get(name):
            env[name] = absolute_path(env[name])
    if not siblings:
        env["GRADER_SIBLINGS"] = "0"
    return env


def _die_with_parent() -> Callable[[], None]:
    """A ``preexec_fn`` that makes the check die (SIGKILL) if the batch process dies first."""
    parent = os.getpid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        prctl = None

    def preexec() -> None:
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the batch died between fork and prctl
            os._exit(1)

    return preexec


@dataclass
class _Job:
    sub: Submission
    proc: subprocess.Popen[bytes]
    started: float
    deadline: float
    stderr: IO[bytes]
    killed: bool = False
    slot: int | None = None   # this user's check slot, held for the check (``_Grader.start``)


def _kill(job: _Job) -> None:
    """SIGKILL the job's process group (its session) and reap it."""
    if hasattr(job.proc, "kill_group"):     # forked by the batch's fork server, which reaps it
        job.proc.kill_group()
    else:
        try:
            os.killpg(job.proc.pid, signal.SIGKILL)
        except OSError:
            pass
    job.proc.wait()


def _stderr_tail(job: _Job) -> list[str]:
    job.stderr.seek(0, os.SEEK_END)
    size = job.stderr.tell()
    job.stderr.seek(max(0, size - STDERR_TAIL))
    text = job.stderr.read().decode("utf-8", errors="replace")
    job.stderr.close()
    return [line for line in text.splitlines() if line.strip()][-20:]


#: what a check that could not run for want of processes, threads or memory says on stderr
_SPENT_WORDS = (b"can't start new thread", b"Resource temporarily unavailable", b"Cannot allocate memory",
                b"[Errno 11]", b"[Errno 12]", b"pthread_create() failed")


def _spent(job: _Job) -> bool:
    """Whether the ended check ``job`` (exit 2, or killed by SIGABRT) could not run for want of
    processes, threads or memory: its submission's process (``grader.runner.RESOURCES_SPENT``),
    its own threads (the plan's thread pool: "can't start new thread", attack round 58) or the
    reference's XLA, which aborts the grader when it cannot start a thread (round 60). The
    machine's state, which another learner's check may have caused, not this learner's file
    (the grader's own stderr: a learner's prints go to its report, never there)."""
    from ..runner import RESOURCES_SPENT
    job.stderr.seek(0, os.SEEK_END)
    job.stderr.seek(max(0, job.stderr.tell() - STDERR_TAIL))
    tail = job.stderr.read()
    return any(w in tail for w in (RESOURCES_SPENT.encode(), *_SPENT_WORDS))


#: how often a check that could not start for want of processes or memory (EAGAIN, ENOMEM) is
#: started again, after another check ends or, with none running, after RETRY_PAUSE seconds times
#: the attempt, before its learner's row says it could not be graded
START_RETRIES = 5
RETRY_PAUSE = 2.0


class _Grader:
    """Runs the checks of one batch, ``jobs`` at a time, and turns each into a row."""

    def __init__(self, args: argparse.Namespace, problem: Any, out: Path, hard_timeout: float) -> None:
        from ..isolation import neutral_folder

        self.args, self.problem, self.out = args, problem, out
        forwarded = argparse.Namespace(**vars(args))  # paths made absolute: checks run elsewhere
        if getattr(forwarded, "problems_dir", None):
            forwarded.problems_dir = absolute_path(forwarded.problems_dir)
        if getattr(forwarded, "seed_secret", None):
            forwarded.seed_secret = absolute_path(forwarded.seed_secret)
        path = getattr(problem, "path", None) if hasattr(problem, "parts") else None
        self.flags = check_flags(forwarded, problem.id, absolute_path(path) if path is not None else None)
        self.hard_timeout = hard_timeout
        self.preexec = _die_with_parent()
        self.cwd = neutral_folder()
        self.server: Any = None
        self.chosen: dict[str, Submission] = {}  # learner -> their submission, its file chosen
        #: where every check's process is this user (:func:`_shared_budget_tier`): the batch takes
        #: the user's one check slot before each check, so that its hard limit starts once the
        #: check may run (attack round 49: a check that waited behind other shards' slow ones was
        #: killed at the hard limit, its learner's row a crash 0/10)
        self.slot_tier = _shared_budget_tier(getattr(args, "sandbox", "auto"))

    def _start_server(self) -> None:
        """The batch's fork server (``grader.forkserver.BatchServer``), warmed for its checks'
        flags; none with ``GRADER_FORKSERVER=0`` or when it cannot start (each check is then a
        process of its own, as before)."""
        from ..forkserver import FORKSERVER_ENV, BatchServer
        if os.environ.get(FORKSERVER_ENV, "1") == "0":
            return
        try:
            self.server = BatchServer(self.flags, self.cwd, check_environment(), self.preexec)
        except OSError:
            self.server = None

    def start(self, sub: Submission) -> _Job:
        """Start the check of ``sub`` (which has a file) in a neutral working folder (an empty
        folder of the batch's: the batch's own may be the class folder, whose files a library
        could read as configuration), given the file's absolute path and, with ``--shown``, the
        path as it was found, which its report and row show."""
        assert sub.path is not None
        target = report_path(self.out, sub.learner)
        target.unlink(missing_ok=True)  # a stale report must never stand in for this run's
        shown = str(sub.path)
        if shown.startswith("-"):
            shown = os.path.join(".", shown)
        argv = [*grader_command(), "check", anchored(sub), f"--shown={shown}", "--format", "json",
                "--output", absolute_path(target), *self.flags]
        err = tempfile.TemporaryFile()
        # the file's real path must be the anchored one: no folder on the way swapped for a link
        env = {**check_environment(sub.siblings), "GRADER_STRICT_PATHS": "1"}
        slot = wait_user_slot(self.slot_tier) if self.slot_tier else None
        if slot is not None and slot >= 0:
            env[SLOT_HELD_ENV] = "1"      # the check does not wait for the slot its batch holds
        now = time.monotonic()
        proc: Any = None
        if self.server is not None:   # a fork of the warm grader: the same check, without its start-up
            try:
                with open(os.devnull, "r+b") as null:
                    proc = self.server.start(argv[len(grader_command()):], env, self.cwd,
                                             [null.fileno(), null.fileno(), err.fileno()])
            except OSError:
                proc = None
        if proc is None:
            try:
                proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                        cwd=self.cwd, start_new_session=True, preexec_fn=self.preexec, env=env)
            except BaseException:
                release_user_slot(slot)
                raise
        return _Job(sub, proc, now, now + self.hard_timeout, err, slot=slot)

    def finish(self, job: _Job) -> Row:
        """The row of a job whose process has ended; writes a placeholder report if it wrote none."""
        release_user_slot(job.slot)
        job.slot = None
        seconds = time.monotonic() - job.started
        target = report_path(self.out, job.sub.learner)
        tail = _stderr_tail(job)
        code = job.proc.returncode
        note = job.sub.note
        if not job.killed and code in (0, 1):
            try:
                return Row.of_report(job.sub.learner, load_report(add_note(target, note)), seconds, note)
            except (OSError, ValueError, KeyError, TypeError):
                pass
        if job.killed:
            why = f"was stopped at the hard limit of {self.hard_timeout:g} s"
        elif code is not None and code < 0:
            why = f"was killed by signal {signal.Signals(-code).name if -code in signal.valid_signals() else -code}"
        elif code == 2:
            why = "could not grade this submission (exit 2)"
        else:
            why = f"exited with code {code}"
        last = next((line for line in reversed(tail) if line.startswith("grader:")), tail[-1] if tail else "")
        message = f"the grader's check process {why} and wrote no report" + (f": {last}" if last else "")
        failure = Failure(kind="crash", message=message, hint="the rest of the class was graded; see details for the "
                                                 "grader's stderr", details=tail)
        report = placeholder_report(self.problem, job.sub.shown, failure, seconds)
        if note:  # written here: no need to read it back to add the note (as for a check's report)
            report.environment["discovery_note"] = note
        write_report(target, report, self.args.audience)
        return Row.of_report(job.sub.learner, report, seconds, note)

    def no_file(self, sub: Submission) -> Row:
        """The row (and report) of a learner's folder with no identifiable submission."""
        # nothing submitted (a roster learner of whom nothing was found, an empty folder) is kind
        # "missing", never a failure of code; files of which none is the submission are "import"
        failure = Failure(kind="missing" if sub.missing else "import", message=sub.note or "no submission found",
                          hint=f"submit one .py file or .ipynb notebook that defines {' and '.join(self.problem.functions)}")
        report = placeholder_report(self.problem, sub.shown, failure, 0.0)
        write_report(report_path(self.out, sub.learner), report, self.args.audience)
        return Row.of_report(sub.learner, report, 0.0)

    def fault(self, sub: Submission, exc: BaseException, seconds: float = 0.0) -> Row:
        """The row (and placeholder report) of a learner whose check the grader could not start
        or whose outcome it could not read (``exc``): that learner's row, never the batch.

        Raises:
            GraderError: not even the placeholder report can be written (the output folder is
                broken: nobody's row could be).
        """
        from ..reports.common import printable
        what = printable(f"{type(exc).__name__}: {exc}", one_line=True)[:500]
        failure = Failure(kind="crash", message=f"the grader could not check this submission ({what})",
                          hint="the rest of the class was graded; grade this learner again "
                               "(delete their report and run grader grade --resume)")
        report = placeholder_report(self.problem, sub.shown, failure, seconds)
        if sub.note:
            report.environment["discovery_note"] = sub.note
        write_report(report_path(self.out, sub.learner), report, self.args.audience)
        return Row.of_report(sub.learner, report, seconds, sub.note)

    def run(self, todo: list[Submission], jobs: int, emit: Callable[[Row], None],
            keep: Callable[[Submission], bool] | None = None) -> None:
        """Grade ``todo``, ``jobs`` at a time, calling ``emit`` with each row as soon as it is known;
        a learner for whom ``keep`` (given their chosen file) says True is not graded (``--resume``:
        their row stands).

        A learner's file is chosen (:func:`choose`, within the discovery budget) when their turn
        comes, so a learner's folder costs at most its budget before the next check starts. An
        exception while choosing, starting a check or reading its outcome costs only that
        learner's row (:meth:`fault`): the others are graded, and the batch's outputs written.
        """
        from ..processes import reap_orphans
        from ..runner import SPENT_ERRNOS

        pending = list(reversed(todo))
        running: list[_Job] = []
        retried: dict[str, int] = {}   # learners whose check could not start for want of processes
        # ... each waiting, until another check has ended (or, with none running, a pause), to be
        # started again: started again at once, six tries took 0.3 s while the learner who held
        # the processes held them 30 s (attack round 58)
        deferred: list[Submission] = []
        if todo:
            self._start_server()
        try:
            while pending or running or deferred:
                if deferred and not running and not pending:
                    time.sleep(RETRY_PAUSE * max(retried.get(d.learner, 1) for d in deferred))
                    pending.extend(reversed(deferred))
                    deferred.clear()
                while pending and len(running) < jobs:
                    sub = pending.pop()
                    try:
                        sub = choose(sub, self.problem.functions)
                        self.chosen[sub.learner] = sub
                        if keep is not None and keep(sub):
                            continue
                        if sub.path is None:
                            emit(self.no_file(sub))
                        else:
                            running.append(self.start(sub))
                    except GraderError:
                        raise  # a report cannot be written: the output folder, not the learner
                    except OSError as exc:
                        if exc.errno in SPENT_ERRNOS and retried.get(sub.learner, 0) < START_RETRIES:
                            # the user's processes or memory are spent, perhaps by another learner's
                            # check (its threads count against the user's limit): this learner waits
                            # for a check to end, not a crash row (attack round 57: three correct
                            # files 0/10 beside one that held every free thread)
                            retried[sub.learner] = retried.get(sub.learner, 0) + 1
                            deferred.append(sub)
                            break
                        emit(self.fault(sub, exc))
                    except Exception as exc:  # noqa: BLE001 - one learner's row, never the batch
                        emit(self.fault(sub, exc))
                if not running:
                    continue
                time.sleep(POLL_SECONDS)
                still = []
                for job in running:
                    if job.proc.poll() is None and time.monotonic() > job.deadline:
                        job.killed = True
                        _kill(job)
                    if job.proc.returncode is None:
                        still.append(job)
                        continue
                    # the check's own children (its submission process) are ours once it is gone
                    reap_orphans(keep={j.proc.pid for j in running if j.proc.returncode is None})
                    if not job.killed and job.proc.returncode in (2, -signal.SIGABRT) and _spent(job) \
                            and retried.get(job.sub.learner, 0) < START_RETRIES:
                        # it started, but its submission's process (or its own threads) could not:
                        # again, once another check has ended
                        retried[job.sub.learner] = retried.get(job.sub.learner, 0) + 1
                        release_user_slot(job.slot)
                        job.slot = None
                        job.stderr.close()
                        deferred.append(job.sub)
                        continue
                    if deferred:   # a check ended: what it held is free for those waiting
                        pending.extend(reversed(deferred))
                        deferred.clear()
                    try:
                        row = self.finish(job)
                    except GraderError:
                        raise
                    except Exception as exc:  # noqa: BLE001 - one learner's row, never the batch
                        row = self.fault(job.sub, exc, time.monotonic() - job.started)
                    emit(row)
                running = still
        finally:
            for job in running:
                _kill(job)
                release_user_slot(job.slot)
                job.stderr.close()
            if self.server is not None:
                self.server.close()
                self.server = None
            reap_orphans()


class _Progress:
    """A tqdm bar on a terminal; otherwise one plain line per finished submission (CI logs)."""

    def __init__(self, total: int, stream: IO[str] | None = None) -> None:
        self.stream: IO[str] | None = stream or sys.stderr
        self.total, self.done = total, 0
        self.bar = None
        if total and sys.stderr.isatty() and self.stream is sys.stderr:
            from tqdm import tqdm
            tqdm.monitor_interval = 0  # no monitor thread: the batch forks checks with a preexec_fn
            self.bar = tqdm(total=total, unit="sub", file=self.stream, dynamic_ncols=True)

    def row(self, row: Row) -> None:
        from ..reports.common import points, printable
        self.done += 1
        verdict = "passed" if row.passed else "no submission" if row.message.startswith("no submission") \
            else "failed " + ",".join(row.kinds)
        text = printable(f"{row.learner}: {verdict} {points(row.score)}/{points(row.max_score)} "
                         f"in {row.seconds:.1f} s", one_line=True)
        if self.bar is not None:
            if row.message.startswith("could not be graded:"):  # the postfix is gone at the next row
                self.bar.write(printable(f"{row.learner}: could not be graded (see its report)", one_line=True),
                               file=sys.stderr)
            self.bar.set_postfix_str(text[:60], refresh=False)
            self.bar.update(1)
        elif self.stream is not None:
            try:
                self.stream.write(f"[{self.done}/{self.total}] {text}\n")
                self.stream.flush()
            except OSError:  # a closed log pipe must not stop the grading
                self.stream = None

    def more(self, count: int = 1) -> None:
        """``count`` more rows to come than the total said (a kept row graded again)."""
        self.total += count
        if self.bar is not None:
            self.bar.total = self.total
            self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _functions_defined(sub: Submission, names: frozenset[str]) -> set[str]:
    """Which of ``names`` the learner's file defines (for choosing the problem by votes): the
    file :func:`choose` picks within the discovery budget, read once more and parsed only if
    one of the names occurs in it. A file that does not parse still names its functions (a
    tolerant scan): its learner gets a failed row with the SyntaxError, not a batch that cannot
    choose its problem."""
    from ..submission import functions_of, load_submission, names_in

    sub = choose(sub, names)
    if sub.path is None:
        return set()
    try:
        loaded = load_submission(sub.path, parse_if=lambda source: names_in(source, names))
    except GraderError:
        return set()
    return functions_of(loaded.tree, loaded.source) & names


def _problem(args: argparse.Namespace) -> Any:
    """The problem a batch grades: ``--problem``, the only one known, or the one whose function
    most of the submissions under ``args.paths`` define (a class hands in one exercise). Each
    learner's file is chosen within the discovery budget (:func:`choose`), files that name no
    problem's function are not parsed, and the count stops once the learners left cannot
    change who wins.

    Raises:
        GraderError: an unknown problem, no problem at all, bad paths, or submissions that name
            no known problem's function or as many of one as of another (then ``--problem``).
    """
    from ..flags import note_replaced
    from ..spec import available_problems, find_problem, load_all, load_problem

    note_replaced(args.problems_dir)   # as check says it: a spec of --problems-dir replacing a bundled one
    if getattr(args, "assignment", None):
        from ..assignment import load_assignment
        if args.problem:
            raise GraderError("give --problem or --assignment, not both")
        return load_assignment(args.assignment, args.problems_dir)
    if args.problem:
        return load_problem(find_problem(args.problem, args.problems_dir))
    known = available_problems(args.problems_dir)
    if len(known) == 1:
        return load_problem(next(iter(known.values())))
    if not known:
        raise GraderError("no problem specs found; pass --problems-dir DIR")
    problems = list(load_all(args.problems_dir)[0].values())  # a broken spec is not a candidate
    if not problems:
        raise GraderError(f"no problem spec loads ({', '.join(known)}); run grader problems to see why")
    votes = {p.id: 0 for p in problems}
    names = frozenset(p.function for p in problems)
    learners = enumerate_learners(args.paths)
    for i, sub in enumerate(learners):
        defined = _functions_defined(sub, names)
        for p in problems:
            votes[p.id] += p.function in defined
        # stop once the learners left cannot change the outcome (a class hands in one exercise)
        top = sorted(votes.values(), reverse=True) + [0]
        if top[0] > top[1] + (len(learners) - i - 1):
            break
    ranked = sorted(votes.items(), key=lambda kv: -kv[1])
    if ranked[0][1] > 0 and (len(ranked) == 1 or ranked[0][1] > ranked[1][1]):
        return next(p for p in problems if p.id == ranked[0][0])
    raise GraderError(f"several problems are known ({', '.join(known)}) and the submissions do not tell "
                      "which one this class hands in; pass --problem ID")


def _shared_budget_tier(request: str) -> str | None:
    """The sandbox tier ``request`` gives when every learner's process in it would be this user
    outside any user namespace (``sandbox_user.shares_user_budget``: the ``rlimits`` tier of a
    grader that is not root), else None."""
    from ..sandbox_user import shares_user_budget
    if os.geteuid() == 0:
        return None
    try:
        from ..sandbox import choose_tier
        tier, _ = choose_tier(request or "auto")
    except GraderError:
        return None   # the checks say why they cannot run
    return tier if shares_user_budget(tier) else None


def _jobs_for_tier(jobs: int, request: str) -> int:
    """``jobs``, or 1 where the learners' processes would all be this user outside any user
    namespace (:func:`_shared_budget_tier`): there every learner's threads and processes count
    against one per-user budget (RLIMIT_NPROC), which one learner could fill to make the others'
    correct JAX files abort in their first call (attack round 46: 0/10 for four correct files
    beside it). Said on stderr when it lowers them."""
    if jobs <= 1:
        return jobs
    tier = _shared_budget_tier(request)
    if tier is None:
        return jobs
    sys.stderr.write(f"grader: note: one learner at a time, not {jobs}: in the {tier} sandbox tier every "
                     "learner's process is this user, and one learner's threads would count against the "
                     "others' (a namespace tier, bubblewrap or unshare, grades several at once)\n")
    return 1


def cores() -> int:
    """The number of cores this process may run on (the default ``--jobs``)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


class _Interrupted(KeyboardInterrupt):
    """Raised in the batch process by SIGTERM, so running checks are killed on the way out."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise _Interrupted()


class _Unchanged:
    """Whether a learner's kept row (``--resume``) still stands: the digest its report records of
    the files it graded (``environment.submission_sha256``, :func:`grader.check.submission_digest`)
    is that of the learner's files now. A report that records none (an older grader's, or a
    placeholder of a check that could not run) does not stand either. Each learner graded again
    is named on stderr with why."""

    def __init__(self, out: Path, kept: dict[str, Row], take_siblings: bool) -> None:
        self.out, self.kept, self.take_siblings = out, kept, take_siblings

    def recorded(self, learner: str) -> str | None:
        """The digest the learner's report records, or None."""
        try:
            value = load_report(report_path(self.out, learner)).environment.get("submission_sha256")
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return value if isinstance(value, str) and value else None

    def __call__(self, sub: Submission) -> bool:
        from ..submission import current_digest
        from ..reports.common import printable

        recorded = self.recorded(sub.learner)
        if sub.path is None:  # no file to grade (now or then): its row is made again at once
            return False
        try:
            now = current_digest(sub.path, self.take_siblings and sub.siblings)
        except Exception:  # noqa: BLE001 - unreadable now: its check says why
            now = None
        if recorded is not None and now == recorded:
            return True
        why = ("its report records no digest of the files it graded" if recorded is None
               else "the submission changed since it was graded")
        sys.stderr.write(printable(f"grader: note: grading {sub.learner} again: {why}", one_line=True) + "\n")
        return False


#: what ``grader grade`` says, once, when no seed secret is given (round four, class 7)
NO_SECRET_NOTE = ("grader: note: no seed secret: the cases come from a seed printed in every report, so a learner "
                  "who runs the grader once can tabulate them and their answers; for a graded run give "
                  "--seed-secret FILE or GRADER_SEED_SECRET (docs/security.md)\n")


def cmd_grade(args: argparse.Namespace) -> int:
    """``grader grade``: grade every submission under ``args.paths`` into ``args.out``.

    Returns 0 when every row of the gradebook passed, 1 otherwise.

    Raises:
        GraderError: bad paths, an unknown problem, an output folder that already holds a
            gradebook (without ``--resume``), ``--resume`` into a folder graded with other
            settings (its :data:`SETTINGS`; nothing of the folder is changed), or files that
            cannot be written.
    """
    from ..flags import seed_secret_of
    from ..processes import harden_grader_process

    # a bad secret (missing, empty, with --seed) is bad input: exit 2 before anyone is graded;
    # each check reads it again (the file path is forwarded, made absolute; the variable is inherited)
    secret, secret_source = seed_secret_of(args)
    if args.seed_secret is not None:
        args.seed_secret = os.path.abspath(args.seed_secret)
    problem = _problem(args)
    out = Path(args.out)
    # names only: each learner's file is chosen at their turn; the output folder is no learner
    subs = enumerate_learners(args.paths, exclude=[str(out)])
    strangers: list[str] | None = None   # None: no roster given
    if getattr(args, "roster", None):
        from .roster import with_roster
        subs, strangers = with_roster(subs, args.roster, args.key)
    if args.shard:
        subs = [s for s in subs if in_shard(s.learner, *args.shard)]
    book = out / GRADEBOOK
    if out.exists() and not out.is_dir():
        raise GraderError(f"--out {args.out!r} is a file; give a folder")
    _refuse_links(out)
    deadline = parse_deadline(args.deadline) if getattr(args, "deadline", None) else None
    for starter in getattr(args, "starter", None) or []:
        if not os.path.isfile(starter):
            raise GraderError(f"--starter {starter!r} is not a file")
    parts = len(getattr(problem, "parts", ())) or 1   # an assignment: one check per problem, each with its limit
    hard = args.hard_timeout or args.total_timeout * parts + HARD_TIMEOUT_MARGIN
    settings = grade_settings(args, problem, secret is not None, hard)
    # checked before anything is written: a refused resume leaves the folder as it was
    old_rows = [row for row in read_gradebook(book) if report_path(out, row.learner).is_file()] \
        if args.resume and book.exists() else []
    if args.resume and out.is_dir():
        recorded = read_settings(out)
        unrecorded = recorded is None and bool(old_rows)
        if unrecorded:  # written before the record: what its reports tell
            recorded = settings_of_reports(out, old_rows, settings)
        diff = settings_diff(recorded or {}, settings)
        if diff:
            raise GraderError(f"--out {args.out!r} was graded with other settings ({'; '.join(diff)}); resume "
                              "with the same settings, or give another --out")
        if unrecorded:
            sys.stderr.write(f"grader: note: --out {args.out!r} has no {SETTINGS} (an older grader's run); its "
                             "reports agree on the problem, grader version, seed and max-examples; its other "
                             "settings are taken to be this run's\n")
    if book.exists() and not args.resume:  # a new run: the previous one is kept, to say whose score changed
        kept_in = archive(out)
        sys.stderr.write(f"grader: note: --out {args.out!r} held a previous run: kept in {kept_in}; everyone is "
                         "graded again (--resume finishes a run instead)\n")
    try:
        (out / REPORTS).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise GraderError(f"cannot create --out {args.out!r}: {exc.strerror or exc}") from None
    write_settings(out, settings)
    if secret is None and getattr(args, "verbosity", 0) >= 0:   # once, when grading begins; not with -q
        sys.stderr.write(NO_SECRET_NOTE)

    columns = [p.problem.id for p in getattr(problem, "parts", ())]  # an assignment's per-problem columns
    kept: dict[str, Row] = {}
    if args.resume and book.exists():
        kept = {row.learner: row for row in old_rows}
        write_gradebook(book, kept.values(), columns)  # drops torn lines and rows whose report is gone
    todo = [s for s in subs if s.learner not in kept]
    jobs = _jobs_for_tier(args.jobs or cores(), getattr(args, "sandbox", "auto"))
    # the longest checks of the last run first, so that none of them ends the batch alone
    # (a class graded the first time: the JAX and PyTorch files first, whose children start slower)
    paths = {s.learner: s.path for s in subs}
    order = {name: i for i, name in enumerate(longest_first([s.learner for s in subs], out, old_rows,
                                                            lambda name: cost_guess(paths[name])))}
    subs = sorted(subs, key=lambda s: order[s.learner])
    # a kept row stands only while the learner's files are the ones it graded: checked at their turn
    unchanged = _Unchanged(out, kept, take_siblings=not getattr(args, "no_siblings", False)
                           and os.environ.get("GRADER_SIBLINGS", "1") != "0")
    # learners, not submissions: the last line counts the submissions and, apart, the learners who
    # sent none (an instructor read "grading 10 submissions", then "graded 8 submissions")
    sys.stderr.write(f"grader: grading {len(todo)} learner{'s' if len(todo) != 1 else ''} of {problem.id} "
                     f"with {jobs} job{'s' if jobs != 1 else ''} into {out}"
                     + (f" ({len(subs) - len(todo)} graded before: kept unless their files changed, which is "
                        "checked at their turn)" if len(subs) > len(todo) else "")
                     + (f"; seeds derived from the secret ({secret_source})" if secret_source else "") + "\n")
    harden_grader_process()  # adopt what a killed check leaves behind, so it can be reaped
    rows = dict(kept)
    appender = Appender(book, columns)
    progress = _Progress(len(todo))
    previous = signal.signal(signal.SIGTERM, _on_sigterm)

    written: dict[str, str] = {}

    def emit(row: Row) -> None:
        appender.append(row)
        rows[row.learner] = row
        progress.row(row)
        # the learner's feedback now, while the other checks run, not all at the end
        try:
            written[row.learner] = write_feedback(out, row.learner, load_report(report_path(out, row.learner)))
        except Exception:  # noqa: BLE001 - written again at the end, where a failure is said
            written.pop(row.learner, None)

    def keep(sub: Submission) -> bool:
        if sub.learner not in kept:
            return False
        if unchanged(sub):
            return True
        progress.more()  # graded again: one more row to come than the opening line said
        return False

    try:
        grader_ = _Grader(args, problem, out, hard)
        chosen = grader_.chosen
        grader_.run(subs, jobs, emit, keep)  # kept learners: keep() decides
    finally:
        signal.signal(signal.SIGTERM, previous)
        progress.close()
        appender.close()
    final = list(rows.values())
    record_times(out, [chosen.get(s.learner, s) for s in subs], deadline, args.paths, not_on_roster=strangers)
    reports = write_outputs(out, final, args.audience, starters=getattr(args, "starter", None) or [],
                            threshold=getattr(args, "similarity", 0.5),
                            sources={s.learner: s.path for s in chosen.values() if s.path is not None},
                            helpers={s.learner for s in chosen.values() if s.path is not None and s.siblings},
                            written=written)
    print(f"graded {tally(final, reports)}; {book}")
    return EXIT_PASSED if all(r.passed for r in final) else EXIT_FAILED


class _GraderLinesOnly(io.TextIOBase):
    """A stderr for ``grade -q``: whole lines that start with ``grader: `` (notes, warnings,
    errors) go through to ``target``; progress lines and the opening line do not."""

    def __init__(self, target: Any) -> None:
        self.target, self.pending = target, ""

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:  # no progress bar either
        return False

    def write(self, text: str) -> int:
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        for line in lines:
            if line.startswith("grader: ") and not line.startswith("grader: grading "):
                self.target.write(line + "\n")
        return len(text)

    def flush(self) -> None:
        self.target.flush()


def cmd_grade_for_terminal(args: argparse.Namespace, grade: Callable[[argparse.Namespace], int]) -> int:
    """``grader grade`` with ``-q``/``-v``: ``grade`` (:func:`cmd_grade`) run with only
    ``grader:`` lines on stderr for ``-q``, and followed for ``-v`` by each learner's verdict line and
    failing cases (the text report's ``-q`` form of ``reports/<name>.json``), coloured on a TTY."""
    from ..reports import text

    if args.verbosity < 0:
        with contextlib.redirect_stderr(_GraderLinesOnly(sys.stderr)):
            return grade(args)
    code = grade(args)
    if args.verbosity > 0:
        out = Path(args.out)
        color, width = text.color_wanted(sys.stdout), text.terminal_width(sys.stdout)
        for row in read_gradebook(out / GRADEBOOK):
            report = load_report(report_path(out, row.learner))
            sys.stdout.write(text.render(report, audience=args.audience, color=color, width=width,
                                         verbosity=text.QUIET))
        sys.stdout.flush()
    return code


HANDLERS = {"grade": cmd_grade}
