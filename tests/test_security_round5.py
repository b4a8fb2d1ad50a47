"""Untrusted submissions, round five (docs/security.md, "Round five"): what a fifth attacker's
pass found in the code of round four, each with a test that failed there.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from grader import sandbox
from grader.options import Limits
from grader.runner import Worker

from .test_security import INPUTS, NAMESPACE_OK, write_submission

TIERS = ["rlimits", *NAMESPACE_OK]

LOCKS = """
import ctypes, errno, fcntl, os, struct
import numpy as np

def tied_lm_head(hidden, embedding_matrix):
    out = []
    fd = os.open("/etc/ld.so.cache" if os.path.exists("/etc/ld.so.cache") else np.__file__, os.O_RDONLY)
    # F_SETLK of a read lock at a far offset: a 63-bit message any process on the host sees
    lock = struct.pack("hhqqi", fcntl.F_RDLCK, 0, 1234 << 20, 1, 0)
    for cmd in (fcntl.F_SETLK, fcntl.F_GETLK, 37, 36):   # and the open-file-description ones
        try:
            fcntl.fcntl(fd, cmd, lock)
            out.append(0)
        except OSError as exc:
            out.append(exc.errno)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        out.append(0)
    except OSError as exc:
        out.append(exc.errno)
    os.close(fd)
    return np.array(out, dtype=np.int64)
"""


@pytest.mark.parametrize("tier", TIERS)
def test_no_file_lock_can_be_taken_or_read(tmp_path, tier):
    """A read lock needs only a read-only descriptor, and a file every sandbox is shown (a
    library, /etc/ld.so.cache) is one file for the whole host: a learner's hidden input, put in
    a lock's offset by one check and read with F_GETLK by another beside it, reached the second
    learner's report in every tier. Record locks and flock() are refused (ENOLCK)."""
    sub = write_submission(tmp_path, LOCKS)
    with Worker(sub, "tied_lm_head", "numpy", Limits(call_timeout=20), wrap=sandbox.Sandbox(tier)) as w:
        assert w.start().status == "ok"
        out = w.call(INPUTS)
    assert out.status == "ok", out.message
    assert [int(x) for x in out.result] == [37] * 5, f"{tier}: F_SETLK, F_GETLK, F_OFD_SETLK, F_OFD_GETLK, flock"


PROC = """
import os
import numpy as np

def tied_lm_head(hidden, embedding_matrix):
    out = []
    for path in ("/proc/self/cmdline", "/proc/thread-self/status", "/proc/cpuinfo", f"/proc/{os.getppid()}/cmdline",
                 "/proc/1/cmdline"):
        try:
            with open(path, "rb") as fh:
                fh.read(16)
            out.append(0)
        except OSError as exc:
            out.append(exc.errno)
    try:
        os.listdir("/proc")
        out.append(0)
    except OSError as exc:
        out.append(exc.errno)
    return np.array(out, dtype=np.int64)
"""


def test_the_fallback_tier_shows_only_the_childs_own_proc_entry(tmp_path):
    """Without a PID namespace (the rlimits tier) a child saw every process's /proc entry: one
    learner's child wrote a hidden input into its own argv (what /proc/PID/cmdline shows) and
    another learner's child, graded beside it, read it. Under Landlock the child is shown its own
    entry and the machine's description (cpuinfo...), not another process's, nor the list."""
    sub = write_submission(tmp_path, PROC)
    with Worker(sub, "tied_lm_head", "numpy", Limits(call_timeout=20), wrap=sandbox.Sandbox("rlimits")) as w:
        assert w.start().status == "ok"
        landlock = any("landlock" in layer.lower() for layer in w.layers)
        out = w.call(INPUTS)
    assert out.status == "ok", out.message
    own, thread, cpuinfo, parent, init, listing = (int(x) for x in out.result)
    assert (own, thread, cpuinfo) == (0, 0, 0)
    if not landlock:
        pytest.skip(f"no Landlock here: the fallback tier cannot hide /proc ({w.layers})")
    assert parent == init == listing == 13, "another process's entry or the list of /proc was readable"


