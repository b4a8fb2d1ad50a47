"""Check one submission against one problem: the pipeline spec -> cases -> run -> compare -> report.

:func:`check_submission` is the whole of ``grader check`` without the printing; batch grading
calls it once per submission. It never raises for a fault of the submission (those become the
report), only :class:`grader.errors.GraderError` for faults of the grader's inputs.
"""
from __future__ import annotations

import ast
import dataclasses
import hashlib
import hmac
import io
import os
import platform
import re
import shlex
import stat
import tempfile
import time
import tokenize
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from . import cache
from .version import __version__
from .grading import expected_for, expected_from, run_failure, values_of
from .cleanup import remove_tree, sweep_stale
from .cases import Case, case_from_literal, case_literal, cases_digest, fixed_cases, generated_cases
from .compare import SMALL, Expected, compare, judge_raises, with_exception_hint
from .errors import GraderError
from .reports.common import SECRET_REPLAY_NOTE
from .results import ArrayInfo, CaseResult, Failure, GroupScore, Report
from .summary import summarise
from .runner import CallOutcome, ImportOutcome, Limits, Worker
from .siblings import Siblings, find_siblings, read_no_follow
from .siblings import parse as parse_python
from .siblings import hint_for as sibling_hint
from .spec import Problem

from .frameworks import FRAMEWORKS  # numpy, jax, torch: one module each (grader/frameworks/)
MAX_RESTARTS = 3


#: ``0`` turns the taking along of sibling modules off (``CheckOptions.siblings``); ``grader
#: grade`` sets it for the check of a learner whose file shares a folder with other learners'
SIBLINGS_ENV = "GRADER_SIBLINGS"


@dataclass
class CheckOptions:
    """Options of one check (the CLI's flags).

    Attributes:
        seed: case generation seed (an int >= 0).
        max_examples: generated cases (None: the spec's ``generated.count``).
        framework: ``"numpy"``, ``"jax"``, ``"torch"`` or None to detect from the submission's imports.
        limits: per-call and resource limits (``call_timeout`` in seconds...).
        total_timeout: wall-clock seconds for the whole run.
        only_cases: run only the cases with these names (for replay), or None.
        replay: a replay literal (see ``grader.cases.case_from_literal``), or None.
        shrink: shrink failing generated cases to the smallest failing input.
        sandbox: the sandbox tier request, ``"auto"``, ``"strict"`` or ``"none"``.
        submission_shown: how the submission path appears in replay commands.
        problems_dir: the ``--problems-dir`` given, repeated in replay commands.
        progress: called with (cases done, cases total) while running, or None.
        seed_secret: the instructor's secret (bytes), or None. When set, the cases come from
            :func:`derive_seed` of it and the submission's bytes, ``seed`` must be left at 0,
            and no case set is cached (docs/security.md, class 6). Never shown in a repr.
        seed_secret_source: where the secret came from (``"--seed-secret"`` or
            ``"GRADER_SEED_SECRET"``), recorded in the report (never the secret itself).
        audience: who the report is for, ``"learner"`` or ``"instructor"``. With a secret, a
            learner's report never holds the derived seed (``environment.seed`` is
            ``"secret"``) nor a replay command with ``--seed``.
        seed_source: set by :func:`check_submission`: ``"secret"`` when ``seed`` was derived
            from a secret, else ``""``.
        jax_cache: where JAX submissions' warm compilations are kept: a folder, ``""`` (none
            kept) or None (under the cache folder, ``grader.cache.cache_root``). Defaults to
            ``GRADER_JAX_CACHE`` as set when the options are made (``cache.jax_cache_setting``);
            passed on explicitly, so a check changes no environment variable.
        siblings: take along the ``.py`` files beside the submission that it imports
            (``grader.siblings``; a multi-file submission). False for a file that shares its
            folder with other learners' files (``grader grade`` on a class folder of files).
            Defaults to :data:`SIBLINGS_ENV` not being ``0`` when the options are made.
    """

    seed: int = 0
    max_examples: int | None = None
    framework: str | None = None
    limits: Limits = field(default_factory=Limits)
    total_timeout: float = 300.0
    only_cases: list[str] | None = None
    replay: dict[str, Any] | None = None
    shrink: bool = True
    sandbox: str = "auto"
    submission_shown: str | None = None
    problems_dir: str | None = None
    progress: Callable[[int, int], None] | None = None
    seed_secret: bytes | None = field(default=None, repr=False)
    seed_secret_source: str = ""
    audience: str = "learner"
    seed_source: str = ""
    jax_cache: str | None = field(default_factory=cache.jax_cache_setting)
    siblings: bool = field(default_factory=lambda: os.environ.get(SIBLINGS_ENV, "1") != "0")


#: the environment variable that carries the instructor's seed secret (CI secrets arrive so)
SEED_SECRET_ENV = "GRADER_SEED_SECRET"
#: domain separation of the derived seed (a new version of the derivation gets a new label)
SEED_LABEL = b"grader-seed-v1\0"


def derive_seed(secret: bytes, submission: bytes) -> int:
    """The case seed of ``submission`` (its bytes, as read) under the instructor's ``secret``:
    the first 8 bytes, big-endian, of HMAC-SHA256(secret, ``SEED_LABEL`` + SHA-256(submission)).

    Same bytes and secret give the same seed (a regrade reproduces the run); other bytes or
    another secret give an unrelated one, and without the secret it cannot be computed. An int
    in ``[0, 2**64)``.
    """
    digest = hmac.new(secret, SEED_LABEL + hashlib.sha256(submission).digest(), "sha256").digest()
    return int.from_bytes(digest[:8], "big")


