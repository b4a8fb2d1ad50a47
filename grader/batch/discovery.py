"""Which files are submissions: the learners under the paths given to ``grader grade``, each
with their file (:func:`discover`), and which shard a learner is in (:func:`in_shard`).

For each PATH given:

* a ``.py`` file (or a Jupyter notebook, ``.ipynb``: every rule here takes both) is one
  learner, whose id is the file stem; it is graded alone (nothing beside it is taken along);
* a folder holding a single ``.py`` file (at any depth) is one learner's folder, whose id is
  the folder name (so ``grader grade class/*/`` works when each folder holds one file);
* any other folder holds learners: each ``.py`` file directly in it is one learner (id: the
  stem), and each subfolder is one learner's folder (id: the folder name), graded on its
  only ``.py`` file, or else on the one that defines the problem's function. With none or
  several, the learner gets a failing row of kind ``import`` that says so. Give the folder
  that holds the learners' folders (``class/``), not a learner's folder with several files.
  The file of a learner's folder is graded with the sibling modules it imports
  (``grader.siblings``: ``solution.py`` doing ``from helper import f``). A file that defines
  the function but does not parse counts only when no file that parses defines it (a broken old
  draft must not hide a good ``solution.py``); when such a file is passed over for another, the
  learner's row (``message``), report (``environment.discovery_note``, which the text report
  shows as ``note:``) and feedback file name it and say why (:attr:`Submission.note`).

Learners are listed first without reading any file (:func:`enumerate_learners`); the file of
a learner's folder of several is chosen when that learner's turn comes (:func:`choose`), within
a budget per learner (:class:`Budget`: 32 candidate files, 1 MiB each, 4 MiB and 5 s in all), so
one learner's folder never holds up the others; past it, the learner's row says which limit and
names the files considered. :func:`discover` does both at once.

Hidden folders, ``__pycache__`` and virtual environments are skipped, and so are test files
(``test_*.py``, ``*_test.py``, ``conftest.py``). Learner ids that occur twice get ``-2``,
``-3``... in the order found (a path given twice is one learner; two paths that lead to one
file through a link are two). Ids are names made printable (:func:`learner_id`: a non-UTF-8
byte or a control character becomes a visible escape). Symbolic links inside the folders
given are not followed: a linked file or folder is a learner whose row says so.

Sharding: ``--shard I/N`` keeps the learners whose id hashes (SHA-256) to I - 1 modulo N
(:func:`in_shard`), so the N shards of one class are disjoint, their union is the class, and a
learner's shard does not depend on who else is in the class (``grader merge`` joins them:
:mod:`grader.batch.merge`).
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ..errors import GraderError
from ..results import EMPTY_FOLDER  # how an empty folder's note begins

SKIP_DIRS = frozenset({"__pycache__", "node_modules", "site-packages", "venv", "env"})


@dataclass
class Submission:
    """One learner's submission, as found by :func:`discover`.

    Attributes:
        learner: the learner id: a file stem or folder name, made unique with ``-2``, ``-3``...
        path: the ``.py`` file to grade, or None when a learner's folder has no identifiable one.
        note: why ``path`` is None (one line); or, with a ``path``, what the learner should know
            about the choice (a file defining the function that does not parse, passed over),
            printable on one line; else None.
        folder: the learner's folder when ``path`` is None.
        siblings: whether the check takes along the modules beside ``path`` that it imports
            (``grader.siblings``): only for a file in a learner's own folder, never for a file
            that shares its folder with other learners' files.
        candidates: for a learner's folder of several files whose file is not chosen yet
            (:func:`enumerate_learners`), the files to choose from (at most the budget's
            ``files``), in order; :func:`choose` chooses. None otherwise.
        overflow: why ``candidates`` is not the whole folder (more files or entries than the
            budget allows), or None.
        missing: nothing was submitted (a folder with no .py file, a roster learner of whom
            nothing was found): the row's kind is ``missing``, not a failure of code.
    """

    learner: str
    path: Path | None
    note: str | None = None
    folder: str = ""
    siblings: bool = False
    candidates: tuple[Path, ...] | None = None
    overflow: str | None = None
    anchor: tuple[str, str] | None = None   # (the path given, absolute; its real path when found)
    given: bool = False                      # a learner's folder given by path (not found in a class)
    missing: bool = False

    @property
    def shown(self) -> str:
        """The path shown in the gradebook and reports: the file, or else the learner's folder."""
        return str(self.path) if self.path is not None else self.folder


def _skipped_dir(name: str) -> bool:
    return name.startswith(".") or name in SKIP_DIRS