SHARED = """
import ctypes, errno, fcntl, mmap, os
import numpy as np

def tied_lm_head(hidden, embedding_matrix):
    out = []
    path = "/etc/ld.so.cache" if os.path.exists("/etc/ld.so.cache") else np.__file__
    fd = os.open(path, os.O_RDONLY)
    for access in (mmap.ACCESS_READ, mmap.ACCESS_COPY):        # MAP_SHARED, then MAP_PRIVATE
        try:
            mmap.mmap(fd, 4096, access=access).close()
            out.append(0)
        except OSError as exc:
            out.append(exc.errno)
    os.close(fd)
    try:                                                     # anonymous shared memory: fine
        mmap.mmap(-1, 4096).close()
        out.append(0)
    except OSError as exc:
        out.append(exc.errno)
    folder = os.open(os.path.dirname(np.__file__), os.O_RDONLY)
    try:                                                     # dnotify: F_NOTIFY, DN_ACCESS
        fcntl.fcntl(folder, 1026, 0x1)
        out.append(0)
    except OSError as exc:
        out.append(exc.errno)
    os.close(folder)
    libc = ctypes.CDLL(None, use_errno=True)
    rc = libc.syscall(449, None, 0, 0, None, 0)              # futex_waitv
    out.append(ctypes.get_errno() if rc != 0 else 0)
    return np.array(out, dtype=np.int64)
"""


@pytest.mark.parametrize("tier", TIERS)
def test_no_shared_file_mapping_dnotify_or_futex_waitv(tmp_path, tier):
    """A futex in a shared mapping of a file is keyed by the file: a file every sandbox is shown
    (/etc/ld.so.cache) made one futex for all of them, and one check sent its hidden input to
    another learner's check bit by bit (threads parked and woken). dnotify on a folder every
    sandbox is shown raised SIGIO in one child when another read a file there. A file-backed
    MAP_SHARED mapping and F_NOTIFY are refused (EPERM), futex_waitv is ENOSYS; private and
    anonymous mappings still work."""
    sub = write_submission(tmp_path, SHARED)
    with Worker(sub, "tied_lm_head", "numpy", Limits(call_timeout=20), wrap=sandbox.Sandbox(tier)) as w:
        assert w.start().status == "ok"
        out = w.call(INPUTS)
    assert out.status == "ok", out.message
    shared, private, anonymous, notify, waitv = (int(x) for x in out.result)
    assert (shared, private, anonymous) == (1, 0, 0), f"{tier}: MAP_SHARED of a file, MAP_PRIVATE, anonymous"
    assert notify == 1 and waitv == 38, f"{tier}: F_NOTIFY {notify}, futex_waitv {waitv}"


def test_a_spare_imports_a_file_whose_name_is_not_utf8(tmp_path):
    """An attacker's pass: the file name went to a spare inside the JSON header, so a name that
    is not UTF-8 arrived as escaped text and a correct file failed (FileNotFoundError). The
    name now goes as its bytes."""
    from grader.check import check_submission
    from grader.options import CheckOptions
    from grader.run import spare
    from grader.sandbox import choose_tier
    from grader.spec import find_problem, load_problem

    from .conftest import SUBMISSIONS
    path = tmp_path / os.fsdecode(b"caf\xe9.py")
    path.write_bytes((SUBMISSIONS / "correct_numpy.py").read_bytes())
    tier, wrap = choose_tier("auto")
    opts = CheckOptions(max_examples=2, shrink=False)
    spare.prepare("numpy", opts.limits, tier, wrap)
    report = check_submission(path, load_problem(find_problem("tied_lm_head")), opts)
    assert report.environment.get("child") == "spare" and report.passed, report.failure


PAGE_CACHE = """
import os
import numpy as np

def tied_lm_head(hidden, embedding_matrix):
    out = []
    fd = os.open(np.__file__, os.O_RDONLY)
    os.pread(fd, 1, 0)                                   # the first page is cached now
    try:                                                 # a read that must not wait: tells if a page is cached
        os.preadv(fd, [bytearray(1)], 0, os.RWF_NOWAIT)
        out.append(0)
    except OSError as exc:
        out.append(exc.errno)
    os.preadv(fd, [bytearray(1)], 0, 0)                  # a plain preadv2 still works
    out.append(0)
    os.posix_fadvise(fd, 0, 4096, os.POSIX_FADV_DONTNEED)   # "done", and nothing dropped
    out.append(0)
    import ctypes                                        # cachestat(fd, range, stats, 0): 451
    libc = ctypes.CDLL(None, use_errno=True)
    rng, stats = (ctypes.c_uint64 * 2)(0, 4096), (ctypes.c_uint64 * 5)()
    out.append(ctypes.get_errno() if libc.syscall(451, fd, rng, stats, 0) == -1 else 0)
    os.close(fd)
    return np.array(out, dtype=np.int64)
"""


