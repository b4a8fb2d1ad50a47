"""Shared fixtures: paths, and a helper that runs the grader CLI as a learner or CI would.

``run_grader`` (and the ``grader`` fixture) starts a real ``python -m grader`` process by default.
In a test marked ``@pytest.mark.cli_in_process`` (or a module with that ``pytestmark``) it runs
``grader.cli.main`` in this process instead (:func:`main_in_process`), which saves the grader's
start-up (Python, NumPy and, for a reference, JAX: 1-2 CPU-s) per call; the submission runs in its
sandboxed child either way. A module opts in when its calls check the CLI's logic (findings, exit
codes, reports); ``@pytest.mark.subprocess`` on a test of such a module gives it a real process
again, for what lives in a process of its own: signals and exit on kill, ``-I`` and
``sys.path``, what reaches file descriptors 1 and 2 (a child's prints), a first import
(matplotlib's configuration), ``/proc/<pid>/environ``, or a template's command line. In-process
is not the default everywhere: with every module in process the xdist workers grew past 7 GiB
(388c35f)."""
from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

# one BLAS thread in the test processes, as in the submission's child (runner.child_environment):
# a verdict judged in process (grade_function_in_process) then sums in the same order as there
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
# two malloc arenas per process: a worker's threads (the validations' mistakes, the corpus's
# thread pool) otherwise each kept an arena of freed JAX and NumPy memory, and with the bundled
# validations and the CLI in process a worker reached 7 GiB and was OOM-killed on a shared 24 GiB
# machine (release_memory below gives the freed memory back)
os.environ.setdefault("MALLOC_ARENA_MAX", "2")

ROOT = Path(__file__).resolve().parent.parent

# One cache folder for the whole session (never the user's ~/.cache): cases, expected values
# and JAX compilations made by one test are reused by the next, as on a learner's machine.
# Made by the process that imports this first (pytest's controller; its xdist workers inherit
# the variable) and removed when that process exits: each run used to leave one in /tmp per
# worker, tens of MB each.
# a grader serve the developer left running must not answer the suite's checks: only
# tests/test_serve.py asks one, its own, with GRADER_SERVE=1 and its own socket
os.environ["GRADER_SERVE"] = "0"

if "GRADER_CACHE_DIR" not in os.environ:
    os.environ["GRADER_CACHE_DIR"] = tempfile.mkdtemp(prefix="grader-test-cache-")
    atexit.register(shutil.rmtree, os.environ["GRADER_CACHE_DIR"], True)
# JAX imported the grader's way (``grader.reference.import_jax``: XLA's cheaper compile,
# ``processes.CHEAP_COMPILE``, which the reference runs and the submission's child use) before
# any test module imports it: XLA reads its flags once, when its CPU backend starts, and a test
# module that imported JAX first (test_no_global_state.py, at collection) left every in-process
# reference of the worker compiling with LLVM's full optimisation: gelu's validation 18.2 ->
# 30.1 CPU-s, other values than the product's in the last ULP of exp, tanh, log1p
from grader.reference import import_jax  # noqa: E402

import_jax()
SUBMISSIONS = ROOT / "submissions"
PROBLEMS = ROOT / "problems"


@dataclass
class Run:
    """One finished CLI run: exit code, stdout and stderr text."""

    code: int
    stdout: str
    stderr: str

    def json(self) -> dict:
        return json.loads(self.stdout)


def run_grader(*args: str, timeout: float = 180, cwd: Path | None = None, env: dict | None = None,
               process: bool | None = None) -> Run:
    """Run the grader CLI with ``ARGS`` and return its :class:`Run` (exit code, stdout, stderr).

    By default ``python -m grader ARGS`` in a new process. ``process=False`` runs it in this
    process instead (:func:`main_in_process`: ``grader.cli.main`` with its own streams, working
    folder and environment); the submission still runs in its sandboxed child. In-process was
    the default for a while: it saved about 20 of 1,000 CPU-s of the suite, and each xdist
    worker grew past 7 GiB of memory (JAX's compilations and the imports of every run kept in
    one process), which a 2-core CI machine with 24 GiB could not hold. A test marked
    ``@pytest.mark.subprocess`` always gets a real process (signals, exit on kill, ``-I`` and
    ``sys.path``, what reaches file descriptors 1 and 2, a template's command line)."""
    if process is None:
        process = not _CLI_IN_PROCESS[0]
    if not process:
        return main_in_process(*args, cwd=cwd, env=env)
    full_env = dict(os.environ)
    full_env.update(env or {})
    proc = subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd or ROOT, env=full_env, stdin=subprocess.DEVNULL)
    return Run(proc.returncode, proc.stdout, proc.stderr)


