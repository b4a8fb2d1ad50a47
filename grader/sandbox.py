"""Sandbox tiers: how strongly the submission's process is isolated on this machine.

Tiers, strongest first (docs/security.md has the threat model and what each one does not stop):

``bwrap``    bubblewrap: new user (uid 65534, no capabilities), PID, network, IPC, UTS and mount
             namespaces; a read-only view of only what the child needs (the Python install,
             /usr, the child script and ``protocol.py``, the submission file), a private
             size-capped /tmp and /dev/shm, a fresh /proc, and the whole namespace killed with
             its init (``--die-with-parent``).
``unshare``  the same namespaces made with util-linux ``unshare``; the child builds the same
             read-only view itself (``grader/_child.py``: bind mounts, ``pivot_root``) and then
             drops every capability.
``rlimits``  no namespaces. The child confines itself with Landlock (read-only access to the
             same view, no TCP, no signals or ptrace outside itself) where the kernel has it,
             drops capabilities when run as root, and relies on the rlimits and the seccomp
             filter below.
``none``     what ``--sandbox none`` asks for (trusted local runs): only the limits every tier
             has (rlimits, a process group killed with SIGKILL, a scrubbed environment, a
             temporary working directory, capped output; ``grader.runner``).

Every tier but ``none`` also installs a seccomp filter in the child before any submission
code runs: no new processes (threads only), no ``ptrace``/``process_vm_*``, no signals to other
processes, no sockets but AF_UNIX, no mounts, namespaces, keyrings, BPF or io_uring.

:func:`choose_tier` probes what works here (it really runs the sandboxed child once per tier
and process, and caches the answer) and returns the tier name for ``environment.sandbox`` and
a :class:`Sandbox` that the runner uses to wrap the child's argv.

Environment variables (for tests and operators; documented in docs/security.md):

``GRADER_SANDBOX_TIER``  force a tier (``bwrap``, ``unshare``, ``rlimits`` or ``none``) instead
                         of the strongest available; a forced namespace tier that does not
                         work here is a :class:`GraderError`.
``GRADER_SECCOMP``       ``0`` leaves the seccomp filter out (to test the other defences).
``GRADER_JAX_CACHE``     where the grader keeps the warm JAX compilations of submissions
                         (read once into ``CheckOptions.jax_cache``, which is passed to
                         ``grader.cache.jax_submission_store``). Never bound writable into a
                         sandbox: a child gets a private cache folder in its working folder,
                         seeded read-only from the store entry of its exact source, and the
                         grader copies entries back itself after checking them
                         (``grader.runner.Worker``).

Nothing the child writes reaches a host path that outlives it: in the namespace tiers the only
writable places are the private tmpfs mounts (/tmp with the working folder, /dev/shm; bwrap
mounts them and every bind ``nosuid,nodev``); in ``rlimits`` the working folder, removed at the
end. The seccomp filter refuses set-uid/set-gid modes, FIFOs and devices in every tier.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .cachedir import private as _private  # whether a file or folder is this user's alone
from .errors import GraderError

TIERS = ("bwrap", "unshare", "rlimits", "none")
NAMESPACE_TIERS = ("bwrap", "unshare")
ENV_TIER = "GRADER_SANDBOX_TIER"
ENV_SECCOMP = "GRADER_SECCOMP"
ENV_JAX_CACHE = "GRADER_JAX_CACHE"

TMP_BYTES = 256 << 20        # largest private /tmp (the child's working folder lives there)
#: what Landlock shows of /proc, in every tier: of the child's own entry (``self`` and
#: ``thread-self`` resolve to it when the child restricts itself; a process it forks sees no entry
#: of its own) the files NumPy, JAX and PyTorch read, and of the machine its fixed description.
#: Left out: other processes' entries (their command lines, which a submission can write its own
#: into: round five), ``smaps``, ``smaps_rollup`` and ``numa_maps`` (which pages another process
#: also maps: a hidden input carried between two concurrent checks, round seven), the ``task/``
#: copies of them, and the host-wide counters (``/proc/stat``, ``loadavg``, ``uptime``,
#: ``meminfo``, ``pressure/``, ``/proc/sys/fs/file-nr`` and the rest of ``/proc/sys``), which
#: one check can move and another read. glibc counts CPUs with ``sched_getaffinity`` when
#: ``/proc/stat`` is refused.
PROC_OWN = ("status", "stat", "statm", "cmdline", "comm", "environ", "maps", "limits", "auxv", "cgroup",
            "mountinfo", "mounts", "fd")
PROC_SHOWN = (*(f"/proc/self/{f}" for f in PROC_OWN),
              "/proc/thread-self/status", "/proc/thread-self/stat", "/proc/thread-self/comm",
              "/proc/cpuinfo", "/proc/version", "/proc/filesystems", "/proc/sys/vm/overcommit_memory",
              "/proc/sys/kernel/osrelease", "/proc/sys/kernel/ostype")
JAX_SEED = ".jax-seed"       # in the working folder: the read-only seed of the child's JAX cache
JAX_CACHE = ".jax-cache"     # in the working folder: the child's own JAX cache
SHM_BYTES = 64 << 20         # largest private /dev/shm


def tmpfs_sizes(memory_bytes: int) -> tuple[int, int]:
    """Sizes of the private /tmp and /dev/shm for a memory limit of ``memory_bytes`` (0: none).

    A quarter and a sixteenth of the limit, at most :data:`TMP_BYTES` and :data:`SHM_BYTES`
    (at least 32 and 8 MiB): tmpfs pages are memory that RLIMIT_AS does not count, so the
    child's address space is the limit minus these (:func:`address_space_bytes`).
    """
    if not memory_bytes:
        return TMP_BYTES, SHM_BYTES
    return (max(32 << 20, min(TMP_BYTES, memory_bytes // 4)), max(8 << 20, min(SHM_BYTES, memory_bytes // 16)))


def address_space_bytes(memory_bytes: int, wrap: Any = None) -> int:
    """RLIMIT_AS for a child whose whole memory may be ``memory_bytes`` (0: no limit) under ``wrap``.

    In the namespace tiers the private tmpfs mounts come out of the limit, so that address space
    plus tmpfs is at most ``memory_bytes``; elsewhere (no tmpfs of its own, memfd and SysV
    shared memory refused by seccomp) the address space is the limit.
    """
    if not memory_bytes or getattr(wrap, "tier", "none") not in NAMESPACE_TIERS:
        return memory_bytes
    if getattr(wrap, "tier", "") == "bwrap" and not getattr(wrap, "bwrap_sized", True):
        return memory_bytes                   # an old bwrap without --size: unbounded tmpfs anyway
    tmp, shm = tmpfs_sizes(memory_bytes)
    return max(64 << 20, memory_bytes - tmp - shm)
PROBE_TIMEOUT = 20.0         # seconds for one probe run

PACKAGE_DIR = Path(__file__).resolve().parent
# the child script, its confinement, the wire format and the framework modules it loads by path
# (grader.frameworks)
CHILD_FILES = (PACKAGE_DIR / "_child.py", PACKAGE_DIR / "_confine.py", PACKAGE_DIR / "protocol.py",
               *(PACKAGE_DIR / "frameworks" / f"{name}.py" for name in ("numpy", "jax", "torch")))
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/passwd", "/etc/group",
                "/etc/nsswitch.conf", "/etc/localtime")
DEVICES = ("null", "zero", "full", "random", "urandom")


@dataclass(frozen=True)
class Mount:
    """One step of the child's file-system view, applied in order.

    ``kind`` is ``ro`` / ``rw`` (bind ``source`` at ``path``), ``symlink`` (``path`` points to
    ``source``), ``tmpfs`` (a fresh tmpfs of ``size`` bytes at ``path``), ``dir`` (an empty
    folder), ``proc``, ``dev`` (null, zero, full, random, urandom only) or ``remount-ro``.
    """

    kind: str
    path: str
    source: str = ""
    size: int = 0


def _python_dirs() -> list[str]:
    """Folders of the Python install the child needs: prefixes and site-packages, no project folders."""
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    prefixes.add(os.path.dirname(os.path.dirname(os.path.realpath(sys.executable))))
    wanted = set(prefixes)
    for entry in sys.path:
        if not entry or not os.path.exists(entry):
            continue
        real = os.path.realpath(entry)
        under_prefix = any(real == p or real.startswith(p + os.sep) for p in prefixes)
        if under_prefix or os.path.basename(real) in ("site-packages", "dist-packages"):
            wanted.add(real)
    # keep the outermost folders only; /usr is bound anyway
    out: list[str] = []
    for path in sorted(wanted, key=len):
        if path in ("/", "") or any(path == d or path.startswith(d + os.sep) for d in [*out, "/usr"]):
            continue
        out.append(path)
    return sorted(out)


def inside_workdir(workdir: str) -> str:
    """The child's working folder as the child sees it: ``/tmp/<name>`` inside the private /tmp."""
    return "/tmp/" + os.path.basename(os.path.normpath(workdir))