@pytest.mark.parametrize("tier", TIERS)
def test_the_page_cache_of_a_shared_file_cannot_be_read_or_cleared(tmp_path, tier):
    """A seventh pass: a check pulled pages of a large shared library into the page cache or
    dropped them (POSIX_FADV_DONTNEED), and another learner's check read which were cached with
    a read that must not wait (RWF_NOWAIT): a hidden input, exactly, concurrently or one check
    after another. RWF_NOWAIT is EOPNOTSUPP and DONTNEED does nothing (timing a read is still
    possible: docs/security.md)."""
    sub = write_submission(tmp_path, PAGE_CACHE)
    with Worker(sub, "tied_lm_head", "numpy", Limits(call_timeout=20), wrap=sandbox.Sandbox(tier)) as w:
        assert w.start().status == "ok"
        out = w.call(INPUTS)
    assert out.status == "ok", out.message
    # cachestat: ENOSYS (38), whatever the kernel would do (6.5-6.13 allow it: round eight)
    assert [int(x) for x in out.result] == [95, 0, 0, 38], f"{tier}: RWF_NOWAIT, plain preadv2, fadvise, cachestat"


SMAPS = """
import os, threading
import numpy as np

SHOWN = ("/proc/self/status", "/proc/self/maps", "/proc/thread-self/comm", "/proc/cpuinfo")
HIDDEN = ("/proc/self/smaps", "/proc/self/smaps_rollup", "/proc/self/numa_maps", "/proc/thread-self/smaps",
          "/proc/self/task/{pid}/smaps", "/proc/{pid}/smaps", "/proc/self/pagemap", "/proc/stat", "/proc/loadavg",
          "/proc/uptime", "/proc/meminfo", "/proc/pressure/cpu", "/proc/sys/fs/file-nr", "/proc/sys/kernel/random/uuid")

def tied_lm_head(hidden, embedding_matrix):
    out = []
    for path in (*SHOWN, *HIDDEN):
        try:
            with open(path.format(pid=os.getpid()), "rb") as fh:
                fh.read(16)
            out.append(0)
        except OSError as exc:
            out.append(exc.errno)
    return np.array(out, dtype=np.int64)
"""


def _kernel_has_landlock() -> bool:
    """Whether this kernel offers Landlock (landlock_create_ruleset's version query)."""
    import ctypes
    return ctypes.CDLL(None, use_errno=True).syscall(444, None, 0, 1) >= 1


@pytest.mark.parametrize("tier", TIERS)
def test_proc_shows_no_smaps_and_no_host_wide_counter(tmp_path, tier):
    """A seventh pass: two checks map pages of one shared library MAP_PRIVATE (as ld.so maps
    every library); one touches or drops a page of its mapping, the other reads its own
    /proc/self/smaps, where a page another process also maps is Shared_Clean: a hidden input
    carried between concurrent checks in every tier. Every tier now shows the child only
    sandbox.PROC_SHOWN of /proc (Landlock, inside the namespace view too): its own status, maps
    and the like, no smaps, smaps_rollup, numa_maps (nor their task/ copies), pagemap, nor a
    host-wide counter (/proc/stat, loadavg, meminfo, pressure, /proc/sys/fs/file-nr), which one
    check can move and another read."""
    sub = write_submission(tmp_path, SMAPS)
    with Worker(sub, "tied_lm_head", "numpy", Limits(call_timeout=20), wrap=sandbox.Sandbox(tier)) as w:
        assert w.start().status == "ok"
        landlock = any("landlock" in layer.lower() for layer in w.layers)
        out = w.call(INPUTS)
    assert out.status == "ok", out.message
    got = [int(x) for x in out.result]
    assert got[:4] == [0, 0, 0, 0], f"{tier}: the child's own status, maps, comm and cpuinfo must stay readable"
    if not _kernel_has_landlock():
        pytest.skip("this kernel has no Landlock: /proc cannot be narrowed")
    assert landlock, f"{tier}: the kernel has Landlock but the child did not apply it ({w.layers})"
    assert got[4:] == [13] * (len(got) - 4), f"{tier}: smaps-like files or host counters readable: {got[4:]}"