SUFFIXES = (".py", ".ipynb")  # a learner's file: Python source or a Jupyter notebook


def _skipped_file(name: str) -> bool:
    return (not name.endswith(SUFFIXES) or name.startswith(".") or name == "conftest.py"
            or name.startswith("test_") or name.endswith("_test.py"))


#: how many folder levels below a learner's folder are searched for their files
MAX_DEPTH = 32


def _py_files(folder: Path, limit: int | None = None, max_entries: int | None = None,
              tests: list[str] | None = None) -> tuple[list[Path], str | None]:
    """The candidate ``.py`` files under ``folder`` (down to :data:`MAX_DEPTH` levels), sorted,
    and None; or, once more than ``limit`` files or ``max_entries`` folder entries are seen,
    the first ``limit + 1`` files found and why the walk stopped (a learner's folder of a million
    files is not walked to the end). Walked without recursion (:func:`grader.siblings.walk_tree`):
    a learner's folder nested a thousand levels deep once aborted the whole class run with
    RecursionError. ``tests``, when given, collects up to three names of the files passed over as
    tests (``test_*.py``, ``*_test.py``, ``conftest.py``)."""
    from ..siblings import walk_tree

    found: list[Path] = []
    entries = 0
    for root, dirs, files in walk_tree(folder, MAX_DEPTH):
        entries += len(dirs) + len(files)
        dirs[:] = sorted(d for d in dirs if not _skipped_dir(d))
        found += [Path(root, f) for f in sorted(files) if not _skipped_file(f)]
        if tests is not None and len(tests) < 3:   # passed over as tests: named if nothing else is found
            tests += [f for f in sorted(files) if f.endswith(SUFFIXES) and not f.startswith(".")
                      and _skipped_file(f)][:3 - len(tests)]
        if limit is not None and len(found) > limit:
            return found[:limit + 1], f"it holds more than {limit} .py files"
        if max_entries is not None and entries > max_entries:
            return found, f"it holds more than {max_entries} files and folders"
    return found, None


def learner_id(name: str) -> str:
    """The learner id of a file stem or folder name: :func:`grader.reports.common.printable` on
    one line, so an id is always valid UTF-8 (a non-UTF-8 byte becomes ``\\xNN``, a backslash
    ``\\\\``) and holds no control, escape or bidi character: two names never share an id."""
    from ..reports.common import printable
    # a literal backslash is escaped too: a folder named 'lat\\xe9' (typed) and one named with the
    # byte 0xE9 were one id, and the first in order took it (found by an attacker helper)
    return printable(name.replace("\\", "\\\\"), one_line=True)


def _is_link(path: Path) -> bool:
    return os.path.islink(path)


@dataclass(frozen=True)
class Budget:
    """What choosing one learner's file out of their folder may cost (:func:`choose`), so that
    one learner's folder never holds up the class (issue round three, class 8: a folder of 64
    junk files of 1 MiB each was parsed, about 10 s each, before anyone was graded).

    Attributes:
        files: candidate ``.py`` files considered at most (as many as siblings taken along).
        file_bytes: bytes read of one file at most (a larger one is never read: it cannot be
            the submission, ``grader.check.MAX_SUBMISSION_BYTES``).
        total_bytes: bytes read in all.
        seconds: seconds of reading and parsing in all, checked before each file (one file's
            parse, at most ``file_bytes`` of source, can go past it). A notebook is converted
            by the check's own code (``grader.submission.load_submission``,
            ``grader.notebook.convert``): linear in its bytes and refused past
            ``grader.notebook.MAX_CELLS`` cells before nbformat reads it, so one file costs a
            fraction of a second (a 1 MiB notebook of 22,303 empty cells took 5.7 CPU-s, and
            29 s at load 6, before; round four, class 4).
        entries: files and folders listed at most while looking for candidates.
    """

    files: int = 32
    file_bytes: int = 1 << 20
    total_bytes: int = 4 << 20
    seconds: float = 5.0
    entries: int = 10_000

    def describe(self) -> str:
        """The limits, as a learner's note states them."""
        return (f"at most {self.files} .py files, {self.file_bytes >> 20} MiB each, {self.total_bytes >> 20} MiB "
                f"and {self.seconds:g} s in all")


#: the budget of every learner's folder in ``grader grade`` (and :func:`discover`)
DISCOVERY_BUDGET = Budget()
#: the clock discovery's time budget is measured with (a test may replace it)
_clock = time.monotonic