def read_seed_secret(path: str | None, environ: Any = None) -> tuple[bytes | None, str]:
    """The seed secret and where it came from: the file ``path`` (``--seed-secret``) if given,
    else the environment variable :data:`SEED_SECRET_ENV` if set and not empty, else
    ``(None, "")``. Trailing whitespace is stripped (a file written by ``echo``, a CI secret
    pasted with a newline). An empty variable means "no secret" (a CI secret that is not set
    arrives empty); an empty file is an error.

    Raises:
        GraderError: the file is missing, unreadable, not a regular file, or empty.
    """
    if path is not None:
        flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(path, flags)
        except FileNotFoundError:
            raise GraderError(f"--seed-secret {path!r} does not exist") from None
        except OSError as exc:
            raise GraderError(f"cannot read --seed-secret {path!r}: {exc.strerror or exc}") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise GraderError(f"--seed-secret {path!r} is not a regular file")
            with os.fdopen(os.dup(fd), "rb") as fh:
                data = fh.read(1 << 20)
        except OSError as exc:
            raise GraderError(f"cannot read --seed-secret {path!r}: {exc.strerror or exc}") from None
        finally:
            os.close(fd)
        secret = data.rstrip()
        if not secret:
            raise GraderError(f"--seed-secret {path!r} is empty; put a long random string in it "
                              "(e.g. `openssl rand -hex 32`)")
        return secret, "--seed-secret"
    env = os.environb if environ is None else environ
    value = env.get(SEED_SECRET_ENV.encode()) if env is os.environb else env.get(SEED_SECRET_ENV)
    if isinstance(value, str):
        value = os.fsencode(value)
    secret = (value or b"").rstrip()
    return (secret, SEED_SECRET_ENV) if secret else (None, "")


#: the largest submission file read (bytes); a larger one is a fault of the submission
MAX_SUBMISSION_BYTES = 1 << 20


@dataclass
class LoadedSubmission:
    """A submission file as read once by the grader (:func:`load_submission`).

    Attributes:
        path: the path as given (the file read).
        data: the file's bytes: what the submission's process will import (:func:`private_copy`).
        source: the decoded text ("" when ``fault`` is set, but for a file that is not text in
            its encoding: then its bytes as UTF-8 with U+FFFD, only for telling its problem).
        tree: its AST, or None (a syntax error or a fault).
        syntax_error: the SyntaxError Python reports for it, or None.
        fault: one line saying why the file cannot be graded at all (a symbolic or hard link, not a
            regular file, too large, not text in its encoding, nested too deeply for Python's
            parser, a notebook nbformat cannot read), or None.
        notebook: for an ``.ipynb`` file, its conversion (``grader.notebook.Notebook``: where
            each line came from, what was left out); ``data`` and ``source`` are then the
            converted Python, which is what the child imports and the seed is derived from.
        read: the number of bytes read from the file (0 when nothing was: a link, too large...).
        sha256: the SHA-256 (hex) of those bytes, the file as it is on disk (a notebook's JSON,
            not its conversion); "" when nothing was read.
        parsed: whether the source was given to the parser (``load_submission``'s ``parse_if``
            can leave out a file that names nothing wanted).
    """

    path: str
    data: bytes = b""
    source: str = ""
    tree: ast.Module | None = None
    syntax_error: SyntaxError | None = None
    fault: str | None = None
    notebook: Any = None
    read: int = 0
    sha256: str = ""
    parsed: bool = True


def names_in(source: str, names: "frozenset[str] | set[str]") -> bool:
    """Whether any of the identifiers ``names`` occurs as a whole word in ``source`` once it is
    NFKC-normalised (as Python normalises identifiers): a file in which none occurs can neither
    define, assign nor import any of them, so it need not be parsed to know that."""
    import unicodedata

    if not names:
        return False
    text = unicodedata.normalize("NFKC", source) if not source.isascii() else source
    return re.search(r"(?<![\w])(?:" + "|".join(re.escape(n) for n in sorted(names)) + r")(?![\w])", text) is not None


def _read_no_follow(real: str, path: str | None = None) -> tuple[bytes | None, str | None]:
    """The bytes of the submission ``real`` (``grader.siblings.read_no_follow``: no link
    followed, symbolic or hard, regular files only, at most :data:`MAX_SUBMISSION_BYTES`) or None
    and the fault, worded for the learner with the file named ``path`` (default: ``real``).

    Raises:
        GraderError: the file is missing, a directory, or unreadable (the grader's input is wrong).
    """
    path = real if path is None else path
    try:
        data, kind, detail = read_no_follow(real, MAX_SUBMISSION_BYTES)
    except FileNotFoundError:
        raise GraderError(f"submission {path!r} does not exist") from None
    except OSError as exc:
        raise GraderError(f"cannot read submission {path!r}: {exc.strerror}") from None
    if data is not None:
        return data, None
    if kind == "directory":
        raise GraderError(f"submission {path!r} is a directory; give a .py file")
    if kind == "symlink" and detail:
        return None, f"the submission {path}: {detail}; the grader does not follow links"
    if kind == "symlink":
        return None, (f"the submission {path} is a symbolic link; the grader does not follow links: "
                      "submit the .py file itself")
    if kind == "hard_link":
        return None, (f"the submission {path} is a hard link ({detail} names); the grader does not "
                      "read linked files: copy the file and submit the copy")
    if kind == "too_large":
        return None, (f"the submission {path} is larger than {MAX_SUBMISSION_BYTES >> 20} MiB; "
                      "submit the source file only")
    return None, f"the submission {path} is not a regular file ({detail}); submit a .py file"


