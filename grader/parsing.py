"""One conversion of source to Python AST objects at a time in the grader's process.

CPython 3.11 keeps the counter that ``ast.parse`` uses while it builds Python AST objects per
interpreter, not per thread (CPython gh-106905, fixed in 3.12.3): when one thread's conversion is
interrupted (a garbage collection runs a finalizer, which lets another thread run) and another
thread converts in between, the first fails a valid source with ``SystemError: AST constructor
recursion depth mismatch``. ``grader validate`` grades its mistakes in threads while the main
thread computes the oracle, and NumPy parses every ``.npy`` header of an ``.npz`` with
``ast.literal_eval``: CI at load 7 failed a correct exercise this way (when the case cache was
an ``.npz``; its file has a JSON header since format 4). Every such conversion in the grader
holds :data:`AST_LOCK`; a parse that still meets the error (another library parsed without the
lock) is retried.
"""

from __future__ import annotations

import ast
import threading

#: held around every ``ast.parse`` / ``np.load`` the grader runs (re-entrant: a finalizer that
#: runs during a parse may parse again in the same thread)
AST_LOCK = threading.RLock()

#: how often a parse that met CPython's interleaving error is tried again
RETRIES = 3


def is_interleaving_error(exc: BaseException) -> bool:
    """True for CPython 3.11's ``SystemError: AST constructor recursion depth mismatch``."""
    return isinstance(exc, SystemError) and "recursion depth mismatch" in str(exc)


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)`` under :data:`AST_LOCK`, retried on CPython's interleaving
    error (gh-106905).

    Args:
        source: Python source text (str, or bytes decoded as ``compile`` does).
        filename: the name tracebacks and ``SyntaxError`` give.

    Returns:
        the module's AST.

    Raises:
        SyntaxError, ValueError, RecursionError, MemoryError: as ``ast.parse``; SystemError when
        the interleaving error persists through :data:`RETRIES` tries.
    """
    for attempt in range(RETRIES + 1):
        with AST_LOCK:
            try:
                return ast.parse(source, filename)
            except SystemError as exc:
                if not is_interleaving_error(exc) or attempt == RETRIES:
                    raise
    raise AssertionError("unreachable")


def format_exception(exc: BaseException) -> str:
    """``traceback.format_exception(exc)`` joined, under :data:`AST_LOCK`: Python 3.11's
    traceback parses each shown line's source to place its ``^^^`` markers."""
    import traceback

    with AST_LOCK:
        return "".join(traceback.format_exception(exc))