def test_user_tasks_counts_every_thread_of_the_user():
    """``processes.user_tasks`` counts as RLIMIT_NPROC does: every thread of the real user."""
    import threading

    from grader.processes import user_tasks
    before = user_tasks(os.getuid())
    stop = threading.Event()
    threads = [threading.Thread(target=stop.wait) for _ in range(20)]
    for t in threads:
        t.start()
    try:
        assert user_tasks(os.getuid()) >= before + 20 - 5   # other processes of the user may end meanwhile
    finally:
        stop.set()
        for t in threads:
            t.join()


def test_a_child_of_the_users_own_uid_gets_its_process_budget_on_top_of_the_users(monkeypatch):
    """Attack round 46: in the rlimits tier of a grader that is not root the child is the user
    itself, and RLIMIT_NPROC counts every task of the user: a user running about 245 tasks had
    a correct JAX file abort (FAIL 0.0). The child's budget is added to what the user runs; a
    sandbox user of its own, or a namespace tier, keeps the plain budget."""
    from grader import runner
    from grader.options import Limits

    class Tier:
        def __init__(self, tier):
            self.tier = tier
    monkeypatch.setattr(os, "getuid", lambda: 1234)
    monkeypatch.setattr(os, "geteuid", lambda: 1234)
    monkeypatch.setattr(runner, "user_tasks", lambda uid: 245 if uid == 1234 else 0)
    limits = Limits(processes=256)
    assert runner.child_limits(limits, None, Tier("rlimits"))["processes"] == 245 + 256
    assert runner.child_limits(limits, None, None)["processes"] == 245 + 256
    assert runner.child_limits(limits, None, Tier("bwrap"))["processes"] == 256
    assert runner.child_limits(limits, object(), Tier("rlimits"))["processes"] == 256
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert runner.child_limits(limits, None, Tier("rlimits"))["processes"] == 256


def test_a_class_in_the_users_own_tier_is_graded_one_learner_at_a_time(monkeypatch, capsys):
    """Attack round 46: with every learner's process the grader's own user (the rlimits tier of
    a grader that is not root), one learner's threads filled the user's budget and four correct
    JAX files beside it aborted: 0/10. Such a class is graded one learner at a time, and said so;
    a namespace tier keeps --jobs."""
    from grader import sandbox
    from grader.batch import pool
    monkeypatch.setattr(pool.os, "geteuid", lambda: 1234)
    monkeypatch.setattr(sandbox, "choose_tier", lambda request: ("rlimits", None))
    assert pool._jobs_for_tier(4, "auto") == 1
    assert "one learner at a time" in capsys.readouterr().err
    monkeypatch.setattr(sandbox, "choose_tier", lambda request: ("bwrap", None))
    assert pool._jobs_for_tier(4, "auto") == 4
    monkeypatch.setattr(pool.os, "geteuid", lambda: 0)
    monkeypatch.setattr(sandbox, "choose_tier", lambda request: ("rlimits", None))
    assert pool._jobs_for_tier(4, "auto") == 4   # root: each learner's process is a sandbox user of its own