def load_submission(path: str | Path, shown: str | None = None, *,
                    parse_if: Callable[[str], bool] | None = None) -> LoadedSubmission:
    """Read and parse the submission at ``path`` once, without following a symbolic link.

    Decoding follows Python's own rules (a UTF-8 byte-order mark, a ``# coding:`` line, else
    UTF-8), so whatever Python imports is graded. A file the grader cannot grade at all comes
    back with ``fault`` set, to be reported as the submission's failure (exit 1). Messages and
    the parser's file name call the file ``shown`` (default: ``path``): ``grader grade`` hands
    its checks an absolute path and the path as it was found, which is what the learner knows.
    ``parse_if``: called with the decoded source; when it says False the file is not parsed
    (``parsed`` False, no ``tree``): discovery leaves out files that name nothing it looks for.

    Raises:
        GraderError: the file is missing, a directory or unreadable.
    """
    real = str(path)
    shown = real if shown is None else shown
    data, fault = _read_no_follow(real, shown)
    if data is None:
        return LoadedSubmission(real, fault=fault)
    read, sha256 = len(data), hashlib.sha256(data).hexdigest()
    if real.lower().endswith(".ipynb"):
        loaded = _load_notebook(real, data, shown, parse_if)
    else:
        loaded = _load_python(real, data, shown, parse_if)
    loaded.read, loaded.sha256 = read, sha256
    return loaded


def _load_python(real: str, data: bytes, shown: str, parse_if: Callable[[str], bool] | None) -> LoadedSubmission:
    """A ``.py`` file's bytes (read by :func:`load_submission`) decoded and parsed."""
    # not text in its encoding: the submission's fault (Python could not import it either), so a
    # report (exit 1) that says how to save it, never exit 2 (a class row then blamed the grader)
    # (the source, with U+FFFD for what is not UTF-8, is kept only for the tolerant scan that
    # tells which problem's function it defines)
    not_text = LoadedSubmission(real, source=data.decode("utf-8", "replace"),
                                fault=f"the submission {shown} is not UTF-8 text (nor in the encoding its "
                                      "'# coding:' line names), so Python cannot import it")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        source = data.decode(encoding)
    except SyntaxError as exc:  # not UTF-8 in its first lines, or a bad coding declaration
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return not_text
        return LoadedSubmission(real, data, syntax_error=SyntaxError(exc.msg, (shown, exc.lineno or 1, 0, "")))
    except (UnicodeError, LookupError):  # UnicodeError too: the 'undefined' and 'punycode' codecs raise it
        return not_text
    if source.startswith("\ufeff"):  # utf-8-sig leaves none; a BOM under a coding line might
        source = source[1:]
    if parse_if is not None and not parse_if(source):
        return LoadedSubmission(real, data, source, parsed=False)
    try:
        return LoadedSubmission(real, data, source, parse_python(source, shown))
    except SyntaxError as exc:
        return LoadedSubmission(real, data, source, syntax_error=exc)
    except ValueError as exc:  # null bytes
        return LoadedSubmission(real, data, source, syntax_error=SyntaxError(str(exc), (shown, 1, 0, "")))
    except (RecursionError, MemoryError) as exc:  # Python's own compiler fails on it the same way
        return LoadedSubmission(real, data, source, fault=(
            f"the submission {shown} is nested too deeply for Python's parser "
            f"({type(exc).__name__}{': ' + str(exc) if str(exc) else ''}); split the expression up"))


def _load_notebook(real: str, data: bytes, shown: str, parse_if: Callable[[str], bool] | None = None) -> LoadedSubmission:
    """A notebook's bytes (read by :func:`load_submission` from ``real``) as its code cells'
    Python source (``grader.notebook.convert``): a notebook nbformat cannot read is a fault of
    the submission. Messages call it ``shown``."""
    from .notebook import NotebookError, convert

    try:
        nb = convert(data)
    except NotebookError as exc:
        return LoadedSubmission(real, fault=f"the notebook {shown} cannot be graded: {exc}")
    loaded = LoadedSubmission(real, nb.source.encode("utf-8"), nb.source, notebook=nb)
    if parse_if is not None and not parse_if(nb.source):
        loaded.parsed = False
        return loaded
    try:
        loaded.tree = parse_python(nb.source, shown)
    except SyntaxError as exc:
        loaded.syntax_error = exc
    except ValueError as exc:  # null bytes
        loaded.syntax_error = SyntaxError(str(exc), (shown, 1, 0, ""))
    except (RecursionError, MemoryError) as exc:
        loaded.fault = f"the notebook {shown} is nested too deeply for Python's parser ({type(exc).__name__})"
    return loaded


def read_submission(path: str | Path, shown: str | None = None) -> tuple[str, ast.Module | None, SyntaxError | None]:
    """The submission's source, its AST (None on a syntax error or a fault) and the SyntaxError
    if any: :func:`load_submission` (``shown``: the name messages give it) for callers that need
    no more.

    Raises:
        GraderError: the file is missing, a directory or unreadable.
    """
    loaded = load_submission(path, shown)
    return loaded.source, loaded.tree, loaded.syntax_error