#: whether the running test is marked ``subprocess`` (set by :func:`_real_process_when_marked`)
_REAL_PROCESS = [False]
#: whether run_grader's default is in process for the running test: marked ``cli_in_process``
#: and not ``subprocess`` (set by :func:`_real_process_when_marked`)
_CLI_IN_PROCESS = [False]
#: one in-process CLI run at a time: the streams, working folder and environment are the process's
_IN_PROCESS = threading.Lock()


def main_in_process(*args: str, cwd: Path | None = None, env: dict | None = None) -> Run:
    """``grader ARGS`` as ``grader.cli.main`` in this process, as a new grader would run it: the
    working folder ``cwd`` (the repository by default), ``env`` added to the environment, stdin
    empty, stdout and stderr captured (as text over bytes, so ``.buffer`` writes are caught too),
    an argparse exit taken as the exit code. Everything is put back afterwards: the environment
    (every variable, whatever the CLI set), the working folder, the streams, the warning filters,
    and the process's registry of the grader's children (``REGISTRY.soften``). Calls from
    several threads run one after the other."""
    import io
    import warnings

    from grader import checkers, cleanup, cli, flags, hints, reference
    from grader.processes import REGISTRY

    #: what a grader does once per process (say a spec replaces a bundled one; sweep the temp
    #: folder of dead graders' leftovers): empty for each run, as in a new grader, then put back
    once = (flags._said_replaced, cleanup._swept)
    #: modules a grader imports once per process, by path (references and oracles, checkers, hint
    #: modules): a test's own files (under its tmp_path, perhaps rewritten since) are imported
    #: afresh, as a new grader would; the repository's own stay loaded (their JAX compilations too)
    imported = (reference._loaded, checkers._LOADED, hints._LOADED)
    with _IN_PROCESS:
        saved_once = [set(s) for s in once]
        for s in once:
            s.clear()
        saved_imported = [dict(d) for d in imported]
        for d in imported:
            for key in [k for k in d if not _the_repositorys(k)]:
                del d[key]
        saved_env = dict(os.environ)
        here = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
        streams = sys.stdin, sys.stdout, sys.stderr
        out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
        err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
        try:
            os.environ.update(env or {})
            os.chdir(cwd or ROOT)
            sys.stdin, sys.stdout, sys.stderr = io.StringIO(), out, err
            with warnings.catch_warnings():
                try:
                    code = cli.main([str(a) for a in args])
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            out.flush()
            err.flush()
            return Run(code, out.buffer.getvalue().decode("utf-8", "replace"),
                       err.buffer.getvalue().decode("utf-8", "replace"))
        finally:
            sys.stdin, sys.stdout, sys.stderr = streams
            os.fchdir(here)
            os.close(here)
            os.environ.clear()
            os.environ.update(saved_env)
            for s, saved in zip(once, saved_once):
                s.clear()
                s.update(saved)
            for d, saved in zip(imported, saved_imported):
                d.clear()
                d.update(saved)
            REGISTRY.soften()


def _the_repositorys(key) -> bool:
    """Whether an import memo's key (a path, a (path, function) pair, or a bundled hint name) is
    one of this repository's files, or no path at all."""
    path = str(key[0] if isinstance(key, tuple) else key)
    return not path.startswith("/") or path.startswith(str(ROOT) + "/")


