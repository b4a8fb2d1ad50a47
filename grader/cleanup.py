"""Removing folders a submission wrote into, whatever it left there.

``shutil.rmtree`` recurses once per level on Python 3.11 (a 3,000-level tree in a child's working
folder raised RecursionError: exit 2, "internal error", and the tree stayed under the temp
folder) and walks full paths (past PATH_MAX at a few thousand levels). :func:`remove_tree` does
neither: it works through descriptors relative to the top folder and lifts each sub-folder's
entries up into the top folder before removing the emptied sub-folder, so no path it uses is
longer than two names and no descriptor is held for more than one level.
"""
from __future__ import annotations

import atexit
import os
import stat
import tempfile
import threading

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _writable(fd: int) -> None:
    """Let the owner enter and change a folder the submission made read-only (chmod 0)."""
    try:
        os.chmod(fd, 0o700)
    except OSError:
        pass


def _open_own_folder(name: str, top: int) -> int:
    """``name`` under the folder ``top`` opened for listing; a folder its owner may not list
    (``mkdir`` mode 0o300, made by a submission that ran as this user) made listable first,
    through a descriptor of the folder itself, never a link (attack round 51: such a folder and
    the run folder around it were left on the host).

    Raises:
        OSError: it cannot be opened even so.
    """
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=top)
    except PermissionError:
        path = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=top)
        try:
            os.chmod(f"/proc/self/fd/{path}", 0o700)
        finally:
            os.close(path)
        return os.open(name, _DIR_FLAGS, dir_fd=top)


def remove_tree(path: str) -> bool:
    """Remove ``path`` and everything under it; True when nothing is left.

    Links are removed, never followed; any depth works; a folder the submission made
    unreadable is opened up first. Never raises: what cannot be removed (a mount point, a file
    of another user's) is left and the result is False.
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode):
        try:
            os.unlink(path)
            return True
        except OSError:
            return False
    try:
        top = os.open(path, _DIR_FLAGS)
    except OSError:
        return False
    counter = 0
    try:
        _writable(top)
        progress = True
        while progress:
            progress = False
            with os.scandir(top) as it:
                entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
            for name, is_dir in entries:
                if not is_dir:
                    try:
                        os.unlink(name, dir_fd=top)
                        progress = True
                    except OSError:
                        pass
                    continue
                try:
                    os.rmdir(name, dir_fd=top)
                    progress = True
                    continue
                except OSError:
                    pass
                try:
                    sub = _open_own_folder(name, top)
                except OSError:
                    continue
                try:
                    _writable(sub)
                    with os.scandir(sub) as it:
                        inner = [e.name for e in it]
                    for child in inner:       # lift one level up, under a fresh name
                        while True:
                            counter += 1
                            fresh = f".rm{counter}"
                            try:
                                os.stat(fresh, dir_fd=top, follow_symlinks=False)
                            except FileNotFoundError:
                                break
                            except OSError:
                                break
                        try:
                            os.rename(child, fresh, src_dir_fd=sub, dst_dir_fd=top)
                            progress = True
                        except OSError:
                            pass
                finally:
                    os.close(sub)
                try:
                    os.rmdir(name, dir_fd=top)
                    progress = True
                except OSError:
                    pass
    finally:
        os.close(top)
    try:
        os.rmdir(path)
        return True
    except OSError:
        return False


#: the temporary folders the grader makes for submissions: their names carry the maker's pid
STALE_PREFIXES = ("grader-run-", "grader-sub-")
#: ``grader-live-<pid>`` in the temp folder: a file on which the grader process ``pid`` holds a
#: shared ``flock`` for as long as it lives (:func:`_announce`)
LIVE_PREFIX = "grader-live-"
_swept: set[tuple[str | None, tuple[int, int] | None]] = set()
_live: dict[str, tuple[int, int]] = {}       # temp folder -> (this process's pid, its live file's descriptor)
_live_lock = threading.Lock()


def _announce(folder: str) -> None:
    """Hold a shared ``flock`` on ``folder``/``grader-live-<pid>`` for the rest of this process's
    life (once per process and folder; again in a forked child, whose pid differs).

    A folder's name carries its maker's pid, and :func:`sweep_stale` took "no /proc/<pid>" for
    "its grader is gone". A grader in another PID namespace sharing the temp folder (two CI
    containers with one /tmp) has pids this one's /proc does not show: its live folders were
    removed under its checks (the working folders made 0700 first, so its learners' imports
    failed with PermissionError). A lock is seen by every process that opens the same file,
    whatever its PID namespace, and the kernel drops it when the holder dies, even by SIGKILL.
    Never raises: without the file (a temp folder that refuses it, a file another user made),
    only the /proc test guards this process's folders, as before.
    """
    import fcntl
    pid = os.getpid()
    with _live_lock:
        held = _live.get(folder)
        if held is not None and held[0] == pid:
            return
        if held is not None:                    # inherited through fork: the parent's, not ours
            try:
                os.close(held[1])
            except OSError:
                pass
            del _live[folder]
        path = os.path.join(folder, f"{LIVE_PREFIX}{pid}")
        for _ in range(3):
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            except OSError:
                return
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                st, now = os.fstat(fd), os.stat(path, follow_symlinks=False)
                if (st.st_dev, st.st_ino) == (now.st_dev, now.st_ino):
                    if not _live:
                        atexit.register(_withdraw)
                    _live[folder] = (pid, fd)
                    return
            except OSError:
                pass                            # removed by a sweep meanwhile, or held exclusively
            os.close(fd)


def _withdraw() -> None:
    """At exit: remove this process's live files (:func:`_announce`); a process killed with
    SIGKILL leaves its own, which the next sweep removes."""
    pid = os.getpid()
    with _live_lock:
        for folder, (holder, fd) in list(_live.items()):
            if holder == pid:
                try:
                    os.unlink(os.path.join(folder, f"{LIVE_PREFIX}{pid}"))
                except OSError:
                    pass
                os.close(fd)
                del _live[folder]


def _lives(folder: str, pid: str) -> bool:
    """Whether the grader process ``pid`` of ``folder``'s live file (:func:`_announce`) still
    holds it, in whatever PID namespace; a stale live file of this user's is removed."""
    import fcntl
    path = os.path.join(folder, f"{LIVE_PREFIX}{pid}")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    except OSError:
        return True                              # cannot tell: keep its folders
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        st = os.fstat(fd)
        if st.st_uid == os.geteuid():
            try:
                os.unlink(path)
            except OSError:
                pass
        return False
    finally:
        os.close(fd)