class PrivateCopy:
    """The checked bytes of a submission in a folder only the grader's user can enter, for the
    submission's process to import: a link or file swapped in at the original path after the
    grader read it changes nothing. The original absolute path is repeated under the folder, so
    tracebacks and process listings still name it. Use as a context manager.

    Sibling modules taken along (``siblings``: ``(file name, bytes)`` from
    ``grader.siblings.find_siblings``) are written beside it, in the same folder, which holds
    nothing else: :attr:`folder` is what the sandbox shows, read-only.

    Attributes:
        path: the copy's path.
        folder: the folder holding the copy and its siblings.
    """

    def __init__(self, loaded: LoadedSubmission, siblings: list[tuple[str, bytes]] = ()) -> None:
        sweep_stale()   # what a grader killed with SIGKILL left behind
        self._dir = tempfile.mkdtemp(prefix=f"grader-sub-{os.getpid()}-")
        original = os.path.abspath(loaded.path).lstrip(os.sep)
        path = os.path.join(self._dir, original)
        if len(os.fsencode(path)) > 3000:  # far from PATH_MAX with the sandbox's own prefixes
            path = os.path.join(self._dir, os.path.basename(original))
        try:
            os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
            with os.fdopen(fd, "wb") as fh:
                fh.write(loaded.data)
            for name, data in siblings:  # plain module file names (siblings.MODULE_FILE), never the main's
                if os.sep in name or name.startswith(".") or name == os.path.basename(path):
                    continue
                fd = os.open(os.path.join(os.path.dirname(path), name),
                             os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
        except OSError as exc:
            self.close()
            raise GraderError(f"cannot copy the submission into {self._dir}: {exc.strerror or exc}") from None
        self.path = path
        self.folder = os.path.dirname(path)
        self.root = self._dir

    def unprivate(self, text: str | None, shown: str) -> str | None:
        """``text`` (a message, traceback or the submission's output) with the copy's private
        path written as the learner knows it: the copy itself as ``shown`` (the path given to the
        grader), a sibling under the copy's folder as its original absolute path. Tracebacks then
        name files that exist and an editor can open, not ``/tmp/grader-sub-.../...``."""
        if not text:
            return text
        return text.replace(self.path, shown).replace(self.root + os.sep, os.sep)

    def close(self) -> None:
        """Remove the copy and its folder."""
        remove_tree(self._dir)

    def __enter__(self) -> "PrivateCopy":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def siblings_of(submission: str | Path, loaded: LoadedSubmission, take: bool = True) -> Siblings:
    """The sibling modules taken along with the submission (``grader.siblings.find_siblings``
    on its folder and ``loaded``'s tree): none when ``take`` is false or the file cannot be
    graded at all."""
    if not take or loaded.fault is not None:
        return Siblings()
    return find_siblings(os.path.dirname(os.path.abspath(submission)), loaded.tree, os.path.basename(submission))


#: domain separation of :func:`submission_digest` (a new way of computing it gets a new label)
DIGEST_LABEL = b"grader-submission-v1\0"


def submission_digest(loaded: LoadedSubmission, siblings: Siblings) -> str:
    """SHA-256 (hex) of what a check grades: the main file's bytes as read from disk
    (``loaded.sha256``; nothing read, e.g. a link: the empty string) and each sibling module
    taken along, by name and bytes, in name order. Recorded in the report
    (``environment.submission_sha256``); ``grader grade --resume`` grades a learner again when
    their current files give another digest. Two files with the same bytes give the same
    digest wherever they lie."""
    h = hashlib.sha256(DIGEST_LABEL)
    h.update(loaded.sha256.encode("ascii") + b"\0")
    for name, data in sorted(siblings.files):
        h.update(name.encode("utf-8", "surrogateescape") + b"\0" + hashlib.sha256(data).hexdigest().encode("ascii") + b"\0")
    return h.hexdigest()


def current_digest(path: str | Path, take_siblings: bool = True) -> str:
    """The :func:`submission_digest` a check of ``path`` would record now (its bytes and the
    siblings it would take along: the main file and those are read and parsed, as the check
    does).

    Raises:
        GraderError: the file is missing, a directory or unreadable.
    """
    loaded = load_submission(path)
    return submission_digest(loaded, siblings_of(path, loaded, take_siblings))


def detect_framework(tree: ast.Module | None) -> str:
    """The submission's framework from its imports: ``"jax"`` or ``"torch"`` if it imports one
    (anywhere in the file; the first in source order if both), else ``"numpy"``
    (``grader.frameworks.detect``)."""
    from . import frameworks
    return frameworks.detect(tree)


def defined_functions(tree: ast.Module | None) -> set[str]:
    """Top-level names the submission defines or assigns (functions, lambdas, aliases)."""
    names: set[str] = set()
    for node in (tree.body if tree is not None else []):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.ImportFrom, ast.Import)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def scanned_functions(source: str) -> set[str]:
    """Names of the functions ``source`` defines, found by a tolerant line scan (``def name(`` at
    the start of a line, any indentation): for a file that does not parse, whose AST is lost."""
    return set(_DEF_LINE.findall(source or ""))