def test_one_check_of_a_user_at_a_time_in_the_users_own_budget(monkeypatch, tmp_path, capsys):
    """Attack round 47: two shards of one class graded at once by one user in the rlimits tier
    (each grading one learner at a time) still shared the user's process budget, and another
    learner's threads made a correct JAX file abort (9.75). Where the child will be the user
    itself, a check holds the user's one slot (a lock every grader process of the user sees)
    from before its plan (its time starts once the slot is its) to its end; within a process the
    slot is shared (an assignment's parts run interleaved); a folder that is not the user's own
    and private is not trusted."""
    import subprocess
    import sys
    import time

    from grader import check, processes
    folder = tmp_path / "slot"
    monkeypatch.setattr(processes, "slot_folders", lambda uid: [str(folder)])
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom grader import processes\n"
                               f"processes.slot_folders = lambda uid: [{str(folder)!r}]\n"
                               "assert processes.take_user_slot(None) >= 0\nprint('held', flush=True)\ntime.sleep(30)"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert processes.take_user_slot(time.monotonic() + 0.3) is None   # another process holds it
    finally:
        holder.kill()
        holder.wait()
    first = processes.take_user_slot(time.monotonic() + 5)
    again = processes.take_user_slot(time.monotonic() + 5)   # the same process: shared, not a deadlock
    assert first is not None and first >= 0 and again == first
    processes.release_user_slot(again)
    processes.release_user_slot(first)
    taken = []

    def slow(deadline):             # held by another check at first for 0.2 s: said, then waited for
        taken.append(deadline)
        if deadline is None:
            time.sleep(0.2)
            return 7
        return None
    monkeypatch.setattr(processes, "take_user_slot", slow)
    monkeypatch.setattr(os, "geteuid", lambda: 1234)

    class Plan:
        def __init__(self, tier):
            self.tier, self.deadline = tier, 100.0
    plan = Plan("rlimits")
    assert check._user_slot(plan) == 7 and taken[1] is None
    assert plan.deadline >= 100.2      # the wait is not this check's run time
    assert "waiting for another check of this user" in capsys.readouterr().err
    assert check._user_slot(Plan("bwrap")) is None
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert check._user_slot(Plan("rlimits")) is None   # root: a sandbox user of its own per child
    monkeypatch.undo()
    other = tmp_path / "theirs"
    other.mkdir(mode=0o755)
    monkeypatch.setattr(processes, "slot_folders", lambda uid: [str(other)])
    capsys.readouterr()
    assert processes.take_user_slot(None) == -1     # a folder others may write in: no lock, said
    assert "no private place for this user's check lock" in capsys.readouterr().err


def test_the_check_slot_lives_where_no_other_user_makes_it_first(monkeypatch, tmp_path, capsys):
    """Attack round 48: the slot's lock was a fixed /tmp/grader-slot-UID: another user made that
    folder first (the check then took no lock, silently: two shards at once again), and where
    each job has a private /tmp every job had a lock of its own. The lock is now in the user's
    home (every mount namespace of the machine sees it), one file per host name; a foreign
    folder is passed over for the next place."""
    import os
    import socket

    from grader import processes
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setattr("pwd.getpwuid", lambda uid: (_ for _ in ()).throw(KeyError(uid)))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    (tmp_path / "run").mkdir(mode=0o700)
    places = processes.slot_folders(os.getuid())
    assert places[0] == str(home / ".cache" / "grader" / "slot")
    assert places[1:] == [str(tmp_path / "run" / "grader-slot"), f"/tmp/grader-slot-{os.getuid()}"]
    squatted = tmp_path / "squatted"
    squatted.mkdir(mode=0o777)
    os.chmod(squatted, 0o777)     # another user's, or anyone's: not private
    mine = tmp_path / "mine" / "slot"
    monkeypatch.setattr(processes, "slot_folders", lambda uid: [str(squatted), str(mine)])
    fd = processes.take_user_slot(None)
    try:
        assert fd >= 0 and os.path.samefile(f"/proc/self/fd/{fd}", mine / f"{socket.gethostname()}.lock")
        assert oct(os.stat(mine).st_mode & 0o777) == "0o700"
        assert not any(squatted.iterdir())
        # a first place made public is passed over aloud (round 49: learner code chmodded it)
        assert f"{squatted} is not this user's private folder" in capsys.readouterr().err
    finally:
        processes.release_user_slot(fd)


def _passes_its_probe(tmp_path, tier, source):
    """``source`` (a tied_lm_head that raises when a probe of the sandbox succeeds) returns its
    answer in ``tier`` (``strong``: the machine's namespace tier, skipped without one)."""
    from .test_security import STRONG
    if tier == "strong" and not STRONG:
        pytest.skip("no namespace sandbox works on this machine")
    sub = write_submission(tmp_path, source)
    with Worker(sub, "tied_lm_head", "numpy", Limits(call_timeout=30),
                wrap=sandbox.Sandbox(STRONG if tier == "strong" else "rlimits")) as w:
        assert w.start().status == "ok"
        out = w.call(INPUTS)
    assert out.status == "ok", out.message