def view(submission: str, workdir: str, jax_seed: str | None = None, memory_bytes: int = 0,
         folder: str | None = None) -> list[Mount]:
    """The file-system view of a sandboxed child, as an ordered list of :class:`Mount` steps.

    Only these are visible: system libraries (/usr and the /lib links), a few /etc files,
    the Python install, the child script and ``protocol.py``, the submission file (not its
    folder) or, when ``folder`` is given, that folder (the grader's private copy of the
    submission and the sibling modules it imports, ``grader.check.PrivateCopy``; nothing of
    the learner's original folder), fresh /proc and /dev, a private /tmp holding the working folder, and, read-only,
    ``jax_seed`` (the warm JAX compilations of this exact source) at ``<workdir>/.jax-seed``.
    Nothing from the host is writable. The tmpfs sizes follow ``memory_bytes``
    (:func:`tmpfs_sizes`). ``workdir`` is the grader-side folder; the child works
    in :func:`inside_workdir` of it.
    """
    steps: list[Mount] = []
    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            steps.append(Mount("symlink", d, os.readlink(d)))
        elif os.path.isdir(d):
            steps.append(Mount("ro", d, d))
    for f in SYSTEM_FILES:
        if os.path.exists(f):
            steps.append(Mount("ro", f, os.path.realpath(f)))
    tmp, shm = tmpfs_sizes(memory_bytes)
    steps += [Mount("proc", "/proc"), Mount("dev", "/dev"),
              Mount("tmpfs", "/tmp", size=tmp), Mount("tmpfs", "/dev/shm", size=shm),
              Mount("dir", inside_workdir(workdir))]
    pydirs = _python_dirs()
    steps += [Mount("ro", d, d) for d in pydirs]
    pkg = str(PACKAGE_DIR)
    masked = any(pkg.startswith(d + os.sep) for d in [*pydirs, "/usr"])
    if masked:  # an installed grader: hide its bundled problems and references
        steps.append(Mount("tmpfs", pkg, size=1 << 20))
    stale = stale_packages(pydirs)
    steps += [Mount("tmpfs", d, size=1 << 20) for d in stale]
    for f in CHILD_FILES:
        steps.append(Mount("ro", str(f), str(f)))
    sub = os.path.realpath(folder) if folder else os.path.realpath(submission)
    steps.append(Mount("ro", sub, sub))
    if jax_seed and os.path.isdir(jax_seed):
        steps.append(Mount("ro", inside_workdir(workdir) + "/" + JAX_SEED, os.path.realpath(jax_seed)))
    if masked:
        steps.append(Mount("remount-ro", pkg))
    steps += [Mount("remount-ro", d) for d in stale]
    steps += [Mount("remount-ro", "/dev"), Mount("remount-ro", "/")]
    return steps


