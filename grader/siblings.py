"""A learner's sibling modules: the ``.py`` files beside the main file that it imports.

A submission may be several files: ``solution.py`` doing ``import helper`` or ``from helper
import f``. :func:`find_siblings` decides, from the main file's source (its AST), which files of
its folder go with it into the submission's private folder (``grader.check.PrivateCopy``), the
one folder the sandbox shows, read-only (docs/security.md, "What the sandbox shows"):

* only ``NAME.py`` files directly in the main file's folder (no subfolders, no packages, no data
  files) whose module ``NAME`` the main file imports, or a sibling taken along imports
  (transitively: ``import NAME``, ``import NAME.x``, ``from NAME import ...``, anywhere in the
  file, functions included; relative imports, ``importlib`` and ``__import__`` are not followed);
* each read once, by the grader, without following a symbolic link (``O_NOFOLLOW`` relative to
  the folder's descriptor), only if it is a regular file with one name (a hard link, whose other
  name may be any file of the filesystem, is not taken) of at most :data:`MAX_FILE_BYTES`; at
  most :data:`MAX_FILES` siblings and :data:`MAX_TOTAL_BYTES` in all;
* never a file whose module name is one the submission's process must get from the grader's
  install: the standard library's (``json``, ``random``...), the frameworks' and their
  dependencies' (``numpy``, ``jax``, ``torch``, ``ml_dtypes``...), the grader's own (``grader``,
  ``_child``, ``protocol``, ``submission``) or any other installed top-level module. Plain Python
  would let such a file shadow the real module; the grader's child has imported most of them
  already, so the learner's file would half-apply. It is skipped and the report says why
  ("rename it").

What is skipped is reported (``environment.siblings.skipped``, one line each: the name and why),
never read: a link's target is not opened. Nothing here imports or runs learner code; the grader
only parses the files (a file Python's parser cannot take is still copied, and its import fails
in the submission's process, as it would for the learner).
"""
from __future__ import annotations

import ast
import errno
import importlib.util
import os
import re
import stat
import sys
from dataclasses import dataclass, field

from . import parsing

MAX_FILES = 32                 # siblings taken along at most
MAX_FILE_BYTES = 1 << 20       # largest sibling (the main file's own cap)
MAX_TOTAL_BYTES = 4 << 20      # all siblings together
#: a sibling's file name: a Python module name and ``.py`` (no dot-files, no odd characters)
MODULE_FILE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}\.py\Z")
#: module names the submission's process gets from the grader's install, never from the learner
RESERVED = frozenset({"grader", "_child", "protocol", "submission", "numpy", "jax", "jaxlib", "torch",
                      "ml_dtypes", "scipy", "opt_einsum", "typing_extensions", "nbformat", "hypothesis",
                      "yaml", "site", "sitecustomize", "usercustomize"})


@dataclass
class Siblings:
    """The sibling modules taken along with a main file, and those left out.

    Attributes:
        files: ``(file name, bytes)`` of each sibling taken, in the order found (sorted by name
            within each round of imports).
        skipped: one line per file left out: ``"NAME.py: why"`` (a symbolic or hard link, not a
            regular file, too large, over the count or size limit, a reserved module name).
    """

    files: list[tuple[str, bytes]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def names(self) -> list[str]:
        """The file names taken along."""
        return [name for name, _ in self.files]

    def report(self) -> dict[str, list[str]]:
        """``environment.siblings`` of the report: ``{"taken": [...], "skipped": [...]}``."""
        return {"taken": self.names(), "skipped": list(self.skipped)}


def imported_modules(tree: ast.AST | None) -> list[str]:
    """The top-level module names ``tree`` imports absolutely (``import a.b`` gives ``a``), in
    source order, each once; relative imports (``from . import x``) are left out."""
    names: list[str] = []
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Import):
            names += [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.append(node.module.split(".")[0])
    return list(dict.fromkeys(names))


def reserved_reason(name: str, folder: str) -> str | None:
    """Why the module ``name`` must not come from the learner's ``folder``, or None.

    Reserved: the standard library's modules, :data:`RESERVED`, and any top-level module this
    Python finds outside ``folder`` (an installed package). Finding a top-level module runs no
    code of it.
    """
    if name in sys.stdlib_module_names or name in sys.builtin_module_names:
        return f"shadows the standard-library module {name}; rename it"
    if name in RESERVED:
        return f"shadows the module {name} the grader provides; rename it"
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError, AttributeError):
        spec = None
    origin = getattr(spec, "origin", None) or ""
    locations = list(getattr(spec, "submodule_search_locations", None) or [])
    places = [p for p in [origin, *locations] if p and p not in ("built-in", "frozen")]
    real = os.path.realpath(folder)
    if spec is not None and not any(os.path.dirname(os.path.realpath(p)) == real or os.path.realpath(p) == real
                                    for p in places):
        return f"shadows the installed module {name}; rename it"
    return None