METADATA = '''
import ctypes, fcntl, os, shutil, struct
import numpy as np

def _clone(flags):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(56, flags, 0, 0, 0, 0) == -1:
        raise OSError(ctypes.get_errno(), "clone")
    raise RuntimeError("a thread was started with a descriptor table of its own")

def _raw(nr, path):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(nr, -100, path, 0, 0, 0) == 0:
        return
    err = ctypes.get_errno()
    raise OSError(1 if err == 38 and nr == 470 else err, os.strerror(err))   # ENOSYS: as refused

def tied_lm_head(hidden, embedding_matrix):
    open("mine.txt", "w").write("xyz")
    before = os.stat("mine.txt")
    fd = os.open("mine.txt", os.O_RDONLY)
    # a mode and times: "set", not acted on (shutil.copy and copy2 set them on their copy)
    for call in (lambda: os.chmod("mine.txt", 0o666), lambda: os.fchmod(fd, 0o666),
                 lambda: os.utime("mine.txt", (1, 1)), lambda: os.utime(fd, (1, 1))):
        call()
    after = os.stat("mine.txt")
    if (after.st_mode, after.st_mtime_ns) != (before.st_mode, before.st_mtime_ns):
        raise RuntimeError("changed: mode or times")
    try:                                  # a set-uid bit is refused outright, as it always was
        os.chmod("mine.txt", 0o4755)
        raise RuntimeError("changed: a set-uid mode was accepted")
    except PermissionError:
        pass
    refused = {"chown": lambda: os.chown("mine.txt", os.getuid(), os.getgid()),
               "lchown": lambda: os.lchown("mine.txt", os.getuid(), os.getgid()),
               "fchown": lambda: os.fchown(fd, os.getuid(), os.getgid()),
               "setxattr": lambda: os.setxattr("mine.txt", "user.x", b"1"),
               "removexattr": lambda: os.removexattr("mine.txt", "user.x"),
               "truncate": lambda: os.truncate("mine.txt", 1),
               "setflags": lambda: fcntl.ioctl(fd, 0x40086602, struct.pack("l", 0x80)),
               # file_setattr (Linux 6.17, chattr by path) and any number past the reviewed table:
               # refused whether or not this kernel has them (EPERM; ENOSYS for the unreviewed)
               "file_setattr": lambda: _raw(469, b"mine.txt"), "unreviewed": lambda: _raw(470, b""),
               # a thread with a descriptor table of its own (round 53: /proc/PID/fd did not show it);
               # CLONE_VM | CLONE_SIGHAND | CLONE_THREAD without CLONE_FILES, refused before it starts
               "clone_own_files": lambda: _clone(0x100 | 0x800 | 0x10000)}
    done = []
    for name, call in refused.items():
        try:
            call()
            done.append(name)
        except OSError as exc:
            if exc.errno != 1:          # EPERM is seccomp's answer; ENOTSUP (no user xattrs) is the file system's
                done.append(f"{name}:{exc.errno}")
    if done or open("mine.txt").read() != "xyz":
        raise RuntimeError("changed: " + ",".join(done))
    shutil.copy2("mine.txt", "copy.txt")     # a correct file may copy a file of its own
    shutil.copy("mine.txt", "copy2.txt")
    return hidden @ embedding_matrix.T
'''


@pytest.mark.parametrize("tier", ["rlimits", "strong"])
def test_a_submission_cannot_change_a_files_mode_owner_times_or_attributes(tmp_path, tier):
    """Attack round 49: Landlock has no right for a file's metadata, and in the rlimits tier of a
    grader that is not root the child is the grader's user: a submission made the user's home
    0777 and the seed secret 0644, then another user read it; round 50: truncate(2) by path
    where Landlock is older than ABI 3, and chattr's ioctl. seccomp refuses owners, attributes,
    flags and truncation (EPERM) and answers a mode or times without acting, so that a correct
    file that copies with shutil.copy or copy2 still passes (round 49's EPERM failed it); here
    on the child's own file."""
    _passes_its_probe(tmp_path, tier, METADATA)