def stale_packages(pydirs: list[str]) -> list[str]:
    """``grader`` folders in ``pydirs`` (site-packages) that hold bundled problems or references
    (``_bundled/``) and are not the running package: an editable install (``pip install -e``)
    copies ``problems/`` and ``reference/`` into ``<site-packages>/grader/_bundled`` while the
    code runs from the checkout, and a submission read the references from there (round
    eight). Hidden from the child in every tier, as the running package's own are."""
    import glob
    import sysconfig

    pkg = os.path.realpath(PACKAGE_DIR)
    libs = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
    out: list[str] = []
    seen: set[str] = set()
    for d in pydirs:
        places = [d, *(lib for lib in libs if lib.startswith(d.rstrip(os.sep) + os.sep)),
                  *glob.glob(os.path.join(glob.escape(d), "lib*", "python*", "site-packages"))]
        for place in places:
            g = os.path.join(place, "grader")
            real = os.path.realpath(g)
            if os.path.isdir(os.path.join(g, "_bundled")) and real != pkg and real not in seen:
                seen.add(real)   # lib64 -> lib: one folder, hidden once
                out.append(g)
    return out


def bwrap_argv(steps: list[Mount], workdir_inside: str, extra: tuple[str, ...] = (), sized: bool = True,
               as_root: bool | None = None) -> list[str]:
    """The bubblewrap command line (up to the ``--``) for a view.

    Started by root (``as_root``; default: this process's euid is 0), bubblewrap runs
    privileged with no user namespace: a user namespace made by root maps its users to host
    root (NOTES: ``--uid 65534`` read ``65534 0 1`` in uid_map), so sysctls, root's files and
    root's kernel quotas stayed in reach. Instead the child keeps only CAP_SETUID and
    CAP_SETGID and becomes the sandbox user itself before any submission code runs
    (``policy["user"]``, :class:`SandboxUser`; CAP_CHOWN gives it its working folder first);
    /proc/sys is bound read-only over the fresh /proc.
    Started by anyone else, ``--unshare-user --uid 65534`` maps the sandbox to that user.
    ``--as-pid-1`` runs the child itself as the PID namespace's init: bubblewrap's own init,
    unfiltered and without rlimits, took injected code through ``/proc/1/mem``. The PID
    namespace plus ``--die-with-parent`` means killing bwrap kills every descendant.
    """
    as_root = os.geteuid() == 0 if as_root is None else as_root
    argv = ["bwrap", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
    if as_root:
        argv += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_CHOWN"]
    else:
        argv += ["--unshare-user", "--uid", "65534", "--gid", "65534"]
    argv += ["--hostname", "sandbox", "--die-with-parent", "--as-pid-1", *extra]
    placed: dict[str, str] = {}         # path -> kind of the step that put it there, so far
    made: set[str] = set()

    def in_bind(folder: str) -> bool:
        """Whether ``folder`` lies in a bind or a link (made by the host), not on a fresh tmpfs."""
        owners = [p for p in placed if folder == p or folder.startswith(p.rstrip("/") + "/")]
        return bool(owners) and placed[max(owners, key=len)] in ("ro", "rw", "symlink")

    for m in steps:
        if m.kind in ("ro", "rw", "tmpfs", "dir", "proc", "dev"):
            # the folders on the way, made open to everyone: privileged bubblewrap makes them
            # 0700, which the sandbox user (not root) cannot pass through
            parts = [p for p in m.path.split("/") if p][:-1]
            for i in range(1, len(parts) + 1):
                folder = "/" + "/".join(parts[:i])
                if folder in made or in_bind(folder):
                    continue
                argv += ["--perms", "0755", "--dir", folder]
                made.add(folder)
        if m.kind in ("ro", "rw", "symlink", "tmpfs"):
            placed[m.path] = m.kind
        elif m.kind == "dir":
            made.add(m.path)
        if m.kind == "symlink":
            argv += ["--symlink", m.source, m.path]
        elif m.kind == "ro":
            argv += ["--ro-bind", m.source, m.path]
        elif m.kind == "rw":
            argv += ["--bind", m.source, m.path]
        elif m.kind == "proc":
            argv += ["--proc", m.path]
            if as_root:
                argv += ["--ro-bind", "/proc/sys", m.path + "/sys"]
        elif m.kind == "dev":
            # not ``--dev``: that mounts a devpts instance and /dev/ptmx, and every pseudo-terminal
            # counts against the host's one pool (kernel.pty.max; one check opened 251 of 3,072).
            # A tmpfs with the few devices the child needs, as the unshare tier builds it
            argv += (["--size", str(64 << 10)] if sized else []) + ["--tmpfs", m.path]
            for name in DEVICES:
                argv += ["--dev-bind", f"/dev/{name}", f"{m.path}/{name}"]
            for name, dest in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                               ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
                argv += ["--symlink", dest, f"{m.path}/{name}"]
        elif m.kind == "tmpfs":
            argv += (["--size", str(m.size)] if m.size and sized else []) + ["--tmpfs", m.path]
        elif m.kind == "dir":
            argv += ["--perms", "0755", "--dir", m.path]
        elif m.kind == "remount-ro":
            argv += ["--remount-ro", m.path]
    argv += ["--chdir", workdir_inside, "--"]
    return argv


UNSHARE_ARGV = ["unshare", "--user", "--map-root-user", "--mount", "--pid", "--fork", "--kill-child",
                "--mount-proc", "--net", "--ipc", "--uts", "--propagation", "private", "--"]
#: started by root: no user namespace (its root would be host root); the child builds its view
#: as root and then becomes the sandbox user (:class:`SandboxUser`)
UNSHARE_ROOT_ARGV = [a for a in UNSHARE_ARGV if a not in ("--user", "--map-root-user")]


# -- the sandbox user (grader/sandbox_user.py; callers and tests import these names from here too)
# (its private helpers, _kill_user, _sweep_unheld and the rest, are read from grader.sandbox_user)
from .sandbox_user import (ENV_UIDS, KILL_WAIT, TAKE_WAIT, UID_COUNT, UID_START, WATCHDOG_START,  # noqa: F401
                           SandboxUser, needs_user, processes_of, uid_range)


def _cover_without(folder: str, hidden: str) -> list[str]:
    """Paths whose union is everything under ``folder`` but ``hidden`` (a path inside it): the
    siblings of each folder on the way down. Landlock can only grant, never take back, so a
    site-packages holding the grader's own package (a wheel install) is granted entry by entry."""
    out: list[str] = []
    cur = folder
    real_hidden = os.path.realpath(hidden)
    for name in os.path.relpath(hidden, folder).split(os.sep):
        try:
            entries = sorted(os.listdir(cur))
        except OSError:
            return out
        for e in entries:
            path = os.path.join(cur, e)
            real = os.path.realpath(path)
            # a link to a folder on the way (a venv's lib64 -> lib) grants what it points to:
            # the hidden folder with it (round four, class 7: a wheel install's bundled specs)
            if e == name or real == real_hidden or real_hidden.startswith(real.rstrip(os.sep) + os.sep) \
                    or real.startswith(real_hidden + os.sep):
                continue
            out.append(path)
        cur = os.path.join(cur, name)
    return out


def _cover_without_all(folder: str, hidden: list[str]) -> list[str]:
    """:func:`_cover_without` for several hidden paths inside ``folder``."""
    if not hidden:
        return [folder]
    out = []
    for path in _cover_without(folder, hidden[0]):
        inner = [h for h in hidden[1:] if h.startswith(path.rstrip(os.sep) + os.sep)]
        if any(h == path for h in hidden[1:]):
            continue
        out += _cover_without_all(path, inner) if inner else [path]
    return out


class Sandbox:
    """A tier ready to use: wraps the child's argv and tells the child what to apply to itself.

    Attributes:
        tier: one of :data:`TIERS`.
        bwrap_extra: extra bubblewrap flags that the probe found to work (``--disable-userns``).
        bwrap_sized: whether this bubblewrap takes ``--size`` (size caps on /tmp and /dev/shm).
    """

    def __init__(self, tier: str, bwrap_extra: tuple[str, ...] = (), bwrap_sized: bool = True) -> None:
        if tier not in TIERS:
            raise GraderError(f"sandbox tier {tier!r} is not one of {', '.join(TIERS)}")
        self.tier = tier
        self.bwrap_extra = bwrap_extra
        self.bwrap_sized = bwrap_sized

    def __repr__(self) -> str:
        return f"Sandbox({self.tier!r})"

    def workdir_inside(self, workdir: str) -> str:
        """Where the child works: the same folder (``rlimits``/``none``) or one in its private /tmp."""
        return inside_workdir(workdir) if self.tier in NAMESPACE_TIERS else workdir

    def jax_cache(self, workdir: str, jax_seed: str | None) -> dict[str, Any]:
        """The child's JAX cache as the child sees it: ``dir`` (its own, in its working folder)
        and ``seed`` (the read-only warm entries to copy in first, or None)."""
        inside = self.workdir_inside(workdir)
        seed = None
        if jax_seed and os.path.isdir(jax_seed):
            seed = inside + "/" + JAX_SEED if self.tier in NAMESPACE_TIERS else os.path.realpath(jax_seed)
        return {"dir": inside + "/" + JAX_CACHE, "seed": seed}

    def policy(self, submission: str, workdir: str, jax_seed: str | None = None,
               memory_bytes: int = 0, folder: str | None = None,
               user: "SandboxUser | None" = None) -> dict[str, Any]:
        """What the child must apply to itself before any submission code runs (a JSON-able dict).

        Keys: ``tier``; ``jail`` (the view to build, ``unshare`` only); ``landlock`` (read-only
        and read-write paths, every tier but ``none``; of /proc only :data:`PROC_SHOWN`. In
        ``rlimits`` read-write is the working folder alone and the grader's package is left out
        even where its site-packages is granted, so bundled specs and references stay unreadable
        in a wheel install; in the namespace tiers the paths are the view's, with /tmp and
        /dev/shm read-write); ``user`` (the host uid and gid to
        become, :class:`SandboxUser`, when the grader runs as root); ``seccomp`` and
        ``drop_caps`` (booleans).
        """
        pol: dict[str, Any] = {"tier": self.tier, "seccomp": False, "drop_caps": False}
        if self.tier == "none":
            return pol
        pol["seccomp"] = os.environ.get(ENV_SECCOMP, "1") != "0"
        pol["drop_caps"] = True
        if user is not None:
            # the working folder, made by root (bwrap --dir, the jail's mkdir), is the user's
            pol["user"] = {**user.policy(), "home": self.workdir_inside(workdir)}
        steps = view(submission, workdir, jax_seed, memory_bytes, folder)
        proc = [d for d in PROC_SHOWN if os.path.exists(d)]
        if self.tier == "unshare":
            pol["jail"] = {"steps": [m.__dict__ for m in steps], "root": os.path.join(workdir, ".jail"),
                           "workdir": inside_workdir(workdir), "as_root": os.geteuid() == 0}
        if self.tier in NAMESPACE_TIERS:
            # the view already hides the host; Landlock, applied inside it, narrows the fresh
            # /proc to :data:`PROC_SHOWN` (the PID namespace hides other sandboxes' entries, but
            # not the child's own smaps nor the host-wide counters: round seven). Paths are the
            # view's own; what is read-only in the view stays so by its mount flags.
            ro = [m.path for m in steps if m.kind == "ro"] + proc
            pol["landlock"] = {"ro": ro, "rw": ["/tmp", "/dev/shm"], "dev": [f"/dev/{d}" for d in DEVICES]}
        elif self.tier == "rlimits":
            ro = []
            hidden = [str(PACKAGE_DIR), *stale_packages(_python_dirs())]
            for m in steps:
                if m.kind != "ro":
                    continue
                inside = [h for h in hidden if h.startswith(m.source.rstrip(os.sep) + os.sep)]
                if inside:   # a wheel install, or an editable one's copy: not the bundled files
                    ro += _cover_without_all(m.source, inside)
                else:
                    ro.append(m.source)
            # of /proc, the child's own entry and host-wide facts only: not the other processes'
            # entries, whose command lines (and names) any process may read, and which a
            # submission can write its own into: a hidden input published in the child's argv
            # was read by another learner's child beside it (round five)
            ro += proc
            rw = [m.source for m in steps if m.kind == "rw"] + [workdir]
            pol["landlock"] = {"ro": ro, "rw": rw, "dev": [f"/dev/{d}" for d in DEVICES]}
            if user is not None:   # what the sandbox user must be able to reach, Landlock or not
                pol["reach"] = [*ro, *rw]
        return pol

    def __call__(self, argv: list[str], submission: str, workdir: str, jax_seed: str | None = None,
                 memory_bytes: int = 0, folder: str | None = None) -> list[str]:
        """``argv`` wrapped for this tier (unchanged for ``rlimits`` and ``none``); ``folder``
        as for :func:`view`."""
        if self.tier == "bwrap":
            return bwrap_argv(view(submission, workdir, jax_seed, memory_bytes, folder), inside_workdir(workdir),
                              self.bwrap_extra,
                              self.bwrap_sized) + argv
        if self.tier == "unshare":
            # unshare itself must die with the grader (then --kill-child takes the namespace)
            reaper = ["setpriv", "--pdeathsig", "KILL"] if shutil.which("setpriv") else []
            return reaper + (UNSHARE_ROOT_ARGV if os.geteuid() == 0 else UNSHARE_ARGV) + argv
        return argv


def describe(tier: str) -> str:
    """One line on what a tier isolates, for reports and docs."""
    return {
        "bwrap": "bubblewrap namespaces (user, pid, net, ipc, mount): read-only view, no network, "
                 "seccomp, rlimits",
        "unshare": "unshare namespaces (user, pid, net, ipc, mount): read-only view, no network, "
                   "seccomp, rlimits",
        "rlimits": "rlimits, Landlock and seccomp where the kernel has them, a process group; "
                   "no namespaces",
        "none": "rlimits and a process group only (trusted run, --sandbox none)",
    }.get(tier, tier)


def memory_limit(tier: str, layers: list[str], memory_bytes: int, wrap: Any = None) -> str:
    """One line for ``environment.memory_limit``: which limits bound the submission's memory.

    No tier uses a cgroup yet (docs/security.md says why); RLIMIT_AS bounds mappings, and what
    RLIMIT_AS does not count (memfd files, SysV shared memory, files on a tmpfs) is refused by
    the seccomp filter or bounded by the size of the private tmpfs mounts, where the tier has them.
    """
    parts = [f"address space {address_space_bytes(memory_bytes, wrap) >> 20} MiB (RLIMIT_AS)"
             if memory_bytes else "address space not limited (--memory-mb 0)"]
    seccomp = "seccomp" in layers
    parts.append("memfd and SysV shared memory refused (seccomp)" if seccomp
                 else "memfd and SysV shared memory NOT bounded (no seccomp filter)")
    if tier in NAMESPACE_TIERS:
        sized = getattr(wrap, "bwrap_sized", True) or tier == "unshare"
        tmp, shm = tmpfs_sizes(memory_bytes)
        total = f": {memory_bytes >> 20} MiB in all" if memory_bytes else ""
        parts.append(f"private /tmp {tmp >> 20} MiB and /dev/shm {shm >> 20} MiB tmpfs{total}"
                     if sized else "private /tmp and /dev/shm tmpfs NOT size-capped (this bwrap lacks --size)")
    elif any(layer.startswith("landlock") for layer in layers):
        parts.append("host /dev/shm not writable (Landlock); the working folder is on the host, "
                     "each file at most the file-size limit")
    else:
        parts.append("host /dev/shm writable: tmpfs memory NOT bounded")
    return "; ".join(parts)


# -- probing -------------------------------------------------------------------------------------
_lock = threading.Lock()
_probed: dict[str, tuple[bool, str, Sandbox | None]] = {}


def _run_probe(sandbox: Sandbox) -> tuple[bool, str]:
    """Run the real child in ``--probe`` mode under ``sandbox``: it applies its policy, finds NumPy
    and checks that no capability is left. Returns (worked, the last line of its complaint)."""
    from .processes import CHILD_SCRIPT, child_environment, track_child, untrack_child

    user = SandboxUser.take() if needs_user(sandbox.tier) else None
    try:
        with tempfile.TemporaryDirectory(prefix="grader-probe-") as tmp:
            sub = os.path.join(tmp, "probe_submission.py")
            Path(sub).write_text("")
            config = {"policy": sandbox.policy(sub, tmp, user=user)}
            argv = sandbox([sys.executable, "-I", str(CHILD_SCRIPT), "--probe", json.dumps(config)], sub, tmp)
            try:
                proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, cwd=tmp, start_new_session=True,
                                        env=child_environment("numpy", sandbox.workdir_inside(tmp)))
            except OSError as exc:
                return False, f"{argv[0]}: {exc.strerror or exc}"
            track_child(proc.pid)
            try:
                out, err = proc.communicate(timeout=PROBE_TIMEOUT)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except OSError:
                    pass
                proc.communicate()
                return False, f"the probe took longer than {PROBE_TIMEOUT:g} s"
            finally:
                untrack_child(proc.pid)
    finally:
        if user is not None:
            user.release()
    text = out.decode(errors="replace").strip()
    if proc.returncode == 0 and text.endswith("probe-ok"):
        return True, ""
    lines = (err.decode(errors="replace").strip() or text or f"exit code {proc.returncode}").splitlines()
    return False, lines[-1][:300]