def release_memory() -> None:
    """Give this process's freed memory back: JAX's compilations (each reference compiled op by op
    for every case shape and dtype; a later test compiles what it needs again), unreachable
    objects, and the free pages of malloc's arenas (``malloc_trim``). Called after each test
    module and each bundled validation, so that a worker's size stays that of one module's
    work rather than the sum of all it ran."""
    import ctypes
    import gc

    if "jax" in sys.modules:
        sys.modules["jax"].clear_caches()
    gc.collect()
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (AttributeError, OSError):      # not glibc
        pass


@pytest.fixture(scope="module", autouse=True)
def _release_memory_after_the_module():
    """:func:`release_memory` once a test module's tests have run on this worker."""
    yield
    release_memory()


@pytest.fixture(autouse=True)
def _real_process_when_marked(request):
    """:func:`run_grader` runs the CLI in process in tests marked ``cli_in_process``, unless
    they are also marked ``subprocess``."""
    _REAL_PROCESS[0] = request.node.get_closest_marker("subprocess") is not None
    _CLI_IN_PROCESS[0] = not _REAL_PROCESS[0] and request.node.get_closest_marker("cli_in_process") is not None
    yield
    _REAL_PROCESS[0] = _CLI_IN_PROCESS[0] = False


def pytest_configure(config):
    config.addinivalue_line("markers", "subprocess: run_grader starts a real `python -m grader` process "
                                       "(signals, exit on kill, -I, file descriptors, templates) instead "
                                       "of grader.cli.main in this process")
    config.addinivalue_line("markers", "cli_in_process: run_grader runs grader.cli.main in this process by "
                                       "default (the submission still in its sandboxed child)")


@pytest.fixture
def grader():
    """The :func:`run_grader` helper."""
    return run_grader


@pytest.fixture(autouse=True)
def _unharden_the_test_process():
    """A test that runs ``grader check`` or ``grade`` in process (``cli.main``) lets the CLI make
    the test worker the grader's own (``processes.REGISTRY.harden``: a child subreaper whose
    every child counts as the grader's). Undo it after the test, so that a later test in the same
    worker sees a library caller's process, as a notebook kernel is."""
    yield
    from grader.processes import REGISTRY
    REGISTRY.soften()


def check_like_cli(*args: str) -> tuple[int, dict]:
    """``grader check ARGS --format json`` without a new grader process: the CLI's own parser
    and option mapping (``cli.build_parser``, ``flags.options_from_args``), then
    ``check_submission`` in this process (the submission still runs in its sandboxed child) and
    the JSON reporter. Returns the exit code the CLI gives for that report (0 passed, 1 failed)
    and the report as ``--format json`` writes it. Saves the grader's start-up (Python, NumPy,
    JAX, about 2-3 s of CPU) per check; the CLI's own contracts are tested through a process in
    test_cli.py and test_corpus_verdicts.py's default runs.
    """
    from grader.check import check_submission

    parsed, problem, opts = _as_cli_parses("check", *args)
    return _as_cli_reports(check_submission(parsed.submission, problem, opts), parsed)


def _as_cli_parses(*argv: str):
    """``argv`` parsed by the CLI's own parser: the namespace, the problem and the CheckOptions."""
    from grader import cli, flags
    from grader.spec import find_problem, load_problem

    parsed = cli.build_parser().parse_args(list(argv))
    return parsed, load_problem(find_problem(parsed.problem, parsed.problems_dir)), flags.options_from_args(parsed)


def _as_cli_reports(report, parsed) -> tuple[int, dict]:
    """The exit code ``grader check`` gives for ``report`` and the report as ``--format json`` writes it."""
    from grader.reports import json_report

    return (0 if report.passed else 1), json.loads(json_report.render(report, audience=parsed.audience))


#: kinds only the sandboxed child can give (a limit, a death, an import): files expected to fail
#: so are graded there, never in process
CHILD_KINDS = frozenset({"timeout", "crash", "memory", "import"})


def judged_in_process(path: str | Path, kinds) -> bool:
    """Whether a corpus file's verdict may be tested in process (:func:`grade_function_in_process`):
    a NumPy or JAX function (its inputs converted as the child converts them,
    ``grader.run.inprocess.framework_call``) that changes no JAX setting at import, whose
    expected failure ``kinds`` are the judge's, not the child's. torch files go through the
    child (tests/test_frameworks.py)."""
    text = Path(path).read_text()
    return "torch" not in text and "config.update" not in text and not set(kinds) & CHILD_KINDS