_DEF_LINE = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\(", re.MULTILINE)


def functions_of(tree: ast.Module | None, source: str | None) -> set[str]:
    """The functions a submission defines: from its AST (:func:`defined_functions`), or, for a
    file that does not parse, from the tolerant scan of its source (:func:`scanned_functions`),
    so that its SyntaxError is still graded as the failure of the problem it was written for."""
    return defined_functions(tree) if tree is not None else scanned_functions(source or "")


def function_line(tree: ast.Module | None, name: str) -> int | None:
    """The line of the top-level ``def name`` (or of the statement binding ``name``) in ``tree``,
    the last one when it is bound several times (the one Python keeps), or None."""
    line = None
    for node in (tree.body if tree is not None else []):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            line = node.lineno
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            line = node.lineno
    return line


class _Session:
    """A worker that is restarted after a crash, up to :data:`MAX_RESTARTS` times.

    A process that has run a hidden case never runs a visible one: :meth:`call` replaces it
    with a fresh process first (not counted as a restart), so nothing it kept from hidden
    inputs can reach a visible case's result, message or timing; and its JAX compilations are
    not kept (``Worker.close(keep_cache=False)``). JAX submissions get the warm compilations
    of their exact source (``cache.jax_submission_store``, keyed by the bytes the child imports;
    ``CheckOptions.jax_cache`` moves or disables it).
    """

    def __init__(self, submission: Path, problem: Problem, framework: str, opts: CheckOptions,
                 wrap: Any, siblings: list[tuple[str, bytes]] = (), folder: str | None = None,
                 shared: tuple[str, ...] = (), deadline: float | None = None) -> None:
        jax_store = None
        if framework == "jax":
            try:  # the siblings' bytes are part of the key: a changed helper.py is another source
                key = cache.submission_key(submission.read_bytes(), problem.function, framework, siblings)
                jax_store = cache.jax_submission_store(key, opts.jax_cache)
            except OSError:
                jax_store = None
        self.args = (submission, problem.function, framework, opts.limits, wrap, jax_store, folder)
        self.shared, self.deadline = shared, deadline   # Worker's: folders to share, the run's end
        self.worker: Worker | None = None
        self.restarts = 0
        self.outputs: list[dict[str, Any]] = []
        self.versions: dict[str, Any] = {}
        self.layers: list[str] = []
        self.saw_hidden = False          # the current process has been given a hidden case

    def launch(self) -> None:
        self.worker = Worker(*self.args, shared=self.shared, deadline=self.deadline)
        self.saw_hidden = False
        failed = self.worker.launch()
        self._launch_failure = failed

    def ready(self) -> ImportOutcome:
        assert self.worker is not None
        if self._launch_failure is not None:
            return self._launch_failure
        out = self.worker.wait_ready()
        self.versions = out.versions or self.versions
        self.layers = self.worker.layers or self.layers
        return out

    def call(self, case: Case, timeout: float | None = None) -> CallOutcome:
        hidden = case.visibility == "hidden"
        if self.saw_hidden and not hidden and self.worker is not None:
            self._collect()              # a fresh process for visible cases: not a crash restart
            self.launch()
            started = self.ready()
            if started.status != "ok":
                return CallOutcome("crash", message=f"restarting the submission failed: {started.message}")
        if self.worker is None or self.worker.proc is None:
            self.restarts += 1
            self._collect()
            self.launch()
            started = self.ready()
            if started.status != "ok":
                return CallOutcome("crash", message=f"restarting the submission failed: {started.message}")
        assert self.worker is not None
        self.saw_hidden = self.saw_hidden or hidden
        return self.worker.call(case.inputs, timeout)

    def _collect(self) -> None:
        if self.worker is not None:
            self.worker.close(keep_cache=not self.saw_hidden)
            self.outputs.append(self.worker.output())
            self.worker = None

    def close(self) -> dict[str, Any]:
        self._collect()
        out: dict[str, Any] = {"stdout": "", "stderr": "", "stdout_bytes": 0, "stderr_bytes": 0, "truncated": False}
        for o in self.outputs:
            out["stdout"] += o["stdout"]
            out["stderr"] += o["stderr"]
            out["stdout_bytes"] += o["stdout_bytes"]
            out["stderr_bytes"] += o["stderr_bytes"]
            out["truncated"] = out["truncated"] or o["truncated"]
        return out


def _total(groups: list[GroupScore]) -> float:
    """The score: the groups' exact shares summed, then rounded to 4 decimals (summing the groups'
    rounded scores gave 3.3332 for a third of each of 1, 2, 1, 1, 1 and 4 points, not 3.3333)."""
    return round(sum(g.points * g.passed / g.total for g in groups if g.earned and g.total), 4)


def _scores(problem: Problem, cases: list[CaseResult], whole_failure: Failure | None) -> list[GroupScore]:
    groups = []
    for name, g in problem.groups.items():
        mine = [c for c in cases if c.group == name]
        passed = sum(c.status == "passed" for c in mine)
        earned = 0.0 if whole_failure or not mine else g.points * passed / len(mine)
        groups.append(GroupScore(name, g.points, round(earned, 4), passed, len(mine), g.visibility))
    return groups


def _small(case: Case) -> bool:
    return all(a.size <= SMALL for a in case.inputs.values())


def replay_command(opts: CheckOptions, problem: Problem, case: Case, shown: str) -> str | None:
    """The shell command that re-runs exactly ``case`` (by name, or as a literal for small ones).

    With a secret seed (``opts.seed_source == "secret"``) and the learner audience the command
    never holds ``--seed``: a case with at most ``compare.SMALL`` elements per array is given
    as a literal (``--replay JSON``), a larger one gets None (:data:`SECRET_REPLAY_NOTE` says
    why). The instructor gets ``--seed N --case NAME``.
    """
    import json
    base = ["grader", "check", shown, "--problem", problem.id]
    if opts.problems_dir:
        base += ["--problems-dir", opts.problems_dir]
    if opts.framework:
        base += ["--framework", opts.framework]
    secret_for_learner = opts.seed_source == "secret" and opts.audience != "instructor"
    if case.origin in ("shrunk", "replay") or (secret_for_learner and _small(case)):
        lit = json.dumps(case_literal(case), separators=(",", ":"))
        return shlex.join(base + ["--replay", lit])
    if secret_for_learner:
        return None
    seed = ["--seed", str(opts.seed)] if opts.seed else []
    extra = ["--max-examples", str(opts.max_examples)] if opts.max_examples is not None else []
    return shlex.join(base + seed + extra + ["--case", case.name])


def _environment(problem: Problem, opts: CheckOptions, loaded: LoadedSubmission, siblings: Siblings,
                 framework: str, dtypes: tuple[str, ...], tier: str, secret: bool) -> dict[str, Any]:
    """The report's ``environment`` as known before the submission runs (docs/formats.md): seed
    (``"secret"`` for learners of a secret run), framework, dtypes, versions, sandbox tier, and
    where they apply the siblings taken, the notebook's cells, the secret's source and the
    function's (or syntax error's) line. The run adds ``cases_digest``, ``jax``/``torch`` and
    ``memory_limit``."""
    tree, syntax_error = loaded.tree, loaded.syntax_error
    env: dict[str, Any] = {
        "seed": opts.seed if not secret or opts.audience == "instructor" else "secret",
        "framework": framework, "dtypes": list(dtypes),
        "framework_note": problem.framework_notes.get(framework, ""),
        "python": platform.python_version(), "numpy": np.__version__, "jax": None,
        **({"torch": None} if framework == "torch" else {}),
        "grader": __version__, "sandbox": tier, "x64": framework == "jax" or None,
        "max_examples": opts.max_examples if opts.max_examples is not None else
        (problem.generated or {}).get("count", 0),
    }
    if siblings.files or siblings.skipped:
        env["siblings"] = siblings.report()
    env["submission_sha256"] = submission_digest(loaded, siblings)  # what was graded (grade --resume)
    if loaded.notebook is not None:  # what of the notebook ran, and what was left out
        env["notebook"] = {"code_cells": loaded.notebook.code_cells, "left_out": loaded.notebook.left_out}
        env["framework_note"] = " ".join(x for x in (env["framework_note"], loaded.notebook.note()) if x)
    if secret:  # where the seed came from, never the secret (nor, for learners, the seed)
        env["seed_source"] = "secret"
        env["seed_secret_from"] = opts.seed_secret_source or "CheckOptions.seed_secret"
    if line := function_line(tree, problem.function):  # where annotations and JUnit testcases point
        env["function_line"] = line
    elif syntax_error is not None and syntax_error.lineno:
        env["syntax_error_line"] = syntax_error.lineno
    return env


def _before_run_failure(loaded: LoadedSubmission, framework: str, shown: str) -> Failure | None:
    """Why the submission cannot be run at all, as its failure (a report, exit 1), or None: the
    framework is not installed here, the file cannot be graded (``loaded.fault``), or it does
    not parse."""
    from . import frameworks

    syntax_error = loaded.syntax_error
    if not frameworks.installed(framework):
        # the grading machine's fault, said as a report (exit 1), not exit 2, so that the
        # learner's row, CI log or Gradescope result says what to install (README, "Frameworks")
        return Failure("import", frameworks.missing_message(framework),
                       hint="the grading machine lacks it, not the submission: whoever runs the "
                            f"grader installs it ({frameworks.get(framework).REQUIREMENT})")
    if loaded.fault is not None:
        from .reports.fault import fix_for
        return Failure("import", loaded.fault, hint=fix_for(loaded.fault, None))
    if syntax_error is not None:
        where = f"{shown}:{syntax_error.lineno}" if syntax_error.lineno else shown
        if loaded.notebook is not None and loaded.notebook.where(syntax_error.lineno):
            where = f"{shown}, {loaded.notebook.where(syntax_error.lineno)}"
        detail = (syntax_error.text or "").rstrip()
        return Failure("import", f"SyntaxError: {syntax_error.msg} ({where})",
                       hint="fix the syntax error; `python -m py_compile FILE` shows it too",
                       details=[detail] if detail else [])
    return None


def _plan_cases(problem: Problem, opts: CheckOptions, framework: str, dtypes: tuple[str, ...],
                secret: bool) -> tuple[list[Case], dict[str, tuple[np.ndarray, np.ndarray | None]], Any, str]:
    """The cases to run (a replay literal, else the fixed and generated cases from the case
    cache or made afresh, cut to ``--case`` names), the reference values the cache already holds
    (case name -> (exact output, scale)), the cached entries (None on a miss, a replay or a
    secret seed) and the case-cache key ("" for a replay).

    Raises:
        GraderError: a malformed replay, a replay dtype not graded, or an unknown ``--case`` name.
    """
    known: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}
    cached = None
    key = ""
    if opts.replay is not None:
        try:
            cases = [case_from_literal(problem, opts.replay)]
        except (ValueError, TypeError) as exc:
            raise GraderError(f"--replay: {exc}") from None
        if cases[0].dtype not in dtypes:
            raise GraderError(f"--replay: dtype {cases[0].dtype} is not graded for {framework} "
                              f"(graded: {', '.join(dtypes)})")
    else:
        count = opts.max_examples if opts.max_examples is not None else (problem.generated or {}).get("count", 0)
        key = cache.case_key(problem, opts.seed, count, dtypes)
        # a secret seed's cases are never cached: the cache is readable by whoever runs the
        # grader, and they are the answers (docs/security.md, class 6)
        cached = None if secret else cache.load_cases(key)
        if cached is not None:
            cases = [c for c, _, _ in cached]
            must = {s["name"]: tuple(s["raises"]) for s in problem.cases if "raises" in s}
            for c in cases:  # the cache keeps no 'raises': it is the spec's
                if c.origin == "fixed":
                    c.raises = must.get(c.name.rsplit("[", 1)[0], ())
            known = {c.name: (ref, scale) for c, ref, scale in cached}
        else:
            cases = fixed_cases(problem, dtypes, opts.seed) + generated_cases(problem, dtypes, opts.seed, count)
        if opts.only_cases:
            wanted = set(opts.only_cases)
            unknown = wanted - {c.name for c in cases}
            if unknown:
                raise GraderError(f"--case: no case named {', '.join(sorted(unknown))} "
                                  f"(with {'the secret seed' if secret else f'seed {opts.seed}'}); "
                                  "names look like 'batch[float32]' or 'gen003[float16]'")
            cases = [c for c in cases if c.name in wanted]
    return cases, known, cached, key