def probe(tier: str) -> tuple[bool, str]:
    """Whether ``tier`` works on this machine, and why not; measured once per process (thread-safe;
    a fork server's checks forget it: :func:`forget_probes`).

    ``rlimits`` and ``none`` always work (their Landlock and seccomp layers are applied where
    the kernel has them). For ``bwrap`` and ``unshare`` this runs the sandboxed child once
    (75-185 ms measured); bwrap is tried with ``--disable-userns`` and ``--size`` first, then
    without them (older versions lack them).
    """
    if tier in ("rlimits", "none"):
        return True, ""
    key = _memo_key(tier)
    with _lock:
        if key not in _probed:
            _probed[key] = _probe_locked(tier)
        ok, why, _ = _probed[key]
    return ok, why


def _memo_key(tier: str) -> tuple[str | None, ...]:
    """What this process's memo of a probe of ``tier`` is kept under: the tier, the program
    found for it now (:func:`_program`, on the child's ``PATH``) and the variables the child's
    policy reads. A forked check of ``grader serve`` has its client's environment: with the
    server's memo alone, a server started without bubblewrap on its ``PATH`` ran its clients'
    checks in the rlimits tier (a file right only outside a PID namespace passed served and
    failed cold, attack round 38)."""
    return (tier, _program(tier), *(os.environ.get(k) for k in ("GRADER_SECCOMP", "GRADER_SANDBOX_UIDS")))


