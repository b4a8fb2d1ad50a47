"""In-memory memos of what a check reads from disk, kept only by a fork server's grader.

A fork server (:mod:`grader.forkserver`) loads the problem specs and case sets once and forks a
grader per check; the forked grader finds them here instead of reading and parsing the files
again (the 11 bundled specs' YAML 0.2 CPU s of a warm NumPy check; the case set's file, 0.24 s
as an ``.npz``, 15-20 ms since it is one mapped file: ``grader.cache``). Everywhere else (a plain ``grader check``, a library caller, a test) the
memos are off: :data:`ENABLED` is False and :func:`remembered` just calls ``make``.

An entry stands while its file is the one it was made from: the same device, inode, size
modification and change times (:func:`stamp`), so an instructor's edit to a spec, or a case set
written again, is read afresh by the next check. Values must not be mutated by their users;
in the fork server each check works on its own copy-on-write copy, so one check's use never
reaches the next.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Hashable, TypeVar

T = TypeVar("T")

#: set by the fork server before it preloads; off in every other process
ENABLED = False
_store: dict[tuple[str, Hashable], tuple[Hashable, Any]] = {}


def stamp(path: str | os.PathLike[str]) -> tuple[int, int, int, int, int] | None:
    """(device, inode, size, mtime in ns, ctime in ns) of ``path`` (links followed, as the
    readers do), or None when it cannot be stat'ed (nothing is remembered then). The ctime is
    the one time a user cannot set back: a same-size rewrite with its mtime restored
    (``os.utime``) was taken for the old file (attack round 34)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def remembered(kind: str, key: Hashable, mark: Hashable | None, make: Callable[[], T]) -> T:
    """``make()``, or what it returned before for (``kind``, ``key``) while ``mark`` (a
    :func:`stamp`) is unchanged. A None ``mark`` or result is never remembered; exceptions
    pass through and nothing is kept."""
    if not ENABLED:
        return make()
    return remember(kind, key, mark, make)


def remember(kind: str, key: Hashable, mark: Hashable | None, make: Callable[[], T]) -> T:
    """:func:`remembered` whether or not :data:`ENABLED`: for a caller that keeps its own
    values in any process (``check(fn)``'s function name of each spec, in a kernel), values it
    never hands out to be mutated."""
    if mark is None:
        return make()
    entry = _store.get((kind, key))
    if entry is not None and entry[0] == mark:
        return entry[1]
    value = make()
    if value is not None:
        _store[(kind, key)] = (mark, value)
    return value


def forget(kind: str, key: Hashable) -> None:
    """Forget the entry of (``kind``, ``key``), if any."""
    _store.pop((kind, key), None)


def clear() -> None:
    """Forget every entry."""
    _store.clear()