def grade_function_in_process(path: str | Path, *args: str) -> tuple[int, dict] | None:
    """``grader check PATH ARGS --format json`` with the function run in this process: the CLI's
    parser and options and the same plan, judge and report (``grader.grading.grade``), but
    ``grader.run.inprocess.InProcessExecutor`` instead of the sandboxed child. For the verdicts
    of trusted files (the project's own corpus of NumPy and JAX functions, converted as the child
    converts them: ``grader.run.inprocess.for_file``): what the child adds (isolation, limits) is
    tested by the subprocess tests.

    Returns None when the file cannot be imported here or lacks the function (the caller grades
    it through the child instead, as such a file's failure is the child's to report). The
    report's ``environment.sandbox`` is ``"none"``.
    """
    from grader.check import grade_plan
    from grader.plan import make_plan
    from grader.run.inprocess import for_file

    parsed, problem, opts = _as_cli_parses("check", str(path), *args)
    plan = make_plan(parsed.submission, problem, opts, lambda request: ("none", None))
    executor = for_file(path, problem.function, plan.framework)
    if executor.fn is None:   # it does not import here or lacks the function: graded through the child
        return None
    return _as_cli_reports(grade_plan(plan, executor), parsed)


#: tests spread one by one across the xdist workers (``--dist loadgroup``): each validates a whole
#: problem, so keeping the module's ~20 on one worker (as for the others) made it the critical path
SPREAD = {"test_bundled_problem_validates"}
#: the tests of test_validate.py that read a bundled problem's cached validation, with that problem
SHARES_A_VALIDATION = {"test_tied_lm_head_has_an_oracle_and_ten_mistakes_each_caught": "tied_lm_head",
                       "test_a_pack_problem_validates_the_same_through_the_cli": "softmax"}


def work_unit(nodeid: str) -> str:
    """The xdist work unit of a test: its file (its module and session fixtures are built once,
    on one worker), except :data:`SPREAD`, one unit per parameter (the bundled problems'
    validations run on both workers), which :data:`SHARES_A_VALIDATION` joins."""
    path, _, rest = nodeid.partition("::")
    name, _, param = rest.partition("[")
    if name in SPREAD:
        return f"validate-{param.rstrip(']')}"
    if name in SHARES_A_VALIDATION:
        return f"validate-{SHARES_A_VALIDATION[name]}"
    return path


#: the work units that take longest (``--durations`` of .ci/run), handed out first so that no worker
#: starts one of them when the other is nearly done: the rest follow in collection order
LONGEST_FIRST = ("tests/test_security.py", "tests/test_corpus_verdicts.py", "tests/test_slurm.py",
                 "validate-", "tests/test_templates.py", "tests/test_multifile.py",
                 "tests/test_security_round3.py", "tests/test_problems.py", "tests/test_batch.py")


def _priority(unit: str) -> int:
    return next((i for i, u in enumerate(LONGEST_FIRST) if unit.startswith(u)), len(LONGEST_FIRST))


def pytest_collection_modifyitems(config, items):
    """Order the tests by :data:`LONGEST_FIRST` of their work unit (stable: a file's own order is
    kept), the order in which ``--dist loadgroup`` hands the units out."""
    if config.getvalue("dist") == "loadgroup" or os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=lambda item: _priority(work_unit(item.nodeid)))


def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup`` (.ci/run) schedules by :func:`work_unit`.

    It used to mark each test with an ``xdist_group``, which xdist 3.8 turns into a node id
    suffix through ``item._nodeid``; pytest 9 reads node ids from elsewhere, so the marks were
    silently ignored and every file's tests were spread over both workers, each building the
    module's fixtures again (the adversarial batch of test_security.py, 100 s, ran twice).
    """
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    config.option.loadscopereorder = False      # the collection's order (LONGEST_FIRST), not unit sizes

    class ByWorkUnit(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)
    return ByWorkUnit(config, log)
