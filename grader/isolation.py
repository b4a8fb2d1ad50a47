"""The grader's own processes read no configuration, cache or data from their working folder.

The folder ``grader grade`` runs in may be the class folder (the learners' files), and ``grader
check`` may run in a learner's repository. Python's ``-I`` keeps their modules off ``sys.path``;
this module keeps the libraries the grader uses from reading (or writing) files there:

* **matplotlib** (the charts of summary.html) reads ``./matplotlibrc`` before anything else, then
  ``$MATPLOTLIBRC`` and ``$MPLCONFIGDIR``: a learner's ``matplotlibrc`` with ``text.usetex: True``
  once made ``grader grade`` exit 2 after grading everyone. :func:`import_matplotlib` imports it
  with the working folder a neutral empty folder and both variables pointing at a private empty
  folder (its configuration and font-cache folders are fixed then, for the process), and
  :func:`matplotlib_defaults` draws under matplotlib's built-in defaults plus what the charts set,
  so a configuration loaded by someone else's earlier import does not count either. Its font
  list (a cache, no configuration) is kept in the grader's cache folder for the next process.
* **hypothesis** (the shrink search, ``grader.shrink``) keeps its storage in ``./.hypothesis``
  (its constants cache, ``.hypothesis/constants/``, even with ``database=None``):
  :func:`hypothesis_storage` points it at a private folder while the grader's search runs, and
  puts back what the caller had after it.
* **Python processes the grader starts** (the checks of ``grader grade``) run from
  :func:`neutral_folder`, with absolute paths.

The private folder (:func:`private_folder`) is made on first use, readable by this user only,
and removed when the process exits.
"""
from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Iterator

_lock = threading.RLock()
_root: str | None = None
_owner = 0


def _remove(root: str, owner: int) -> None:
    if os.getpid() == owner:  # not in a forked child that inherited the hook
        shutil.rmtree(root, ignore_errors=True)


def private_folder(name: str = "") -> str:
    """A folder of this process's own (mode 0700, under the system's temporary folder, removed
    at exit), or its empty subfolder ``name`` (made on first use).

    Raises:
        OSError: the folder cannot be made.
    """
    global _root, _owner
    with _lock:
        if _root is None or _owner != os.getpid() or not os.path.isdir(_root):
            _root = tempfile.mkdtemp(prefix="grader-own-")
            _owner = os.getpid()
            atexit.register(_remove, _root, _owner)
        if not name:
            return _root
        path = os.path.join(_root, name)
        os.makedirs(path, mode=0o700, exist_ok=True)
        return path


def neutral_folder() -> str:
    """An empty folder of the grader's own to start trusted processes in (their working folder):
    nothing a learner put there can be read as configuration."""
    return private_folder("cwd")