def walk_tree(top: str | os.PathLike, max_depth: int | None = None):
    """Walk a learner-controlled folder as ``os.walk(top)`` does (top-down, ``(root, dirs, files)``
    with ``dirs`` prunable in place, links never descended into), but without recursion.

    On Python 3.11, ``os.walk`` recurses once per level, so a learner's folder about a thousand
    levels deep raised RecursionError in the grader (aborting a whole class run, or silently
    stopping the fallback sandbox's disk watch). Here the depth costs a list entry, not a frame.

    Args:
        top: the folder.
        max_depth: if given, folders deeper than this many levels below ``top`` are listed in
            their parent's ``dirs`` but not entered (``top`` itself is depth 0).

    A folder that cannot be listed (removed meanwhile, no permission) is skipped, as
    ``os.walk`` does without ``onerror``.
    """
    stack = [(os.fspath(top), 0)]
    while stack:
        root, depth = stack.pop()
        try:
            with os.scandir(root) as it:
                entries = list(it)
        except OSError:
            continue
        dirs, files, links = [], [], set()
        for entry in entries:
            try:
                is_dir = entry.is_dir()  # a link to a folder is listed with the folders, as os.walk does
                if is_dir and entry.is_symlink():
                    links.add(entry.name)
            except OSError:
                is_dir = False
            (dirs if is_dir else files).append(entry.name)
        yield root, dirs, files
        if max_depth is None or depth < max_depth:
            stack.extend((os.path.join(root, d), depth + 1) for d in reversed(dirs) if d not in links)


STRICT_ENV = "GRADER_STRICT_PATHS"


def where_expected(fd: int, path: str) -> bool:
    """Whether the file open as ``fd`` is the one at ``path`` with no link on the way; only
    checked when :data:`STRICT_ENV` is ``1`` (``grader grade`` sets it for its checks, and gives
    them paths through the real path of the folder given, taken before anyone was graded:
    a learner who swapped a sub-folder for a link to the grader's references between discovery
    and their check was graded on the reference, found by an attacker helper). Race-free: the
    kernel says where the open descriptor really is (``/proc/self/fd``)."""
    if os.environ.get(STRICT_ENV) != "1":
        return True
    try:
        real = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return True                                    # no /proc: nothing to compare with
    return real == os.path.normpath(os.path.abspath(path))