def _program(tier: str) -> str | None:
    """The program of ``tier`` that the child's start runs: looked up on the child's own ``PATH``
    (``processes.CHILD_PATH``, where ``subprocess`` finds it), never the grader's: a grader (or
    ``grader serve``) started with another ``PATH`` probed one program and ran another, or
    decided bubblewrap was missing (attack rounds 38 and 39)."""
    from .processes import CHILD_PATH
    return shutil.which(tier, path=CHILD_PATH)


def forget_probes() -> None:
    """Drop this process's memo of probes: a fork server's check and spare find the tier as a
    cold check does (the on-disk memo, :func:`_remembered_probe`, keyed by the program's identity
    and the machine's state, an hour at most, never a failure; else a probe) rather than inherit
    the server's: a probe that timed out at its start left every served check in the rlimits
    tier until a restart (attack round 39), and one that passed stood after bubblewrap changed
    (round 40)."""
    with _lock:
        _probed.clear()


#: what a probe's outcome depends on besides the grader's source: the kernel's boot, the settings
#: that allow namespaces, the security modules and this process's profile, and which namespaces,
#: cgroup and confinement this process is in (another container, or a container's own seccomp
#: profile, gives another key)
_PROBE_FACTS = ("/proc/sys/kernel/random/boot_id", "/proc/sys/user/max_user_namespaces",
                "/proc/sys/user/max_mnt_namespaces", "/proc/sys/user/max_pid_namespaces",
                "/proc/sys/user/max_net_namespaces", "/proc/sys/user/max_ipc_namespaces",
                "/proc/sys/user/max_uts_namespaces", "/proc/sys/user/max_cgroup_namespaces",
                "/proc/sys/kernel/unprivileged_userns_clone", "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
                "/proc/self/cgroup", "/proc/self/attr/current",
                "/sys/kernel/security/lsm")