def enumerate_learners(paths: Iterable[str], budget: Budget = DISCOVERY_BUDGET,
                       exclude: Iterable[str] = ()) -> list[Submission]:
    """The learners under ``paths``, in the order found, with unique ids, without reading any
    learner's file: a learner's folder of several files comes back with its ``candidates``
    (:func:`choose` picks the file when that learner's turn comes). Folders are walked only so
    far: a learner's folder to ``budget.files + 1`` files or ``budget.entries`` entries, a path
    given to two files (to tell one learner's folder from a class).

    Learners are told apart by the path found (made absolute, not resolved): a file, a learner's
    folder of one file by that file, a learner's folder of several by the folder. (So a file
    given on its own that lies in a learner's folder of several files found too is a learner of
    its own; :func:`discover` tells them apart by the chosen file, as it always did.)

    Raises:
        GraderError: a path does not exist, is neither a ``.py`` file nor a folder, or is a
            folder holding no ``.py`` file.

    Learners whose own folder was given by path take their ids before those found inside a
    folder of several (``grade class/*/`` with a learner's folder holding
    ``alice.py`` took the id of the real alice). Folders in ``exclude`` (real paths: the output
    folder) are no learner. Each learner records its ``anchor``: the path given and its real
    path now, before anyone is graded, so that a folder swapped for a link later is noticed
    (:func:`anchored`).
    """
    return _unique(_found(list(paths), budget, {os.path.realpath(e) for e in exclude}))


def anchored(sub: Submission) -> str:
    """The absolute path of ``sub``'s file through its anchor's real path as it was found: with
    ``GRADER_STRICT_PATHS`` set, the check refuses a file whose real path is not exactly this
    (``grader.siblings.read_no_follow``), so no folder below the path given can have been
    replaced by a symbolic link in between."""
    assert sub.path is not None
    given = absolute_path(sub.path)
    if sub.anchor is None:
        return given
    lexical, real = sub.anchor
    rel = os.path.relpath(os.path.normpath(given), os.path.normpath(lexical))
    return os.path.join(real, rel) if not rel.startswith("..") else given


def _found(paths: list[str], budget: Budget, exclude: set[str] = frozenset()) -> list[Submission]:
    """The learners under ``paths`` before ids are made unique (:func:`enumerate_learners`)."""
    found: list[Submission] = []
    for raw in paths:
        p = Path(raw)
        start = len(found)
        if p.is_file() or (_is_link(p) and p.suffix in SUFFIXES):  # a link: its check reports it
            if p.suffix not in SUFFIXES:
                raise GraderError(f"{raw!r} is not a .py file; give submissions (.py files) or folders of them")
            found.append(Submission(learner_id(p.stem), p))
            anchor = os.path.dirname(absolute_path(p))
        elif p.is_dir():
            anchor = absolute_path(p)
            files, _ = _py_files(p, limit=1)  # one learner's folder, or a class: two files tell
            if not files:
                raise GraderError(f"{raw!r} holds no .py or .ipynb file; give submissions (.py files or "
                                  ".ipynb notebooks) or folders of them")
            if len(files) == 1:  # one learner's folder
                found.append(Submission(learner_id(p.resolve().name), files[0], siblings=True, given=True))
            for entry in sorted(p.iterdir()) if len(files) > 1 else ():  # a class
                if os.path.realpath(entry) in exclude:     # the output folder is no learner
                    continue
                if _is_link(entry):  # never followed
                    if entry.is_dir() and not _skipped_dir(entry.name):
                        found.append(Submission(learner_id(entry.name), None,
                                                f"the learner's folder {entry} is a symbolic link; the grader "
                                                "does not follow links", str(entry)))
                    elif not entry.is_dir() and not _skipped_file(entry.name):
                        found.append(Submission(learner_id(entry.stem), entry))
                elif entry.is_dir() and not _skipped_dir(entry.name):
                    found.append(_learner_folder(entry, budget))
                elif not _skipped_file(entry.name):  # a FIFO or device too: its check reports it
                    found.append(Submission(learner_id(entry.stem), entry))
        else:
            raise GraderError(f"{raw!r} does not exist; give submissions (.py files) or folders of them")
        real = os.path.realpath(anchor)
        for sub in found[start:]:
            sub.anchor = (anchor, real)
    return found