def open_no_follow(path: str, dir_fd: int | None = None) -> tuple[int | None, str, str]:
    """A read-only descriptor of the learner's regular file ``path`` (relative to ``dir_fd`` when
    given), opened as :func:`read_no_follow` reads: no link followed, no FIFO waited on, no hard
    link, no folder on the way replaced by a link; for reads at offsets (``os.pread``) of a file
    too large to read whole (a Git pack, ``grader.batch.times``). The caller closes it.

    Returns:
        ``(fd, "", "")``, or ``(None, kind, detail)`` as :func:`read_no_follow` gives.

    Raises:
        OSError: the file is missing or cannot be opened for another reason.
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None, "symlink", ""
        if exc.errno in (errno.ENXIO, errno.EOPNOTSUPP):
            return None, "socket", "a socket"
        raise
    if dir_fd is None and not where_expected(fd, path):
        os.close(fd)
        return None, "symlink", "a folder on the way to it was replaced by a symbolic link"
    try:
        st = os.fstat(fd)
    except OSError:
        os.close(fd)
        raise
    why: tuple[str, str] | None = None
    if stat.S_ISDIR(st.st_mode):
        why = ("directory", "")
    elif not stat.S_ISREG(st.st_mode):
        why = ("special", "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode)
               or stat.S_ISBLK(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "special")
    elif st.st_nlink != 1:
        why = ("hard_link", str(st.st_nlink))
    if why is not None:
        os.close(fd)
        return None, *why
    return fd, "", ""


def read_no_follow(path: str, limit: int, dir_fd: int | None = None) -> tuple[bytes | None, str, str]:
    """The bytes of the learner's regular file ``path`` (relative to ``dir_fd`` when given), at most
    ``limit`` bytes, read without following a link; the one reader of learner files (the main
    file, ``grader.check``, and its siblings here).

    ``O_NONBLOCK`` keeps a FIFO from blocking the open; ``fstat`` on the open descriptor decides,
    so the file cannot be swapped between the check and the read. A hard link (``st_nlink !=
    1``) passes ``O_NOFOLLOW`` and is a regular file, but its other name may be any file the
    grader can read (``/etc/shadow``, the seed secret; a learner's tar unpacked without a
    filter makes one): it is refused like a symbolic link.

    Returns:
        ``(data, "", "")``, or ``(None, kind, detail)`` with ``kind`` one of ``symlink``,
        ``socket``, ``directory``, ``special`` (``detail``: a FIFO, a device...), ``hard_link``
        (``detail``: the number of names) or ``too_large``.

    Raises:
        OSError: the file is missing or cannot be opened or read for another reason.
    """
    fd, kind, detail = open_no_follow(path, dir_fd)
    if fd is None:
        return None, kind, detail
    try:
        st = os.fstat(fd)
        if st.st_size > limit:
            return None, "too_large", ""
        chunks, size = [], 0
        while size <= limit:  # the size may have grown since fstat
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > limit:
        return None, "too_large", ""
    return b"".join(chunks), "", ""


def _read(dir_fd: int, name: str) -> tuple[bytes | None, str]:
    """The bytes of the sibling ``name`` in the folder ``dir_fd`` (:func:`read_no_follow`), or
    None and why it is not taken."""
    try:
        data, kind, detail = read_no_follow(name, MAX_FILE_BYTES, dir_fd=dir_fd)
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror or exc})"
    if data is not None:
        return data, ""
    return None, {"symlink": "a symbolic link (not followed)",
                  "socket": "not a regular file (a socket)",
                  "hard_link": f"a hard link ({detail} names; copy the file)",
                  "too_large": f"larger than {MAX_FILE_BYTES >> 20} MiB"}.get(kind, "not a regular file")


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)``, one conversion at a time in the process
    (:func:`grader.parsing.parse`: CPython 3.11's gh-106905). Every parse of learner or mistake
    source in the grader goes through here.

    Raises:
        SyntaxError, ValueError, RecursionError, MemoryError: as ``ast.parse``.
    """
    return parsing.parse(source, filename)


def _parse(data: bytes) -> ast.AST | None:
    try:
        return parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def find_siblings(folder: str, tree: ast.AST | None, main_name: str) -> Siblings:
    """The sibling modules of a main file (its AST ``tree``, its file name ``main_name``) in
    ``folder`` that it imports, directly or through siblings taken along (module docstring).

    ``folder`` is opened as given (the path to the main file is the caller's); inside it no
    link is followed. A folder that cannot be listed gives no siblings. Never raises for what
    is in the folder.
    """
    found = Siblings()
    try:
        dir_fd = os.open(folder or ".", os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
        if not where_expected(dir_fd, folder or "."):
            os.close(dir_fd)
            raise OSError(errno.ELOOP, "a folder on the way to it was replaced by a symbolic link")
    except OSError:
        return found
    try:
        try:
            entries = set(os.listdir(dir_fd))
        except OSError:
            return found
        done = {main_name}
        total = 0
        todo = imported_modules(tree)
        while todo:
            later: list[str] = []
            for module in sorted(todo):
                name = f"{module}.py"
                if name in done or name not in entries:
                    continue
                done.add(name)
                shown = name if MODULE_FILE.match(name) else repr(name)
                if not MODULE_FILE.match(name):
                    found.skipped.append(f"{shown}: not a plain module name")
                    continue
                why = reserved_reason(module, folder)
                if why:
                    found.skipped.append(f"{name}: {why}")
                    continue
                if len(found.files) >= MAX_FILES:
                    found.skipped.append(f"{name}: over the limit of {MAX_FILES} sibling files")
                    continue
                data, why = _read(dir_fd, name)
                if data is None:
                    found.skipped.append(f"{name}: {why}")
                    continue
                if total + len(data) > MAX_TOTAL_BYTES:
                    found.skipped.append(f"{name}: over the limit of {MAX_TOTAL_BYTES >> 20} MiB for all siblings")
                    continue
                total += len(data)
                found.files.append((name, data))
                later += imported_modules(_parse(data))
            todo = [m for m in dict.fromkeys(later) if f"{m}.py" not in done]
    finally:
        os.close(dir_fd)
    return found


def hint_for(siblings: Siblings, message: str) -> str | None:
    """A hint for an import failure ``message`` that names a sibling left out, or None."""
    for line in siblings.skipped:
        name = line.split(":", 1)[0]
        module = name[:-3] if name.endswith(".py") else name
        if re.search(rf"\b{re.escape(module)}\b", message or ""):
            return f"{line} (siblings are taken along only as plain .py files beside the main file)"
    return None
