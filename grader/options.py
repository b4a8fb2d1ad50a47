"""What a check is asked to do: its options and resource limits, and the seed an instructor's secret gives.

:class:`CheckOptions` is everything ``grader check``'s flags say (the CLI builds one; batch
grading and library callers build their own); :class:`Limits` the resource limits of the
submission's process. Both are plain records: nothing here reads a file but
:func:`read_seed_secret`, and nothing changes process state.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import stat
from dataclasses import dataclass, field
from typing import Any, Callable

from . import cache
from .errors import GraderError


@dataclass
class Limits:
    """Resource limits for one submission process.

    Attributes:
        call_timeout: CPU seconds one call may use (the child's user + system time, measured by
            the grader from /proc, so a busy machine does not fail correct code: a 1.0 s float16
            matmul took 2.04 s of wall-clock time at load 10 on 2 cores). A call also ends at its
            wall-clock backstop, :meth:`backstop` of this (a call that sleeps or blocks).
        import_timeout: CPU seconds to start the process and import the submission; its
            wall-clock backstop likewise.
        wall_factor, wall_margin: the wall-clock backstop of a CPU limit ``t`` is
            ``wall_factor * t + wall_margin`` seconds (:meth:`backstop`).
        memory_bytes: the child's memory limit in bytes (``--memory-mb``; 0: none). It is the
            address-space limit (RLIMIT_AS; JAX alone maps about 1.5 GB), less the private
            tmpfs mounts in the namespace tiers (``sandbox.address_space_bytes``).
        cpu_seconds: CPU-time limit (RLIMIT_CPU) for the whole process, in seconds.
        file_bytes: largest file the process may write (RLIMIT_FSIZE), in bytes.
        open_files: RLIMIT_NOFILE.
        processes: RLIMIT_NPROC. The kernel counts every process and thread of the user, the
            grader's own included (a JAX grader and its child have about 16 threads each on 2
            cores; XLA's pools grow with the cores), so it must leave room for parallel runs;
            it is not enforced for uid 0, which is what the namespace tiers map to when the
            grader runs as root. The seccomp filter, which forbids new processes (threads
            only), is the real bound. :func:`default_processes`: 256, or twice the CPUs plus
            128 on a larger machine; one learner's threads come out of a job's shared process
            budget (a container's or batch job's pids limit), so the whole of 1,024 let one
            learner's threads leave another learner's check unable to start (attack round 45).
            A job of ``grader grade --jobs N`` under a pids limit needs about N x (this + 32).
        output_cap: bytes kept of each of stdout and stderr (the rest is counted, not kept).
        reply_bytes: largest reply payload accepted from the child, in bytes.
        workdir_bytes: disk the working folder may take where it is a host folder (tiers
            ``rlimits`` and ``none``; the namespace tiers put it on a size-capped tmpfs):
            the grader measures it while the child runs and kills the child past it.
        workdir_files: entries the working folder may hold there (inodes are disk too).
    """

    call_timeout: float = 10.0
    import_timeout: float = 30.0
    memory_bytes: int = 4 << 30
    cpu_seconds: int = 300
    file_bytes: int = 64 << 20
    open_files: int = 256
    processes: int = field(default_factory=lambda: default_processes())
    output_cap: int = 64 << 10
    reply_bytes: int = 256 << 20
    workdir_bytes: int = 256 << 20
    workdir_files: int = 10000
    wall_factor: float = 5.0
    wall_margin: float = 5.0

    def backstop(self, cpu_seconds: float) -> float:
        """The wall-clock seconds after which a step limited to ``cpu_seconds`` of CPU ends anyway."""
        return self.wall_factor * cpu_seconds + self.wall_margin


def default_processes() -> int:
    """The default ``RLIMIT_NPROC`` of a submission's process (:attr:`Limits.processes`): 256 threads,
    or ``2 * CPUs + 128`` where that is more (XLA starts a pool of threads per CPU)."""
    return max(256, 2 * (os.cpu_count() or 1) + 128)


#: ``0`` turns the taking along of sibling modules off (``CheckOptions.siblings``); ``grader
#: grade`` sets it for the check of a learner whose file shares a folder with other learners'
SIBLINGS_ENV = "GRADER_SIBLINGS"


@dataclass
class CheckOptions:
    """Options of one check (the CLI's flags).

    Attributes:
        seed: case generation seed (an int >= 0).
        max_examples: generated cases (None: the spec's ``generated.count``).
        framework: ``"numpy"``, ``"jax"``, ``"torch"`` or None to detect from the submission's imports.
        limits: per-call and resource limits (``call_timeout`` in seconds...).
        total_timeout: wall-clock seconds for the whole run.
        only_cases: run only the cases with these names (for replay), or None.
        replay: a replay literal (see ``grader.cases.case_from_literal``), or None.
        shrink: shrink failing generated cases to the smallest failing input.
        sandbox: the sandbox tier request, ``"auto"``, ``"strict"`` or ``"none"``.
        submission_shown: how the submission path appears in replay commands.
        submission_named: the caller named the submission (``--shown``: ``grader grade``, the
            platform templates): a learner's report names its files by their names and its
            folder as ``.`` (``reports.view.learner_paths``), whatever path the check read.
        problems_dir: the ``--problems-dir`` given, repeated in replay commands.
        progress: called while running with (phase, done, total), or None: ``("import", 0, 0)``
            once the plan is made, as the child starts and imports the submission; ``("cases", k, n)``
            before the first visible case (k = 0, the child has imported the submission) and
            after each (n: the visible cases), ``("shrink", 0, 0)`` when a search for a smaller
            failing input begins, ``("hidden", 0, n)`` once before the hidden cases (never one
            call per hidden case: that would time each of them).
        seed_secret: the instructor's secret (bytes), or None. When set, the cases come from
            :func:`derive_seed` of it and the submission's bytes, ``seed`` must be left at 0,
            and no case set is cached (docs/security.md, class 6). Never shown in a repr.
        seed_secret_source: where the secret came from (``"--seed-secret"`` or
            ``"GRADER_SEED_SECRET"``), recorded in the report (never the secret itself).
        audience: who the report is for, ``"learner"`` or ``"instructor"``. With a secret, a
            learner's report never holds the derived seed (``environment.seed`` is
            ``"secret"``) nor a replay command with ``--seed``.
        seed_source: set by :func:`check_submission`: ``"secret"`` when ``seed`` was derived
            from a secret, else ``""``.
        jax_cache: where JAX submissions' warm compilations are kept: a folder, ``""`` (none
            kept) or None (under the cache folder, ``grader.cache.cache_root``). Defaults to
            ``GRADER_JAX_CACHE`` as set when the options are made (``cache.jax_cache_setting``);
            passed on explicitly, so a check changes no environment variable.
        jax_scope: the warm compilations of a JAX submission are kept for this token instead of
            for its exact source (``grader.cache.submission_key``): every check with the same
            token reuses them, so an edited function compiles only the operations that changed.
            ``check(fn)`` gives one token per notebook kernel and ``grader serve``'s page one per
            server: one learner's own checks. None (the default, and always for ``grader grade``):
            by source, since a store one submission wrote must never be loaded by another
            person's (docs/security.md, class 3).
        siblings: take along the ``.py`` files beside the submission that it imports
            (``grader.siblings``; a multi-file submission). False for a file that shares its
            folder with other learners' files (``grader grade`` on a class folder of files).
            Defaults to :data:`SIBLINGS_ENV` not being ``0`` when the options are made.
        allowance_share: the share of each tolerance allowance the values may use (1: all of
            it; ``grader validate`` grades the alternatives with 0.5, so that correct code has
            a margin of 2).
    """

    seed: int = 0
    max_examples: int | None = None
    framework: str | None = None
    limits: Limits = field(default_factory=Limits)
    total_timeout: float = 300.0
    only_cases: list[str] | None = None
    replay: dict[str, Any] | None = None
    shrink: bool = True
    sandbox: str = "auto"
    submission_shown: str | None = None
    submission_named: bool = False
    problems_dir: str | None = None
    progress: Callable[[str, int, int], None] | None = None
    seed_secret: bytes | None = field(default=None, repr=False)
    seed_secret_source: str = ""
    audience: str = "learner"
    seed_source: str = ""
    jax_cache: str | None = field(default_factory=cache.jax_cache_setting)
    jax_scope: str | None = None
    siblings: bool = field(default_factory=lambda: os.environ.get(SIBLINGS_ENV, "1") != "0")
    allowance_share: float = 1.0


#: the environment variable that carries the instructor's seed secret (CI secrets arrive so)
SEED_SECRET_ENV = "GRADER_SEED_SECRET"
#: domain separation of the derived seed (a new version of the derivation gets a new label)
SEED_LABEL = b"grader-seed-v1\0"


def derive_seed(secret: bytes, submission: bytes) -> int:
    """The case seed of ``submission`` (its bytes, as read) under the instructor's ``secret``:
    the first 8 bytes, big-endian, of HMAC-SHA256(secret, ``SEED_LABEL`` + SHA-256(submission)).

    Same bytes and secret give the same seed (a regrade reproduces the run); other bytes or
    another secret give an unrelated one, and without the secret it cannot be computed. An int
    in ``[0, 2**64)``.
    """
    digest = hmac.new(secret, SEED_LABEL + hashlib.sha256(submission).digest(), "sha256").digest()
    return int.from_bytes(digest[:8], "big")


def read_seed_secret(path: str | None, environ: Any = None) -> tuple[bytes | None, str]:
    """The seed secret and where it came from: the file ``path`` (``--seed-secret``) if given,
    else the environment variable :data:`SEED_SECRET_ENV` if set and not empty, else
    ``(None, "")``. Trailing whitespace is stripped (a file written by ``echo``, a CI secret
    pasted with a newline). An empty variable means "no secret" (a CI secret that is not set
    arrives empty); an empty file is an error.

    Raises:
        GraderError: the file is missing, unreadable, not a regular file, or empty.
    """
    if path is not None:
        flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(path, flags)
        except FileNotFoundError:
            raise GraderError(f"--seed-secret {path!r} does not exist") from None
        except OSError as exc:
            raise GraderError(f"cannot read --seed-secret {path!r}: {exc.strerror or exc}") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise GraderError(f"--seed-secret {path!r} is not a regular file")
            with os.fdopen(os.dup(fd), "rb") as fh:
                data = fh.read(1 << 20)
        except OSError as exc:
            raise GraderError(f"cannot read --seed-secret {path!r}: {exc.strerror or exc}") from None
        finally:
            os.close(fd)
        secret = data.rstrip()
        if not secret:
            raise GraderError(f"--seed-secret {path!r} is empty; put a long random string in it "
                              "(e.g. `openssl rand -hex 32`)")
        return secret, "--seed-secret"
    env = os.environb if environ is None else environ
    value = env.get(SEED_SECRET_ENV.encode()) if env is os.environb else env.get(SEED_SECRET_ENV)
    if isinstance(value, str):
        value = os.fsencode(value)
    secret = (value or b"").rstrip()
    return (secret, SEED_SECRET_ENV) if secret else (None, "")