def _learner_folder(folder: Path, budget: Budget) -> Submission:
    """A learner's folder in a class, its files listed (within ``budget``), none read."""
    tests: list[str] = []
    files, overflow = _py_files(folder, limit=budget.files, max_entries=budget.entries, tests=tests)
    learner = learner_id(folder.name)
    if not files and tests:
        # nothing but tests: counted as nothing submitted (a classroom starter's tests/ folder is
        # no work), but said truly: an attacker's only file, test_solution.py, read "holds no .py file"
        return Submission(learner, None, f"{EMPTY_FOLDER} {folder} holds no .py or .ipynb file but files named as tests "
                                         f"({', '.join(tests)}), which are never graded as the submission",
                          str(folder), missing=True)
    if not files:
        # nothing submitted: counted with the roster's learners of whom nothing was found
        # (gradebook.no_submission), not as a file that could not be graded
        return Submission(learner, None, f"{EMPTY_FOLDER} {folder} holds no .py or .ipynb file", str(folder), missing=True)
    if len(files) == 1 and overflow is None:
        return Submission(learner, files[0], siblings=True)
    return Submission(learner, None, None, str(folder), candidates=tuple(files[:budget.files]), overflow=overflow)


def choose(sub: Submission, functions: Iterable[str], budget: Budget = DISCOVERY_BUDGET) -> Submission:
    """``sub`` with its file chosen, when it is a learner's folder of several files
    (``sub.candidates``); else ``sub`` itself.

    The file graded is the one that defines the function (one of ``functions``); a file that
    defines it but does not parse counts only when no file that parses does (an old broken
    draft beside a good solution.py must not hide it), and when it is passed over for another
    the learner's note says so. None or several: no file, and the note says which. A file in
    which no function's name occurs at all is read but never parsed.

    Bounded by ``budget``: at most ``budget.files`` candidates (a folder with more is refused
    without reading any), ``budget.file_bytes`` read per file, ``budget.total_bytes`` and
    ``budget.seconds`` in all. Past a bound, the learner gets no file and a note that says so,
    with the files considered: the learner's row then says what to submit instead.

    Never raises for what the learner's folder holds (a file that cannot be read counts as one
    that does not define the function).
    """
    if sub.candidates is None:
        return sub
    from ..submission import defined_functions, load_submission, names_in, scanned_functions

    wanted = frozenset(functions)
    folder = Path(sub.folder)
    files = list(sub.candidates)
    seen: dict[Path, tuple[bool, str | None]] = {}
    why = sub.overflow
    started, spent = _clock(), 0
    for f in files if why is None else []:
        if _clock() - started > budget.seconds:
            why = f"looking through its files took more than {budget.seconds:g} s"
            break
        try:
            size = os.lstat(f).st_size
        except OSError:
            size = 0
        if size <= budget.file_bytes and spent + size > budget.total_bytes:
            why = f"its .py files hold more than {budget.total_bytes >> 20} MiB"
            break
        try:
            loaded = load_submission(f, parse_if=lambda source: names_in(source, wanted))
        except GraderError:  # gone, or unreadable: not the submission
            seen[f] = (False, None)
            continue
        spent += loaded.read
        if loaded.tree is not None:
            seen[f] = (bool(defined_functions(loaded.tree) & wanted), None)
        elif not loaded.parsed or not scanned_functions(loaded.source) & wanted:
            seen[f] = (False, None)
        elif loaded.syntax_error is not None:
            err = loaded.syntax_error
            seen[f] = (False, f"does not parse (line {err.lineno or 1}: {err.msg})")
        else:
            seen[f] = (False, f"cannot be graded ({loaded.fault or 'it cannot be read'})")
    if why is not None:
        considered = list(seen) or files
        return dataclasses.replace(sub, path=None, candidates=None, note=learner_id(
            f"the grader stopped looking for the submission in the learner's folder: {why}; considered: "
            f"{_names(folder, considered)} (it looks through {budget.describe()}): submit only the file "
            f"that defines {' or '.join(sorted(wanted))} and the .py modules it imports"))
    chosen = [f for f in files if seen[f][0]] or [f for f in files if seen[f][1]]
    if len(chosen) == 1:
        passed_over = [f for f in files if seen[f][1] and f not in chosen]
        return dataclasses.replace(sub, path=chosen[0], candidates=None, siblings=True, note=_passed_over_note(
            folder, chosen[0], [(f, seen[f][1] or "") for f in passed_over], wanted))
    listed = chosen or files
    if not chosen:
        note = f"no .py file in the learner's folder {folder} defines {' or '.join(sorted(wanted))} ({_names(folder, listed)})"
    else:
        note = f"several .py files in the learner's folder {folder} define {' or '.join(sorted(wanted))} ({_names(folder, listed)})"
    return dataclasses.replace(sub, path=None, candidates=None, note=note)