def test_a_batch_takes_the_users_slot_before_a_checks_hard_clock_starts(monkeypatch, tmp_path):
    """Attack round 49: shards of one user in the rlimits tier each waited for the user's slot
    inside the check, whose hard limit the batch had started with the process: checks queued
    behind two slow ones were killed while waiting (crash 0/10, their code never run). The batch
    takes the slot itself (the wait said once), starts the hard clock after it, tells the check
    it is held, and gives it back when the check ends."""
    import time
    import types

    from grader.batch import pool
    from grader.batch.discovery import Submission
    from grader.processes import SLOT_HELD_ENV
    events = []

    def take(deadline):
        if deadline is not None:          # held by another shard at first
            events.append("busy")
            return None
        time.sleep(0.3)
        events.append(("taken", time.monotonic()))
        return 7
    from grader import processes
    monkeypatch.setattr(processes, "take_user_slot", take)
    monkeypatch.setattr(pool, "release_user_slot", lambda fd: events.append(("released", fd)))
    envs = []

    class Proc:
        pid, returncode = 99999, 0

        def __init__(self, argv, **kw):
            envs.append(kw["env"])

        def poll(self):
            return 0
    monkeypatch.setattr(pool.subprocess, "Popen", Proc)
    grader = pool._Grader.__new__(pool._Grader)
    grader.out, grader.flags, grader.hard_timeout, grader.preexec = tmp_path, [], 100.0, None
    grader.cwd, grader.server, grader.slot_tier = str(tmp_path), None, "rlimits"
    (tmp_path / "reports").mkdir()
    sub = Submission(learner="ann", path=tmp_path / "ann.py")
    job = grader.start(sub)
    taken = next(e[1] for e in events if isinstance(e, tuple) and e[0] == "taken")
    assert events[0] == "busy" and job.slot == 7 and job.started >= taken
    assert job.deadline == job.started + 100.0          # the hard limit counts from the slot, not the wait
    assert envs[0][SLOT_HELD_ENV] == "1"
    grader.slot_tier = None                              # another tier: no slot, no marker
    other = grader.start(Submission(learner="ben", path=tmp_path / "ben.py"))
    assert other.slot is None and SLOT_HELD_ENV not in envs[1]
    from grader.spec import load_problem
    grader.args = types.SimpleNamespace(audience="learner")
    grader.problem = load_problem(Path(__file__).resolve().parent.parent / "problems" / "tied_lm_head.yaml")
    assert grader.finish(job).learner == "ann"            # (its check wrote no report: a placeholder row)
    assert events[-1] == ("released", 7) and job.slot is None
    # and a check told the batch holds the slot does not wait for it
    from grader import check
    monkeypatch.setattr(os, "geteuid", lambda: 1234)
    monkeypatch.setenv(SLOT_HELD_ENV, "1")
    assert check._user_slot(types.SimpleNamespace(tier="rlimits", deadline=1.0)) is None


FOLDERS = '''
import os
import numpy as np

def tied_lm_head(hidden, embedding_matrix):
    os.mkdir("fine", 0o700)
    os.umask(os.umask(0))                      # reading the umask (a common idiom) still works
    os.umask(0o022)
    done = []
    for name, call in (("mkdir 0o300", lambda: os.mkdir("hid", 0o300)),
                       ("mkdir 0", lambda: os.mkdir("hid0", 0)),
                       ("umask 0o700", lambda: os.umask(0o700))):
        try:
            call()
            done.append(name)
        except OSError as exc:
            if exc.errno != 1:
                done.append(f"{name}:{exc.errno}")
    if done:
        raise RuntimeError("made: " + ",".join(done))
    return hidden @ embedding_matrix.T
'''


@pytest.mark.parametrize("tier", ["rlimits", "strong"])
def test_a_submission_cannot_make_a_folder_its_owner_cannot_list(tmp_path, tier):
    """Attack round 51: in the rlimits tier of a grader that is not root the child is the
    grader's user, and a folder made with mode 0o300 (or under umask 0o700) hid 3 GB from the disk
    watch and from the clean-up, which left it on the host. seccomp refuses a folder without its
    owner's read and search bits and a umask that takes them."""
    _passes_its_probe(tmp_path, tier, FOLDERS)