_PROBE_NAMESPACES = ("user", "mnt", "pid", "net", "ipc", "uts", "cgroup")
_PROBE_STATUS = ("Uid", "Gid", "CapEff", "CapBnd", "NoNewPrivs", "Seccomp", "Seccomp_filters")


def _identity(st: os.stat_result) -> tuple[int, ...]:
    """A file's identity for :func:`_probe_key`: device, inode, mode (a setuid bit), owner,
    size, and modification and change times in ns."""
    return st.st_dev, st.st_ino, st.st_mode, st.st_uid, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _probe_key(tier: str, program: str) -> str | None:
    """SHA-256 of everything the probe of ``tier`` (run through ``program``) depends on: the
    grader's source, the interpreter and ``program`` (path and file identity), the environment
    variables the child's policy reads, and the machine's state (:data:`_PROBE_FACTS`, this
    process's namespaces and its capabilities, no-new-privileges and seccomp); None when one of
    them cannot be read (the probe then runs, as before)."""
    import hashlib

    from .cache import grader_source_digest

    h = hashlib.sha256()
    try:
        parts = [tier, grader_source_digest(), sys.executable, program,
                 *(repr(_identity(os.stat(f))) for f in (sys.executable, program)),
                 *(f"{k}={os.environ.get(k)}" for k in ("GRADER_SECCOMP", "GRADER_SANDBOX_UIDS"))]
        for fact in _PROBE_FACTS:
            try:
                parts.append(Path(fact).read_text())
            except OSError:          # absent on this kernel, or not readable by this user
                parts.append("-")
        parts += [os.readlink(f"/proc/self/ns/{ns}") for ns in _PROBE_NAMESPACES]
        status = Path("/proc/self/status").read_text().splitlines()
        parts += [line for line in status if line.split(":", 1)[0] in _PROBE_STATUS]
    except OSError:
        return None
    for part in parts:
        h.update(part.encode("utf-8", "surrogateescape") + b"\0")
    return h.hexdigest()