def _names(folder: Path, files: list[Path]) -> str:
    """Up to five of ``files`` by their path in ``folder``, then ``...``."""
    return ", ".join(str(f.relative_to(folder)) for f in files[:5]) + (", ..." if len(files) > 5 else "")


def discover(paths: Iterable[str], functions: Iterable[str], budget: Budget = DISCOVERY_BUDGET) -> list[Submission]:
    """The submissions under ``paths``, in the order found, with unique learner ids, each
    learner's file chosen (:func:`choose`, within ``budget`` per learner).

    Args:
        paths: files and folders as given on the command line (see the module docstring).
        functions: the function names a submission may define (the problem's), used to pick
            the submission in a learner's folder holding several ``.py`` files.
        budget: what choosing one learner's file may cost (:class:`Budget`).

    ``grader grade`` itself lists the learners first (:func:`enumerate_learners`) and chooses
    each learner's file only when that learner's turn comes, so that no learner's folder holds
    up the others; this is both at once, for callers that want the whole list (the Gradescope
    template).

    Symbolic links inside the folders given are never followed: a linked ``.py`` file is a
    learner whose check reports the link, a linked folder a learner with a note saying so.
    Learners are told apart by the path found, never by what it resolves to.

    Raises:
        GraderError: a path does not exist, is neither a ``.py`` file nor a folder, or is a
            folder holding no ``.py`` file.
    """
    wanted = list(functions)
    return _unique([choose(s, wanted, budget) for s in _found(paths, budget)])


#: files and characters of each reason a passed-over note names at most
NOTE_FILES, NOTE_REASON = 3, 120


def _passed_over_note(folder: Path, chosen: Path, passed_over: list[tuple[Path, str]],
                      wanted: frozenset[str]) -> str | None:
    """The note of a learner's folder whose files ``passed_over`` (with why) define the function
    but were not graded, ``chosen`` being graded instead; None when there are none. File names
    are the learner's: made printable on one line (:func:`learner_id`)."""
    if not passed_over:
        return None

    def name(path: Path) -> str:
        return learner_id(str(path.relative_to(folder)))

    def cut(text: str) -> str:
        text = learner_id(text)
        return text if len(text) <= NOTE_REASON else text[:NOTE_REASON - 3] + "..."

    parts = [f"{name(f)} {cut(why)}" for f, why in passed_over[:NOTE_FILES]]
    if len(passed_over) > NOTE_FILES:
        parts.append(f"and {len(passed_over) - NOTE_FILES} more")
    return (f"graded {name(chosen)}, not the file{'s' if len(passed_over) > 1 else ''} that also define"
            f"{'' if len(passed_over) > 1 else 's'} {' or '.join(sorted(wanted))}: {'; '.join(parts)}")


def _unique(found: list[Submission]) -> list[Submission]:
    """Drop repeats of one path; give repeated learner ids ``-2``, ``-3``... in order.

    Paths are compared as found (made absolute, ``..`` and links not resolved): two paths that
    lead to one file through a link are two learners, never one learner dropped.
    """
    seen_files: set[str] = set()
    subs = []
    for s in found:
        key = os.path.abspath(s.path if s.path is not None else s.folder)
        if key not in seen_files:
            seen_files.add(key)
            subs.append(s)
    bases = {s.learner for s in subs}
    taken: set[str] = set()
    # learners whose folder was given take their ids first: an entry found inside a class
    # folder never takes the id of a learner given by path (a folder holding 'alice.py', given
    # as one of class/*/, took the real alice's id; found by an attacker helper)
    for s in sorted(subs, key=lambda s: not s.given):
        if s.learner in taken:
            n = 2
            while f"{s.learner}-{n}" in bases or f"{s.learner}-{n}" in taken:
                n += 1
            s.learner = f"{s.learner}-{n}"
        taken.add(s.learner)
    return subs


def in_shard(learner: str, index: int, count: int) -> bool:
    """True when ``learner`` belongs to shard ``index`` (1-based) of ``count``.

    The shard is the first 8 bytes of the SHA-256 of the UTF-8 id, modulo ``count``: stable
    across machines, Python versions and class lists.
    """
    digest = hashlib.sha256(learner.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % count == index - 1


def absolute_path(path: str | os.PathLike[str]) -> str:
    """``path`` from this process's working folder, made absolute without normalising it: a
    ``..`` after a linked folder means what the kernel makes of it, as the path given did."""
    text = os.fspath(path)
    return text if os.path.isabs(text) else os.path.join(os.getcwd(), text)