def test_the_clean_up_removes_a_folder_its_owner_could_not_list(tmp_path):
    """Attack round 51: remove_tree opened each folder to list it, and a folder of mode 0o300 (its
    owner, the grader's user, may write but not list it) stayed, with the run folder around it.
    It is made listable through a descriptor of its own, then removed (as a user that is not
    root: root lists it anyway)."""
    import shutil
    import tempfile

    from grader.cleanup import remove_tree
    base = Path(tempfile.mkdtemp(prefix="grader-test-hid-"))   # pytest's folder is root's own, 0700
    top = base / "run"
    if os.geteuid() == 0:
        os.chown(base, 65534, 65534)
    pid = os.fork()
    if pid == 0:   # the grader's user, not root (a forked copy of this process: nothing to exec)
        code = 3
        try:
            if os.geteuid() == 0:
                os.setgroups([])
                os.setgid(65534)
                os.setuid(65534)
            os.mkdir(top)
            hid = top / "hid"
            os.mkdir(hid)
            (hid / "big").write_text("x" * 4096)
            os.mkdir(hid / "deeper")
            os.chmod(hid, 0o300)
            code = 0 if remove_tree(str(top)) is True and not top.exists() else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    shutil.rmtree(base, ignore_errors=True)
    assert os.waitstatus_to_exitcode(status) == 0


def test_the_disk_watch_reads_folders_without_moving_their_access_times(tmp_path):
    """Attack round 52: listing a folder moved its access time, and a submission watching it
    moved its files out of the folder the walk was about to list and back: 2.4 GB went unseen
    and the file passed. The walk reads folders with O_NOATIME (the grader owns them, or is root)."""
    from grader.diskwatch import folder_usage
    top = tmp_path / "work"
    (top / "h" / "x").mkdir(parents=True)
    (top / "h" / "x" / "data").write_bytes(b"\0" * 8192)
    for folder in (top, top / "h", top / "h" / "x"):
        os.utime(folder, (1_000_000, os.stat(folder).st_mtime))    # older than its mtime: relatime would move it
    used, entries = folder_usage(str(top), 10_000)
    assert entries == 3 and used >= 8192
    assert [os.stat(f).st_atime for f in (top, top / "h", top / "h" / "x")] == [1_000_000] * 3


def test_the_disk_watch_counts_a_deleted_file_kept_only_by_a_mapping(tmp_path):
    """Attack round 53: a file unlinked and kept alive by a one-page private mapping, its
    descriptor closed, held 60 MiB each that /proc/<pid>/fd did not show (2.4 GB under a root
    grader, PASS). The watch also counts deleted files mapped by the child (/proc/<pid>/maps and
    map_files: root, or a dumpable child), each file once."""
    import ctypes
    import mmap

    from grader.diskwatch import DiskWatch
    if not os.access(f"/proc/{os.getpid()}/map_files", os.R_OK) or os.geteuid() != 0:
        pytest.skip("map_files needs root")
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype, libc.munmap.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_size_t]
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    watch = DiskWatch(str(tmp_path), os.getpid(), 1 << 30, 10_000)
    before = watch.unlinked()
    fd = os.open(tmp_path / "kept", os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    os.unlink(tmp_path / "kept")
    os.write(fd, b"\x5a" * (4 << 20))
    os.fsync(fd)
    page = libc.mmap(None, mmap.PAGESIZE, mmap.PROT_READ, mmap.MAP_PRIVATE, fd, 0)
    try:
        assert page not in (None, ctypes.c_void_p(-1).value)
        held = watch.unlinked() - before
        assert held >= 4 << 20 and held < 8 << 20, held          # counted, once (descriptor and mapping)
        os.close(fd)
        fd = -1
        assert watch.unlinked() - before >= 4 << 20               # the mapping alone keeps it
    finally:
        if fd >= 0:
            os.close(fd)
        libc.munmap(page, mmap.PAGESIZE)
    assert watch.unlinked() - before < 4 << 20