def _strongest(tier: str) -> Sandbox:
    """The first variant :func:`_probe_run` tries for ``tier``: the one every check should get."""
    if tier == "bwrap" and os.geteuid() != 0:
        return Sandbox("bwrap", ("--disable-userns",))
    return Sandbox(tier)




def _remembered_probe(tier: str, program: str, run: Any) -> tuple[bool, str, Sandbox | None]:
    """``run()`` (the probe of ``tier``), or what it found before on this machine in the same state
    (:func:`_probe_key`) less than :data:`PROBE_MEMO_SECONDS` ago, from
    ``<cache>/sandbox-probe-<key>.json``: the probe starts a sandboxed child (Python and NumPy:
    0.1-0.25 CPU s, a fifth of a warm NumPy check's CPU) in every grader process otherwise.

    Only the strongest variant's success is remembered (:func:`_strongest`: bubblewrap with
    ``--size``, and ``--disable-userns`` where it applies): a failure, or a weaker variant that
    passed after a stronger one failed, may pass (a probe that timed out on a loaded machine, no
    sandbox user free) and must not leave later checks in a weaker tier until the next boot
    (attack round 33). The memo is read only from a regular file (no link followed) that is this
    user's, in a folder that is this user's, neither writable by anyone else (a shared cache
    folder, which the Slurm template allows, gives no memo), and only as the strongest variant;
    anything else is ignored and the probe runs."""
    path = _memo_path(tier, program)
    strongest = _strongest(tier)
    if path is not None and _remembered(path, strongest):
        return True, "", strongest
    ok, why, found = run()
    if path is not None and ok and found is not None and \
            (found.bwrap_extra, found.bwrap_sized) == (strongest.bwrap_extra, strongest.bwrap_sized):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if _private(os.stat(path.parent)):
                fd, tmp = tempfile.mkstemp(prefix=".sandbox-probe-", dir=path.parent)
                with os.fdopen(fd, "w") as fh:
                    json.dump({"ok": True, "bwrap_extra": list(found.bwrap_extra),
                               "bwrap_sized": found.bwrap_sized}, fh)
                os.replace(tmp, path)
        except OSError:
            pass
    return ok, why, found