def check_submission(submission: str | Path, problem: Problem, opts: CheckOptions | None = None) -> Report:
    """Grade ``submission`` against ``problem`` and return the :class:`Report`.

    Raises:
        GraderError: the submission file is missing or unreadable, the framework is not graded by
            the problem, a replay case is malformed, or the reference solution fails.
    """
    from . import frameworks
    from .sandbox import choose_tier

    opts = opts or CheckOptions()
    t_start = time.monotonic()
    shown = opts.submission_shown or str(submission)
    loaded = load_submission(submission, shown)  # read once, links not followed: what the child imports
    secret = opts.seed_secret is not None
    if secret:
        if opts.seed:
            raise GraderError("--seed cannot be used with a seed secret: the seed is derived from the secret "
                              "and the submission")
        # the seed of these exact bytes; the secret itself goes no further than this line
        opts = dataclasses.replace(opts, seed=derive_seed(opts.seed_secret or b"", loaded.data),
                                   seed_secret=None, seed_source="secret")
    tree = loaded.tree
    siblings = siblings_of(submission, loaded, opts.siblings)  # the modules beside it that it imports
    framework = opts.framework or detect_framework(tree)
    if framework not in problem.frameworks:
        raise GraderError(f"problem {problem.id!r} does not grade {framework} submissions "
                          f"(it grades: {', '.join(problem.frameworks)})")
    dtypes = problem.frameworks[framework]
    tier, wrap = choose_tier(opts.sandbox)
    env = _environment(problem, opts, loaded, siblings, framework, dtypes, tier, secret)

    def finish(failure: Failure | None, results: list[CaseResult], output: dict[str, Any]) -> Report:
        groups = _scores(problem, results, failure)
        passed = failure is None and bool(results) and all(c.status == "passed" for c in results)
        unrun = [g.group for g in groups if g.points > 0 and g.total == 0]
        if failure is None and unrun and not env.get("partial"):
            # e.g. --max-examples 0: a run that left out a group with points is no pass
            env["partial"] = True
            env["unrun_groups"] = unrun
            passed = False
        if failure is not None and failure.kind == "import" and failure.hint is None and siblings.skipped:
            failure.hint = sibling_hint(siblings, "\n".join([failure.message, *failure.details]))
        if framework != "numpy":  # hints and messages name code in the submission's framework
            for res in results:
                if res.failure is not None:
                    res.failure.hint = frameworks.speak(res.failure.hint, framework)
                    res.failure.message = frameworks.speak(res.failure.message, framework) or ""
        if loaded.notebook is not None:  # positions as the notebook's cell and line
            for fail in [failure] + [res.failure for res in results]:
                if fail is not None:
                    fail.message = loaded.notebook.locate(fail.message, shown) or ""
                    fail.details = [loaded.notebook.locate(d, shown) or "" for d in fail.details]
            cells = re.findall(r"cell \d+, line \d+", "\n".join(failure.details)) if failure is not None else []
            if cells and cells[-1] not in failure.message:  # where the import failed, on its one line
                failure.message = f"{failure.message} ({cells[-1]})"
        return Report(problem.id, problem.title, shown, passed,
                      _total(groups), problem.max_score, failure, results, groups,
                      summarise(results, dtypes), env, output, time.monotonic() - t_start)

    empty_output = {"stdout": "", "stderr": "", "stdout_bytes": 0, "stderr_bytes": 0, "truncated": False}
    early = _before_run_failure(loaded, framework, shown)
    if early is not None:
        return finish(early, [], empty_output)

    cases, known, cached, key = _plan_cases(problem, opts, framework, dtypes, secret)
    env["cases_digest"] = cases_digest(cases)  # what was graded, so two runs can be compared
    if opts.replay is not None or opts.only_cases:
        env["partial"] = True  # a few selected cases: reports show no grade
        env["dtypes"] = [d for d in dtypes if any(c.dtype == d for c in cases)]
    copy = PrivateCopy(loaded, siblings.files)  # the checked bytes, where nothing else can swap them
    session = _Session(Path(copy.path), problem, framework, opts, wrap, siblings.files, copy.folder,
                       shared=(copy.root,), deadline=t_start + opts.total_timeout)
    session.launch()
    # The reference runs in a thread of this process while the submission imports and runs in
    # its own: XLA releases the GIL while it compiles and computes, so the two overlap.
    if known:
        ready = [expected_from(problem, c, *known[c.name]) for c in cases]
        expected_of: Callable[[int], Expected] = ready.__getitem__
        pool = None
    else:
        pool = ThreadPoolExecutor(1, thread_name_prefix="reference")
        futures = [pool.submit(expected_for, problem, c) for c in cases]
        expected_of = lambda i: futures[i].result()  # noqa: E731 - re-raises a GraderError
    try:
        report = _run_cases(problem, cases, expected_of, session, opts, shown, dtypes, env, finish, t_start)
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        copy.close()
    for fail in [report.failure] + [res.failure for res in report.cases]:
        if fail is not None:
            fail.message = copy.unprivate(fail.message, shown) or ""
            fail.details = [copy.unprivate(d, shown) or "" for d in fail.details]
    for stream in ("stdout", "stderr"):
        if isinstance(report.output.get(stream), str):
            report.output[stream] = copy.unprivate(report.output[stream], shown)
    if secret and opts.audience != "instructor":
        for res in report.cases:  # no replay command without the secret seed: say why instead
            if res.status not in ("passed", "skipped") and res.replay is None:
                res.replay_note = SECRET_REPLAY_NOTE
    complete = pool is not None and all(f.done() and not f.cancelled() and f.exception() is None for f in futures)
    if complete and opts.replay is None and not opts.only_cases and cached is None and not secret:
        cache.store_cases(key, [(c, futures[i].result().ref, futures[i].result().scale)
                                for i, c in enumerate(cases)])
    return report