def sweep_stale(folder: str | None = None, sandbox_uids: tuple[int, int] | None = None) -> int:
    """Remove the submission folders (:data:`STALE_PREFIXES` + ``<pid>-``) in ``folder`` (the
    temp folder) whose grader is gone (killed with SIGKILL, so it never cleaned up: a private
    copy of a learner's source, a working folder with what the submission wrote); once per
    process and range. Only folders of this process's user are touched, and, for a root grader
    that gives ``sandbox_uids`` (start, count: ``grader.sandbox``'s range), folders owned by one
    of those uids (a working folder is chowned to its check's sandbox user, so a root grader's
    sweep used to leave every one of them). Returns how many were removed."""
    _announce(folder or tempfile.gettempdir())
    key = (folder, sandbox_uids)
    if key in _swept:
        return 0
    _swept.add(key)
    folder = folder or tempfile.gettempdir()
    me = os.geteuid()
    removed = 0
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    for name in names:
        if name.startswith(LIVE_PREFIX):            # a dead grader's live file (one killed with SIGKILL)
            pid = name[len(LIVE_PREFIX):]
            if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
                _lives(folder, pid)
            continue
        prefix = next((p for p in STALE_PREFIXES if name.startswith(p)), None)
        if prefix is None:
            continue
        pid = name[len(prefix):].split("-", 1)[0]
        if not pid.isdigit() or os.path.exists(f"/proc/{pid}") or _lives(folder, pid):
            continue
        path = os.path.join(folder, name)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        owned = st.st_uid == me or (me == 0 and sandbox_uids is not None
                                    and sandbox_uids[0] <= st.st_uid < sandbox_uids[0] + sandbox_uids[1])
        if stat.S_ISDIR(st.st_mode) and owned and remove_tree(path):
            removed += 1
    return removed


def remove_own_folders(folder: str | None = None) -> int:
    """Remove the submission folders (:data:`STALE_PREFIXES`) this process made in ``folder``
    (the temp folder) that are still there; how many were removed.

    For the end of a CLI command, after every process it started is gone
    (``grader.processes.ProcessRegistry.reap_orphans``): each worker removes its own folder when
    it is killed, and this is the barrier behind that, so that no working folder of a check (what
    a submission wrote) outlives the command even when a removal met a process still dying.
    Never call it while a check of this process still runs (a notebook kernel's)."""
    folder = folder or tempfile.gettempdir()
    mine = tuple(f"{prefix}{os.getpid()}-" for prefix in STALE_PREFIXES)
    removed = 0
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    for name in names:
        if name.startswith(mine) and remove_tree(os.path.join(folder, name)):
            removed += 1
    return removed


class PrivateFolder:
    """A new folder only this process's user may enter (``tempfile.mkdtemp``), removed with
    :func:`remove_tree` by :meth:`cleanup`: a stand-in for ``tempfile.TemporaryDirectory`` for
    folders a submission writes into.

    Attributes:
        name: the folder's absolute path.
    """

    def __init__(self, prefix: str, sandbox_uids: tuple[int, int] | None = None) -> None:
        sweep_stale(sandbox_uids=sandbox_uids)
        self.name = tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-")

    def cleanup(self) -> bool:
        """Remove the folder and all it holds; True when nothing is left. Never raises."""
        return remove_tree(self.name)

    def __enter__(self) -> str:
        return self.name

    def __exit__(self, *exc: object) -> None:
        self.cleanup()


__all__ = ["PrivateFolder", "remove_own_folders", "remove_tree", "sweep_stale"]
