"""The submission as the grader read it: bytes read once without following links, decoded as
Python decodes them, parsed once, and copied where nothing else can swap them.

:func:`load_submission` gives a :class:`LoadedSubmission` (a notebook is converted to its code
cells' Python first); :class:`PrivateCopy` writes the checked bytes (and the sibling modules taken
along, ``grader.siblings``) into a folder of the grader's for the child to import; the AST
helpers (:func:`functions_of`, :func:`function_line`, :func:`detect_framework`) answer what the
file defines and imports. This is the first stage of a check (docs/architecture.md); nothing
here runs submission code.

Everything the grader does with a submission's bytes is on the check's clock: the loaded record
carries when the file was first read (``read_at``), and :func:`read_submission` (which ``grader
check`` calls before it plans) hands its record on to the next :func:`load_submission` of the
same file in the same thread, which, when the bytes read again are the same, reuses its
conversion and parse and keeps its ``read_at``: a notebook is converted once per check, and
``--total-timeout`` runs from the first read (``grader.plan.make_plan``; security issue round 4,
class 4).
"""
from __future__ import annotations

import ast
import contextlib
import dataclasses
import hashlib
import io
import os
import re
import tempfile
import threading
import time
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .cleanup import remove_tree, sweep_stale
from .errors import GraderError
from .siblings import Siblings, find_siblings, read_no_follow
from .siblings import parse as parse_python


#: the largest submission file read (bytes); a larger one is a fault of the submission
MAX_SUBMISSION_BYTES = 1 << 20
#: seconds for which :func:`read_submission`'s record is handed on to the next load of the same
#: file: far more than reading, converting and parsing take (a 1 MiB notebook: well under a
#: second), so a record left behind by a check that stopped early never moves a later check's
#: clock by more than this
HANDOFF_SECONDS = 30.0


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
        read_at: ``time.monotonic()`` when the file was first read for this check (before the
            read that gave this record when :func:`read_submission` handed one on): the start of
            ``--total-timeout``; 0.0 when not known.
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
    read_at: float = 0.0


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
        raise GraderError(f"submission {path!r} is a directory; give a .py file or an .ipynb notebook "
                          "(grader grade takes a learner's folder)")
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
    earlier = _take_handoff()
    read_at = time.monotonic()
    data, fault = _read_no_follow(real, shown)
    if data is None:
        return LoadedSubmission(real, fault=fault, read_at=read_at)
    read, sha256 = len(data), hashlib.sha256(data).hexdigest()
    if (earlier is not None and parse_if is None and earlier[0] == (real, shown, sha256)
            and 0 <= read_at - earlier[1].read_at <= HANDOFF_SECONDS):
        # the very bytes read_submission read for this check: its conversion, parse and clock
        return dataclasses.replace(earlier[1])
    if real.lower().endswith(".ipynb"):
        loaded = _load_notebook(real, data, shown, parse_if)
    else:
        loaded = _load_python(real, data, shown, parse_if)
    loaded.read, loaded.sha256, loaded.read_at = read, sha256, read_at
    return loaded


_HANDOFF = threading.local()


def _take_handoff() -> "tuple[tuple[str, str, str], LoadedSubmission] | None":
    """The record :func:`read_submission` left for this thread, taken (every load takes it, so it
    reaches the next load only), or None."""
    earlier = getattr(_HANDOFF, "loaded", None)
    _HANDOFF.loaded = None
    return earlier


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
    no more. The record is handed on to the next :func:`load_submission` of the same file in
    this thread (within :data:`HANDOFF_SECONDS`): when it reads the same bytes, it reuses the
    conversion and parse, and the check's clock starts at this read.

    Raises:
        GraderError: the file is missing, a directory or unreadable.
    """
    real = str(path)
    loaded = load_submission(real, shown)
    if loaded.sha256:  # handed on to the next load of these bytes in this thread (the check's plan)
        _HANDOFF.loaded = ((real, real if shown is None else shown, loaded.sha256), loaded)
    return loaded.source, loaded.tree, loaded.syntax_error


def _shown_folders(root: str, folder: str) -> None:
    """Make ``folder`` and every folder between it and ``root`` (which exists), each mode 0755
    whatever the umask: under a root grader the child is another user, which must enter them
    (with umask 077 a correct file failed to import, attack round 37)."""
    parts = os.path.relpath(folder, root).split(os.sep)
    here = root
    for part in parts if parts != ["."] else ():
        here = os.path.join(here, part)
        with contextlib.suppress(FileExistsError):
            os.mkdir(here)
        os.chmod(here, 0o755)   # in the grader's own 0700 folder: nobody else put a link here


def _write_shown(path: str, data: bytes) -> None:
    """Write ``data`` to the new file ``path`` (never through a link), mode 0644 whatever the umask."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(fd, "wb") as fh:
        os.fchmod(fh.fileno(), 0o644)
        fh.write(data)


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

    def __init__(self, loaded: LoadedSubmission, siblings: list[tuple[str, bytes]] = (),
                 root: str | None = None) -> None:
        if root is None:
            sweep_stale()   # what a grader killed with SIGKILL left behind
        # root: a spare's folder (grader.run.spare), made ahead and still empty
        self._dir = root or tempfile.mkdtemp(prefix=f"grader-sub-{os.getpid()}-")
        original = os.path.abspath(loaded.path).lstrip(os.sep)
        path = os.path.join(self._dir, original)
        if len(os.fsencode(path)) > 3000:  # far from PATH_MAX with the sandbox's own prefixes
            path = os.path.join(self._dir, os.path.basename(original))
        try:
            _shown_folders(self._dir, os.path.dirname(path))
            _write_shown(path, loaded.data)
            for name, data in siblings:  # plain module file names (siblings.MODULE_FILE), never the main's
                if os.sep in name or name.startswith(".") or name == os.path.basename(path):
                    continue
                _write_shown(os.path.join(os.path.dirname(path), name), data)
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


def detect_framework(tree: ast.Module | None, source: str | None = None) -> str:
    """The submission's framework from its imports: ``"jax"`` or ``"torch"`` if it imports one
    (anywhere in the file; the first in source order if both), else ``"numpy"``; a file that
    does not parse, from its ``source``'s import lines (``grader.frameworks.detect``)."""
    from .frameworks import detect
    return detect(tree, source)


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


def fix_for(message: str, function: str | None) -> str:
    """What the learner should do about the input fault ``message`` (one sentence)."""
    defines = f" that defines {function}" if function else ""
    if "not UTF-8" in message:
        return ("save the file as UTF-8 text (in most editors: 'Save with Encoding' > UTF-8) and submit it "
                "again; a file saved in another encoding, or a notebook or binary file renamed .py, cannot be read")
    if "does not exist" in message:
        return f"submit (commit and push) the .py file under the name the assignment gives{defines}"
    if "directory" in message:
        return f"submit the .py file{defines}, not a folder"
    return f"submit one plain, readable .py file{defines}"
