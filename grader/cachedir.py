"""Where the grader's caches live (a module of its own, imported by :mod:`grader.spec` and
:mod:`grader.cache` alike, so that neither imports the other's dependencies)."""
from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path | None:
    """The cache folder, or None when caching is off (``GRADER_NO_CACHE`` set).

    ``$GRADER_CACHE_DIR``, else ``$XDG_CACHE_HOME/grader``, else ``~/.cache/grader`` (the XDG Base
    Directory Specification).
    """
    if os.environ.get("GRADER_NO_CACHE"):
        return None
    if os.environ.get("GRADER_CACHE_DIR"):
        return Path(os.environ["GRADER_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "grader"


def private(st: os.stat_result) -> bool:
    """Whether a file or folder (its ``os.stat``) is this user's and nobody else may write it: a
    memo that decides what a learner is shown is read and written only where this holds (a
    shared cache folder, which the Slurm template allows, gets none)."""
    return st.st_uid == os.geteuid() and not st.st_mode & 0o022


def private_root() -> Path | None:
    """:func:`cache_root` when it exists and is :func:`private`, else None."""
    root = cache_root()
    try:
        return root if root is not None and private(os.stat(root)) else None
    except OSError:
        return None
