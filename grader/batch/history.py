"""The runs before this one in an output folder, and whose score changed since the last (issue 37).

A ``grader grade`` into a folder that holds a finished run's gradebook (without ``--resume``)
moves that run's ``gradebook.csv``, ``settings.json``, ``submitted.json`` and ``reports/`` into
``history/<UTC time>/`` (:func:`archive`) and grades everyone again. :func:`changes` compares
this run with the newest kept one: each learner whose score moved, by how much, and why, from
the digests the two runs recorded:

* ``spec changed``: the problem's (or assignment's) spec and reference digest of ``settings.json``;
* ``seed changed``: ``--seed``, or seeds from a secret one run and not the other;
* ``file changed``: the digest of the learner's files each report records
  (``environment.submission_sha256``);
* otherwise what else of the settings differs (grader version, ``--max-examples``...), or
  ``nothing recorded changed`` (a flaky submission: timing, randomness).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from ..errors import GraderError
from .gradebook import GRADEBOOK, REPORTS, Row, load_report, read_gradebook, report_path

HISTORY = "history"
KEPT = (GRADEBOOK, "settings.json", "submitted.json", REPORTS)


@dataclass
class Change:
    """A learner whose score differs from the previous run's: ``before`` and ``after`` (points)
    and ``why`` (what the two runs' records say changed, in words)."""

    learner: str
    before: float
    after: float
    why: list[str]

    @property
    def delta(self) -> float:
        """``after - before``."""
        return self.after - self.before


def archive(out: Path) -> Path:
    """Move the previous run's gradebook, settings, times and reports of ``out`` into
    ``out/history/<UTC time>/``; that folder.

    Raises:
        GraderError: they cannot be moved.
    """
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    target, n = out / HISTORY / stamp, 1
    while target.exists():
        n += 1
        target = out / HISTORY / f"{stamp}-{n}"
    try:
        target.mkdir(parents=True)
        for name in KEPT:
            if (out / name).exists():
                os.replace(out / name, target / name)
    except OSError as exc:
        raise GraderError(f"cannot keep the previous run of --out {str(out)!r} in {target}: "
                          f"{exc.strerror or exc}") from None
    return target


def previous(out: Path) -> Path | None:
    """The newest run kept in ``out/history/`` that has a gradebook, or None."""
    try:
        runs = sorted((p for p in (out / HISTORY).iterdir() if (p / GRADEBOOK).is_file()), key=lambda p: p.name)
    except OSError:
        return None
    return runs[-1] if runs else None


def longest_first(learners: list[str], out: Path, resumed: list[Row] = (),
                  guess: Callable[[str], float] | None = None) -> list[str]:
    """``learners`` in the order to grade them: longest check first, by the seconds the newest
    kept run of ``out`` (or ``resumed``, the rows of an interrupted run) recorded for each.

    With ``--jobs N`` a class takes about the longer of (sum of check times) / N and its longest
    check, if that check starts first; started last (a learner whose code loops until
    ``--timeout``, say), it adds its whole time at the end. Longest-processing-time-first is the
    classic greedy for this (Graham, "Bounds on multiprocessing timing anomalies", SIAM J. Appl.
    Math. 17(2), 1969: within 4/3 of the best order). A learner without a recorded time is taken
    to need the median recorded one; ties keep the given order. Without any recorded run the
    order is by ``guess`` (a learner's relative cost, larger first: :func:`cost_guess`), else
    unchanged. Timings only decide the order: verdicts and files do not depend on it.
    """
    seconds: dict[str, float] = {row.learner: row.seconds for row in resumed}
    before = previous(out)
    if before is not None:
        try:
            for row in read_gradebook(before / GRADEBOOK):
                seconds.setdefault(row.learner, row.seconds)
        except GraderError:  # an unreadable old gradebook only costs the order
            pass
    if not seconds:
        if guess is not None:
            costs = {name: guess(name) for name in learners}
            return sorted(learners, key=lambda name: -costs[name])
        return list(learners)
    known = sorted(seconds.values())
    median = known[len(known) // 2]
    return sorted(learners, key=lambda name: -seconds.get(name, median))


#: a check's relative cost by the framework its file imports, for a class graded the first time:
#: a warm check of a correct JAX file of tied_lm_head took 1.5 s where a NumPy one took 0.3 s
#: (benchmarks/bench_batch.py, docs/performance.md); a PyTorch child's start is like JAX's
FRAMEWORK_COST = {"numpy": 1.0, "jax": 4.0, "torch": 4.0}
#: the relative cost of a file with a loop only ``break``, ``return`` or an exception can end
#: (``while True:``): an endless one runs until the call's time limit (10 s by default, about
#: 30 NumPy checks). Started last, it ran alone for its 10 s at the end of a 50-learner grade
#: with two jobs (issue 33)
OPEN_LOOP_COST = 20.0


def cost_guess(path: Path | None) -> float:
    """A relative cost of checking the file at ``path`` before any run of it was timed: by the
    framework it imports (:data:`FRAMEWORK_COST`, from ``grader.forkserver_client.framework_of``:
    the file's first ``import jax``/``import torch`` line), or :data:`OPEN_LOOP_COST` for a
    ``.py`` file with a ``while`` loop on a constant true test (:func:`has_open_loop`). The file
    is read without following links, 256 KiB at most; 1.0 for no file or one that cannot be
    read. Only an order: a wrong guess costs time, never a verdict."""
    from ..forkserver_client import framework_of, read_head
    head = None if path is None else read_head(str(path))
    if head is None:
        return 1.0
    cost = FRAMEWORK_COST.get(framework_of(head), 1.0)
    return max(cost, OPEN_LOOP_COST) if str(path).endswith(".py") and has_open_loop(head) else cost


def has_open_loop(source: bytes) -> bool:
    """Whether the Python ``source`` has a ``while`` loop whose test is a constant true value
    (``while True:``, ``while 1:``); False for source that does not parse."""
    import ast
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(isinstance(node, ast.While) and isinstance(node.test, ast.Constant) and bool(node.test.value)
               for node in ast.walk(tree))


def _settings(folder: Path) -> dict[str, Any]:
    from .settings import read_settings
    try:
        return read_settings(folder) or {}
    except GraderError:
        return {}


def _digest(folder: Path, learner: str) -> str | None:
    try:
        value = load_report(report_path(folder, learner)).environment.get("submission_sha256")
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return value if isinstance(value, str) else None


def changes(out: Path, rows: list[Row]) -> tuple[str | None, list[Change]]:
    """The name of the newest kept run of ``out`` (None without one) and the learners of
    ``rows`` whose score differs from theirs there, biggest change first."""
    from .settings import settings_diff
    before = previous(out)
    if before is None:
        return None, []
    try:
        old = {r.learner: r for r in read_gradebook(before / GRADEBOOK)}
    except GraderError:
        return before.name, []
    then, now = _settings(before), _settings(out)
    common: list[str] = []
    if then.get("spec") != now.get("spec"):
        common.append("spec changed")
    if then.get("seed") != now.get("seed") or then.get("seed_secret") != now.get("seed_secret"):
        common.append("seed changed")
    other = settings_diff(then, now, skip=("spec", "seed", "seed_secret"), labels=("before", "now")) \
        if then and now else []
    found = []
    for row in rows:
        was = old.get(row.learner)
        if was is None or abs(was.score - row.score) < 1e-9:
            continue
        why = list(common)
        d_then, d_now = _digest(before, row.learner), _digest(out, row.learner)
        if d_then != d_now:
            why.append("file changed" if d_then and d_now else
                       "submitted now" if d_now else "nothing graded now")
        why += other
        found.append(Change(learner=row.learner, before=was.score, after=row.score,
                            why=why or ["nothing recorded changed (timing or randomness in the submission)"]))
    return before.name, sorted(found, key=lambda c: (-abs(c.delta), c.learner))
