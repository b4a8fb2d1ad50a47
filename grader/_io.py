"""Output helpers the commands share: :func:`write_output` (a report, a gradebook, an export:
to a file atomically, or to stdout) and :func:`csv_line` (one CSV line, ``\n``-terminated).

It imports only ``grader.errors``, so every command and the batch write their files the same
way without importing the CLI.
"""
from __future__ import annotations

import csv
import io
import os
import sys
import tempfile
from pathlib import Path
from typing import Iterable

from .errors import GraderError


def write_output(text: str, path: str | None) -> None:
    """Write ``text`` to ``path`` atomically (a temp file renamed into place), or to stdout.

    A path that exists and is not a regular file (``/dev/null``, a FIFO) is written in place.

    Raises:
        GraderError: the file cannot be written.
    """
    if not path:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    target = Path(path)
    try:
        if target.exists() and not target.is_file():
            # a device, FIFO or the like (/dev/null, /dev/stdout): write into it; renaming a
            # temp file over it would replace the device with a regular file
            with open(target, "w", encoding="utf-8") as fh:
                fh.write(text)
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, target)
    except OSError as exc:
        raise GraderError(f"cannot write --output {path!r}: {exc.strerror or exc}") from None


def csv_line(cells: Iterable[str]) -> str:
    """One CSV line of ``cells`` (quoted as needed, ``\n``-terminated): a gradebook's or a
    feedback index's row."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(list(cells))
    return buf.getvalue()