@contextlib.contextmanager
def working_folder(path: str) -> Iterator[None]:
    """Run the block with ``path`` as the working folder, then go back (by descriptor, so a
    working folder renamed meanwhile is still the one returned to)."""
    try:
        here: int | None = os.open(".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:  # a working folder removed under us: nothing to go back to
        here = None
    os.chdir(path)
    try:
        yield
    finally:
        if here is not None:
            try:
                os.fchdir(here)
            finally:
                os.close(here)


#: the variables matplotlib reads its configuration (and font cache) folder from
MPL_VARIABLES = ("MATPLOTLIBRC", "MPLCONFIGDIR")


def import_matplotlib() -> Any:
    """``matplotlib``, imported reading no configuration but its built-in defaults.

    On the first import in this process the working folder is an empty folder of the grader's
    (matplotlib reads ``./matplotlibrc`` first of all) and ``MATPLOTLIBRC`` and ``MPLCONFIGDIR``
    point at another (its configuration and cache folders, which matplotlib fixes for the
    process); both are put back right after. If matplotlib was imported before (by a caller),
    it is returned as it is: draw under :func:`matplotlib_defaults` anyway. The working folder
    is the process's: call this where no other thread depends on it (``grader grade`` and
    ``merge`` write their outputs from the main thread, with no check running).

    Raises:
        ImportError: matplotlib is not installed.
    """
    with _lock:
        if sys.modules.get("matplotlib") is not None:
            import matplotlib
            return matplotlib
        empty = private_folder("matplotlib")
        kept = _font_lists(empty)
        saved = {name: os.environ.get(name) for name in MPL_VARIABLES}
        try:
            for name in MPL_VARIABLES:
                os.environ[name] = empty
            with working_folder(neutral_folder()):
                import matplotlib
                # both are cached by matplotlib on first call: fixed here, to the empty folder
                matplotlib.get_configdir()
                matplotlib.get_cachedir()
                # the font manager reads (or builds, running fc-list) its font cache when first
                # imported: here too, not in the caller's working folder
                import matplotlib.font_manager  # noqa: F401
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
        if kept is not None:
            _keep_font_lists(empty, kept)
        return matplotlib


#: matplotlib's font list (``fontlist-v<version>.json`` in its cache folder): built by scanning
#: the system's fonts when missing, 0.5-1.3 CPU-s, in every ``grader grade`` and ``merge``
#: while the cache folder was a new private one each time
FONT_LISTS = "fontlist-v*.json"
#: a font list larger than this is not one (matplotlib's is tens of kB)
FONT_LIST_MAX = 8 << 20


def _font_lists(private: str) -> Path | None:
    """Copy the font lists kept in the grader's cache folder (``<cache>/matplotlib``, made by
    :func:`_keep_font_lists`) into matplotlib's ``private`` cache folder; that folder, or None
    when caching is off. Only matplotlib's cache is taken, never a configuration: the private
    folder holds no ``matplotlibrc``. The grader's cache folder is the grader's own (its
    expected values are kept there too: docs/security.md); regular files only, not followed
    through links."""
    from .cachedir import cache_root

    root = cache_root()
    if root is None:
        return None
    kept = root / "matplotlib"
    for path in kept.glob(FONT_LISTS) if kept.is_dir() else ():
        try:
            data = _read_regular(path)
        except OSError:
            continue
        if data is not None:
            with open(os.path.join(private, path.name), "wb") as out:
                out.write(data)
    return kept


def _read_regular(path: Path) -> bytes | None:
    """``path``'s bytes when it is a regular file of at most :data:`FONT_LIST_MAX` bytes, opened
    without following a link; else None."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        import stat
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > FONT_LIST_MAX:
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(FONT_LIST_MAX + 1)
    finally:
        os.close(fd)


def _keep_font_lists(private: str, kept: Path) -> None:
    """Keep the font lists matplotlib built in ``private`` in ``kept`` for the next process
    (written whole under a temporary name, then renamed); nothing when it cannot be written."""
    for path in Path(private).glob(FONT_LISTS):
        if (kept / path.name).exists():
            continue
        tmp = None
        try:
            kept.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(dir=kept, prefix=".fontlist-")
            with os.fdopen(fd, "wb") as out:
                out.write(path.read_bytes())
            os.replace(tmp, kept / path.name)
        except OSError:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


#: what the charts set on top of matplotlib's defaults: mathtext off (a ``$...$`` in a learner
#: id is shown as typed), no TeX, fonts matplotlib ships, text kept as text in SVG
CHART_PARAMS = {"text.usetex": False, "text.parse_math": False, "font.family": ["sans-serif"],
                "font.sans-serif": ["DejaVu Sans"], "svg.fonttype": "none", "axes.unicode_minus": True}


@contextlib.contextmanager
def matplotlib_defaults(matplotlib: Any, params: dict[str, Any] | None = None) -> Iterator[None]:
    """Draw in the block with matplotlib's built-in defaults (``style.context("default")``:
    whatever configuration file was read at import, or set since, does not count) and
    :data:`CHART_PARAMS` (and ``params``) on top; everything is put back after."""
    from matplotlib import style
    with style.context("default"), matplotlib.rc_context({**CHART_PARAMS, **(params or {})}):
        yield


_hyp_depth = 0
_hyp_saved: Any = None
#: the name of hypothesis's own setting (hypothesis.configuration, 6.100 to 6.170 at least)
_HOME = "__hypothesis_home_directory"


@contextlib.contextmanager
def hypothesis_storage() -> Iterator[str]:
    """Run the block with hypothesis's storage folder (example database, constants cache,
    charmap) a private folder of the grader's instead of ``./.hypothesis``; the caller's
    setting (``set_hypothesis_home_dir``, ``HYPOTHESIS_STORAGE_DIRECTORY``) is put back after.
    Blocks may nest and run in several threads at once: the first to enter sets it, the last
    to leave puts it back. Yields the folder.

    Raises:
        ImportError: hypothesis is not installed.
    """
    global _hyp_depth, _hyp_saved
    from hypothesis import configuration

    folder = private_folder("hypothesis")
    with _lock:
        if _hyp_depth == 0:
            _hyp_saved = getattr(configuration, _HOME, None)
            configuration.set_hypothesis_home_dir(folder)
        _hyp_depth += 1
    try:
        yield folder
    finally:
        with _lock:
            _hyp_depth -= 1
            if _hyp_depth == 0:
                configuration.set_hypothesis_home_dir(_hyp_saved)
                _hyp_saved = None


def hypothesis_storage_folder() -> Path:
    """Where hypothesis would keep its storage now (for tests and diagnostics)."""
    from hypothesis import configuration
    found = configuration.storage_directory(intent_to_write=False)
    return Path(getattr(found, "path", found))