def forget_tier(tier: str) -> None:
    """Forget that ``tier`` worked: this process's memo and the on-disk one of this machine's
    state (:func:`_remembered_probe`). Called when a child of that tier failed before it was
    confined (a state the probe's key does not see, as a Landlock domain: attack round 41), so
    that the next check probes again and falls back to a tier that works; never raises."""
    forget_probes()
    program = _program(tier)
    path = _memo_path(tier, program) if program is not None else None
    if path is not None:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _memo_path(tier: str, program: str) -> Path | None:
    """Where :func:`_remembered_probe` keeps the probe of ``tier`` through ``program`` for this
    machine's state (:func:`_probe_key`); None without a cache folder or a key."""
    from .cachedir import cache_root
    root = cache_root()
    key = _probe_key(tier, program) if root is not None else None
    return root / f"sandbox-probe-{key}.json" if key else None


#: how long a remembered probe stands: a machine whose state the key misses (a security profile
#: loaded at run time) gets probed again within this many seconds
PROBE_MEMO_SECONDS = 3600


def _remembered(path: Path, strongest: Sandbox) -> bool:
    """Whether ``path`` holds a success of ``strongest`` that this process may trust (see
    :func:`_remembered_probe`)."""
    import time
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or not _private(st) or not _private(os.stat(path.parent)) or \
                st.st_size > 4096 or not 0 <= time.time() - st.st_mtime < PROBE_MEMO_SECONDS:
            return False
        found = json.loads(os.read(fd, 4096))
        return isinstance(found, dict) and found.get("ok") is True and \
            found.get("bwrap_extra") == list(strongest.bwrap_extra) and found.get("bwrap_sized") is strongest.bwrap_sized
    except (OSError, ValueError, RecursionError):
        return False
    finally:
        os.close(fd)


def _probe_locked(tier: str) -> tuple[bool, str, Sandbox | None]:
    program = _program(tier)
    if program is None:
        return False, f"{tier} is not installed", None
    return _remembered_probe(tier, program, lambda: _probe_run(tier))


def _probe_run(tier: str) -> tuple[bool, str, Sandbox | None]:
    if tier == "unshare":
        ok, why = _run_probe(Sandbox("unshare"))
        return ok, why, Sandbox("unshare") if ok else None
    why = ""
    # --disable-userns needs --unshare-user, which a root grader does not use (bwrap_argv)
    first = () if os.geteuid() == 0 else (_strongest("bwrap"),)
    for candidate in (*first, Sandbox("bwrap"), Sandbox("bwrap", (), False)):
        ok, why = _run_probe(candidate)
        if ok:
            return True, "", candidate
    return False, why, None


def _make(tier: str) -> Sandbox:
    found = _probed.get(_memo_key(tier))
    return found[2] if found and found[2] is not None else Sandbox(tier)


def choose_tier(request: str) -> tuple[str, Sandbox]:
    """The tier to use for ``request`` (``auto``, ``strict`` or ``none``) and its :class:`Sandbox`.

    ``auto`` takes the strongest tier that works here (bwrap, then unshare, then rlimits);
    ``strict`` takes the strongest namespace tier or refuses; ``none`` runs with the common
    limits only. ``GRADER_SANDBOX_TIER`` overrides the choice for ``auto`` and ``strict``.

    Raises:
        GraderError: ``strict`` was asked for and no namespace tier works here; or
            ``GRADER_SANDBOX_TIER`` names an unknown tier, a tier that does not work here, or a
            non-namespace tier together with ``strict``.
    """
    if request not in ("auto", "strict", "none"):
        raise GraderError(f"--sandbox {request!r} is not one of auto, strict, none")
    if request == "none":
        return "none", Sandbox("none")
    forced = os.environ.get(ENV_TIER, "").strip()
    if forced:
        if forced not in TIERS:
            raise GraderError(f"{ENV_TIER}={forced!r} is not one of {', '.join(TIERS)}; unset it to choose automatically")
        if request == "strict" and forced not in NAMESPACE_TIERS:
            raise GraderError(f"--sandbox strict needs a namespace sandbox but {ENV_TIER}={forced}; "
                              "unset it or use --sandbox auto")
        ok, why = probe(forced)
        if not ok:
            raise GraderError(f"{ENV_TIER}={forced}: that sandbox does not work here ({why}); "
                              "unset it to choose automatically")
        return forced, _make(forced)
    reasons = []
    for tier in NAMESPACE_TIERS:
        ok, why = probe(tier)
        if ok:
            return tier, _make(tier)
        reasons.append(f"{tier}: {why}")
    if request == "strict":
        raise GraderError("--sandbox strict: no namespace sandbox works on this machine ("
                          + "; ".join(reasons) + "); install bubblewrap or allow user namespaces, "
                          "or use --sandbox auto")
    return "rlimits", Sandbox("rlimits")


__all__ = ["TIERS", "Mount", "Sandbox", "address_space_bytes", "choose_tier", "describe", "memory_limit", "probe",
           "tmpfs_sizes", "view", "inside_workdir"]
