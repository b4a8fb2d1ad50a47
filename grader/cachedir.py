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