def _run_cases(problem: Problem, cases: list[Case], expected_of: Callable[[int], Expected], session: "_Session",
               opts: CheckOptions, shown: str, dtypes: tuple[str, ...], env: dict[str, Any],
               finish: Callable[..., Report], t_start: float) -> Report:
    """Call the submission on every case (after its import) and compare; the report.

    Visible cases run first and hidden ones after them, so that one switch to a fresh process
    (``_Session.call``) keeps everything a process learnt from hidden inputs away from what
    learners see; the results keep the cases' order.
    """
    from .sandbox import memory_limit

    started = session.ready()
    env["jax"] = session.versions.get("jax")
    if "torch" in env:
        env["torch"] = session.versions.get("torch")
    env["memory_limit"] = memory_limit(env.get("sandbox", ""), session.layers, opts.limits.memory_bytes,
                                       session.args[4])
    if session.layers:  # what the child applied to itself: the view, rlimits, its uid, Landlock, seccomp
        env["sandbox_layers"] = list(session.layers)
    if started.status != "ok":
        output = session.close()
        kind = {"import_error": "import", "timeout": "timeout"}.get(started.status, "import")
        msg = started.message or "the submission could not be imported"
        if started.status == "crash":
            msg = f"{msg} (while importing the submission)" if "import" not in msg else msg
        hint = None
        from . import frameworks
        from .sandbox import address_space_bytes
        need = frameworks.get(session.args[2]).ADDRESS_SPACE_MIB
        space = address_space_bytes(opts.limits.memory_bytes, session.args[4]) >> 20
        if started.status == "crash" and opts.limits.memory_bytes and space < need:
            # a framework that runs out of address space while importing may abort, not raise
            label = frameworks.get(session.args[2]).LABEL
            hint = (f"the memory limit leaves {space} MiB of address space, and importing {label} needs about "
                    f"{need} MiB: raise --memory-mb (docs/security.md, rlimits)")
        return finish(Failure(kind, msg, hint=hint, details=[started.traceback] if started.traceback else []),
                      [], output)

    slots: list[CaseResult | None] = [None] * len(cases)
    deadline = t_start + opts.total_timeout
    stop_reason = ""
    order = [i for i, c in enumerate(cases) if c.visibility != "hidden"] + \
        [i for i, c in enumerate(cases) if c.visibility == "hidden"]
    for done, i in enumerate(order):
        case = cases[i]
        info = {k: ArrayInfo(tuple(v.shape), v.dtype.name) for k, v in case.inputs.items()}
        base = dict(name=case.name, group=case.group, dtype=case.dtype, rank=case.rank, inputs=info,
                    visibility=case.visibility)
        if stop_reason:
            slots[i] = CaseResult(status="skipped", failure=None, **base)
            continue
        left = deadline - time.monotonic()
        if left <= 0:
            stop_reason = f"the whole run passed its {opts.total_timeout:g} s limit"
            slots[i] = CaseResult(status="timeout", failure=Failure("timeout", stop_reason), **base)
            continue
        outcome = session.call(case, timeout=opts.limits.call_timeout)   # CPU s; the run's end is the worker's
        got = outcome.result
        exp = expected_of(i)
        if case.raises and outcome.status in ("ok", "type", "exception"):
            failure = judge_raises(case, outcome)  # a case that must raise: nothing is compared
            status = "passed" if failure is None else "failed"
        elif outcome.status in ("ok", "type"):
            failure = compare(case, outcome, exp)
            status = "passed" if failure is None else "failed"
        else:
            status, failure = run_failure(outcome)
            with_exception_hint(failure, problem.hints, case)
            if outcome.status == "timeout":
                stop_reason = ("not run: the whole run passed its time limit" if outcome.limit == "total"
                               else "not run: an earlier case timed out")
            elif outcome.status == "crash" and session.restarts >= MAX_RESTARTS:
                stop_reason = f"not run: the submission crashed {MAX_RESTARTS + 1} times"
        res = CaseResult(status=status, failure=failure, seconds=outcome.seconds,
                         values=values_of(case, exp, got) if failure else None, **base)
        if failure is not None:
            res.replay = replay_command(opts, problem, case, shown)
        slots[i] = res
        if opts.progress:
            opts.progress(done + 1, len(cases))
    results: list[CaseResult] = [r for r in slots if r is not None]

    if opts.shrink and opts.replay is None:
        from .shrink import shrink_failures
        results.extend(shrink_failures(problem, cases, results, session, opts, shown, dtypes, deadline))
    output = session.close()
    return finish(None, results, output)
