"""The learner's attempts and unfinished code on the exercise page, kept across restarts in SQLite.

One file, ``$XDG_DATA_HOME/grader/history.sqlite3`` (default ``~/.local/share/grader``), one
row per Run: when, which problem and framework, the source, the verdict and score, and the
learner JSON report (so an attempt's result and heat maps can be shown again); and one draft
per problem and framework, the editor's code as last typed. The drafts were kept in the
browser's storage, which belongs to the page's address (``127.0.0.1:PORT``), not to the server:
once ``grader serve`` stopped, another local user listening on that port read every draft when
the page was opened again (attack round 61). Here they are behind the page's token, in a folder
only the user opens.
"""
from __future__ import annotations

import json
import os
import sqlite3
import stat
import time
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    time REAL NOT NULL,
    problem TEXT NOT NULL,
    framework TEXT NOT NULL,
    source TEXT NOT NULL,
    passed INTEGER NOT NULL,
    score REAL,
    max_score REAL,
    seconds REAL,
    report TEXT NOT NULL
)
"""
DRAFTS = """
CREATE TABLE IF NOT EXISTS drafts (
    problem TEXT NOT NULL,
    framework TEXT NOT NULL,
    time REAL NOT NULL,
    source TEXT NOT NULL,
    PRIMARY KEY (problem, framework)
)
"""
#: attempts listed per problem (the newest)
LIST_LIMIT = 50


def data_folder() -> Path:
    """The user's grader data folder: ``$XDG_DATA_HOME/grader``, else ``~/.local/share/grader``."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "grader"


def private_file(path: Path) -> None:
    """Make ``path``'s folder (mode 0700) and the file itself (0600, empty) if missing; an existing
    folder or file of this user is made private too (round 62: a data folder the user had made
    0755 left ``history.sqlite3`` and its ``-wal`` and ``-shm`` files, which SQLite makes with the
    database's mode, readable by every local user). SQLite's own files take the database's mode.

    Raises:
        OSError: the file is a symbolic link (never followed), or the folder or the file is a
            link or another user's (PermissionError).
    """
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    if _loose(folder):
        os.chmod(folder, 0o700)
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600))
    if _loose(path):   # a new file: a reader that opened the loose one keeps only its old contents
        _copied_private(path)   # (attack round 63: a chmod left its open handle reading new drafts)
    for extra in ("-wal", "-shm"):
        side = path.with_name(path.name + extra)
        try:
            st = os.lstat(side)
        except FileNotFoundError:
            continue
        if not stat.S_ISLNK(st.st_mode) and st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) & 0o077:
            os.chmod(side, 0o600)


def _loose(target: Path) -> bool:
    """Whether ``target`` (this user's, no link) grants anything to others.

    Raises:
        PermissionError: it is a symbolic link or another user's.
    """
    st = os.lstat(target)
    if stat.S_ISLNK(st.st_mode) or st.st_uid != os.geteuid():
        raise PermissionError(f"{target} is a link or another user's: the exercise page keeps learners' code there")
    return bool(stat.S_IMODE(st.st_mode) & 0o077)


def _copied_private(path: Path) -> None:
    """Replace the SQLite database at ``path`` by a copy of it in a new file of mode 0600 (SQLite's
    backup, which reads its write-ahead log too), renamed over it; the old ``-wal`` and ``-shm``
    go with their last connection."""
    fresh = path.with_name(path.name + ".private-new")
    fresh.unlink(missing_ok=True)
    os.close(os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600))
    source, copy = sqlite3.connect(path), sqlite3.connect(fresh)
    try:
        source.backup(copy)
    finally:
        copy.close()
        source.close()
    os.replace(fresh, path)


class History:
    """The attempts database at ``path`` (default :func:`data_folder`/history.sqlite3), created
    on first use (folder mode 0700: the sources are the learner's)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or data_folder() / "history.sqlite3"
        private_file(self.path)
        with self._connect() as db:
            db.execute(SCHEMA)
            db.execute(DRAFTS)
            # write-ahead log: a Run's insert appends to the log without an fsync of the
            # database each time (synchronous=NORMAL), which cost 20-50 ms of each Run on a
            # busy disk; a crash loses at most the last attempts, never the file
            db.execute("PRAGMA journal_mode=WAL")

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=10)
        db.row_factory = sqlite3.Row
        db.execute("PRAGMA synchronous=NORMAL")
        return db

    def add(self, problem: str, framework: str, source: str, report: dict[str, Any], seconds: float) -> int:
        """Store one attempt; its id."""
        with self._connect() as db:
            cur = db.execute(
                "INSERT INTO attempts (time, problem, framework, source, passed, score, max_score, seconds, report)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (time.time(), problem, framework, source, int(bool(report.get("passed"))), report.get("score"),
                 report.get("max_score"), seconds, json.dumps(report)))
            return int(cur.lastrowid)

    def list(self, problem: str | None = None) -> list[dict[str, Any]]:
        """The newest attempts (of ``problem``, or all), newest first, without source and report;
        ``failure``: the kind of the run's own failure (``import``, ``timeout``...: the page's
        ERROR), or None."""
        query = ("SELECT id, time, problem, framework, passed, score, max_score, seconds, "
                 "json_extract(report, '$.failure.kind') AS failure FROM attempts")
        params: tuple[Any, ...] = ()
        if problem:
            query += " WHERE problem = ?"
            params = (problem,)
        with self._connect() as db:
            rows = db.execute(query + " ORDER BY id DESC LIMIT ?", (*params, LIST_LIMIT)).fetchall()
        return [{**dict(row), "passed": bool(row["passed"])} for row in rows]

    def get(self, attempt: int) -> dict[str, Any] | None:
        """One attempt with its source and report, or None."""
        with self._connect() as db:
            row = db.execute("SELECT * FROM attempts WHERE id = ?", (attempt,)).fetchone()
        if row is None:
            return None
        out = dict(row)
        out["passed"] = bool(out["passed"])
        out["report"] = json.loads(out["report"])
        return out

    def drafts(self, problem: str) -> dict[str, str]:
        """The drafts of ``problem``: framework name -> source."""
        with self._connect() as db:
            rows = db.execute("SELECT framework, source FROM drafts WHERE problem = ?", (problem,)).fetchall()
        return {row["framework"]: row["source"] for row in rows}

    def save_draft(self, problem: str, framework: str, source: str) -> None:
        """Keep ``source`` as the draft of ``problem`` in ``framework`` (replacing the last)."""
        with self._connect() as db:
            db.execute("INSERT INTO drafts (problem, framework, time, source) VALUES (?, ?, ?, ?) "
                       "ON CONFLICT (problem, framework) DO UPDATE SET time = excluded.time, source = excluded.source",
                       (problem, framework, time.time(), source))
