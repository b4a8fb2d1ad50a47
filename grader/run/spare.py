"""Spare children: a sandboxed child started ahead of its submission, used once.

Most of a warm check's time is the child's start: bubblewrap, the interpreter, confining itself
(uid, rlimits, Landlock, seccomp) and importing NumPy, JAX or PyTorch (docs/performance.md). A
:class:`Spare` does all of that before there is a submission: its child is shown an empty
folder, read-only, and waits. When a check of the same framework, limits and sandbox tier
comes, the grader writes the submission (and the modules taken along) into that folder, stages
the submission's warm JAX compilations into the spare's seed folder, and only then tells the
child the file's name (``runner.Worker.hand_over``): the child imports it and serves that one
check's calls, and is discarded with it. A spare is never given a second submission, and it
holds no learner code and no case until it is handed one; everything the grader does on the
host side of the hand-over happens before any submission code runs.

``grader serve`` (``grader.forkserver``) keeps one forked process per framework with a spare
ready: the next check of that framework runs in that process and adopts its spare
(:func:`take`). Anything that does not match (another framework, a ``--memory-mb`` or
``--timeout`` of its own, another tier, another temporary folder) closes the spare and starts a
child of its own, exactly as without spares.
"""
from __future__ import annotations

import os
import tempfile
from typing import Any

from ..forkserver_client import process_state

#: the folder of a private copy that the child is shown (``sandboxed.PRIVATE_FOLDER``)
FOLDER = "submission"
#: environment variables read when a child starts: those its environment copies from the
#: grader's (``processes.child_environment``) and the sandbox's (seccomp on or off, the sandbox
#: users' uids, the tier asked for; a server started with ``GRADER_SECCOMP=0`` ran a default
#: client's check without seccomp through its spare, attack round 37)
_ENV_KEYS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "GRADER_SECCOMP", "GRADER_SANDBOX_UIDS", "GRADER_SANDBOX_TIER")

_spare: "Spare | None" = None


class Spare:
    """A sandboxed child of ``framework`` started with ``limits`` in ``tier`` (its ``wrap``),
    waiting for one submission.

    Attributes:
        root: the private copy's root folder (``grader-sub-<pid>-*``); :attr:`folder`, its
            ``submission`` folder, is what the child is shown, empty until the hand-over.
        worker: the :class:`grader.runner.Worker` whose process waits.
        failed: why the child could not start (an ``ImportOutcome``), or None.

    Raises:
        OSError: the folders cannot be made.
        GraderError: no sandbox user is free (root only).
    """

    def __init__(self, framework: str, limits: Any, tier: str, wrap: Any) -> None:
        from ..cleanup import sweep_stale
        from ..runner import Worker

        sweep_stale()
        self.framework, self.limits, self.tier = framework, limits, tier
        self.tmp = tempfile.gettempdir()
        self.env = tuple(os.environ.get(k) for k in _ENV_KEYS)
        self.state = process_state()   # the umask and resource limits its child starts under
        self.root = tempfile.mkdtemp(prefix=f"grader-sub-{os.getpid()}-")
        self.folder = os.path.join(self.root, FOLDER)
        os.mkdir(self.folder, 0o755)
        os.chmod(self.folder, 0o755)   # whatever the umask: the child, another user, enters it
        self.worker = Worker(os.path.join(self.folder, ".await"), "", framework, limits, wrap, None,
                             self.folder, shared=(self.root,))
        self.failed = self.worker.launch(awaiting=True)

    def matches(self, framework: str, limits: Any, tier: str) -> bool:
        """Whether this spare can run a check of ``framework`` with ``limits`` in ``tier``: the
        same child a check would start itself, in the same temporary folder, with the same
        sandbox settings of the environment, umask and resource limits (the check's process
        has taken its client's: ``grader.forkserver.adopt``)."""
        return (self.failed is None and framework == self.framework and limits == self.limits and tier == self.tier
                and tempfile.gettempdir() == self.tmp and tuple(os.environ.get(k) for k in _ENV_KEYS) == self.env
                and process_state() == self.state)

    def close(self) -> None:
        """Stop the child and remove the folders (a spare that was not used)."""
        from ..cleanup import remove_tree

        try:
            self.worker.close(keep_cache=False)
        finally:
            remove_tree(self.root)


def prepare(framework: str, limits: Any, tier: str, wrap: Any) -> Spare | None:
    """Start this process's spare (closing any earlier one); it, or None when it could not
    start (the next check then starts its own child)."""
    global _spare
    discard()
    try:
        _spare = Spare(framework, limits, tier, wrap)
    except Exception:  # noqa: BLE001 - a spare is an optimisation: without one the check starts its own child
        _spare = None
    return _spare


def take(framework: str, limits: Any, tier: str) -> Spare | None:
    """This process's spare if it matches (:meth:`Spare.matches`), removed from the registry so
    it is used once; otherwise None, and a spare that does not match is closed."""
    global _spare
    spare, _spare = _spare, None
    if spare is None:
        return None
    if spare.matches(framework, limits, tier):
        return spare
    spare.close()
    return None


def discard() -> None:
    """Close this process's spare, if any."""
    global _spare
    spare, _spare = _spare, None
    if spare is not None:
        spare.close()
