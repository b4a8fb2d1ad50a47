"""The real executor: the submission in a sandboxed child process (``grader.runner.Worker``).

:class:`SubprocessExecutor` copies the checked bytes where nothing else can swap them
(``grader.submission.PrivateCopy``), starts the child in the chosen sandbox tier, and keeps one
rule of the run: a process that has run a hidden case never runs a visible one (:class:`_Session`).
"""
from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path
from typing import Any

from .. import cache
from ..cases import Case
from ..errors import GraderError
from ..options import CheckOptions
from ..results import CallOutcome, ImportOutcome
from ..runner import Worker
from ..siblings import Siblings
from ..submission import LoadedSubmission, PrivateCopy
from . import MAX_RESTARTS, empty_output

#: the folder of the private copy holding the main file and its siblings (``grader-sub-*/submission``)
PRIVATE_FOLDER = "submission"


class _Session:
    """A worker that is restarted after a crash, up to :data:`MAX_RESTARTS` times.

    A process that has run a hidden case never runs a visible one: :meth:`call` replaces it
    with a fresh process first (not counted as a restart), so nothing it kept from hidden
    inputs can reach a visible case's result, message or timing; and its JAX compilations are
    not kept (``Worker.close(keep_cache=False)``). JAX submissions get the warm compilations
    of their exact source (``cache.jax_submission_store``, keyed by the bytes the child imports;
    ``CheckOptions.jax_cache`` moves or disables it), or of one learner's scope
    (``CheckOptions.jax_scope``).
    """

    def __init__(self, submission: Path, function: str, framework: str, opts: CheckOptions,
                 wrap: Any, siblings: list[tuple[str, bytes]] = (), folder: str | None = None,
                 shared: tuple[str, ...] = (), deadline: float | None = None, spare: Any = None,
                 cells: list[list[int]] | None = None) -> None:
        jax_store = None
        if framework == "jax":
            try:  # the siblings' bytes are part of the key: a changed helper.py is another source
                key = cache.submission_key(submission.read_bytes(), function, framework, siblings,
                                         scope=opts.jax_scope)
                jax_store = cache.jax_submission_store(key, opts.jax_cache)
            except OSError:
                jax_store = None
        self.submission, self.function, self.framework = submission, function, framework
        self.limits, self.wrap, self.jax_store, self.folder = opts.limits, wrap, jax_store, folder
        self.shared, self.deadline = shared, deadline   # Worker's: folders to share, the run's end
        self.worker: Worker | None = None
        self.restarts = 0
        self.outputs: list[dict[str, Any]] = []
        self.versions: dict[str, Any] = {}
        self.layers: list[str] = []
        self.saw_hidden = False          # the current process has been given a hidden case
        self._launch_failure: ImportOutcome | None = None
        self.spare = spare               # a Worker started ahead (grader.run.spare), for the first launch
        self.adopted = False             # the first process was that spare
        self.cells = cells               # a notebook's lines as cells, for its warnings' places

    def launch(self) -> None:
        spare, self.spare = self.spare, None
        if spare is not None:
            spare.cells = self.cells
            if spare.hand_over(os.path.basename(self.submission), self.function, self.jax_store, self.deadline):
                self.worker, self.saw_hidden, self._launch_failure, self.adopted = spare, False, None, True
                return
            spare.close(keep_cache=False)   # it died or never set up: a process of this check's own
        self.worker = Worker(self.submission, self.function, self.framework, self.limits, self.wrap, self.jax_store,
                             self.folder, shared=self.shared, deadline=self.deadline)
        self.worker.cells = self.cells
        self.saw_hidden = False
        self._launch_failure = self.worker.launch()

    def ready(self) -> ImportOutcome:
        """The started process's import (:meth:`Worker.wait_ready`). A sandbox that fails to
        confine a process, the run's first or a restart, is the machine's fault (GraderError:
        exit 2): the earlier process and everything it started are gone before a restart (the
        sandbox user's barrier, its tmpfs), and a wait cut by the run's own deadline is the
        run's timeout, not this (attack round 44). Grading such a restart as the submission's
        crash blamed a full process budget of the machine on the learner (attack round 45:
        FAIL 0.0 where the same file scores 9.58).

        Raises:
            GraderError: the process could not be confined.
        """
        assert self.worker is not None
        if self._launch_failure is not None:
            return self._launch_failure
        out = self.worker.wait_ready()
        if out.status == "unconfined":   # the machine's sandbox failed before the submission ran: exit 2
            tier = getattr(self.wrap, "tier", None)
            if tier:
                from ..sandbox import forget_tier
                forget_tier(tier)        # the next check probes again (and falls back if it must)
            raise GraderError(f"{out.message}; the submission did not run (not its fault); the next check "
                              "probes the sandbox again (GRADER_SANDBOX_TIER chooses a tier: docs/security.md, "
                              "Choosing the tier)")
        self.versions = out.versions or self.versions
        self.layers = self.worker.layers or self.layers
        return out

    def call(self, case: Case, timeout: float | None = None) -> CallOutcome:
        hidden = case.visibility == "hidden"
        if self.saw_hidden and not hidden and self.worker is not None:
            self._collect()              # a fresh process for visible cases: not a crash restart
            self.launch()
            started = self.ready()
            if started.status != "ok":
                return self._restart_failed(started)
        if self.worker is None or self.worker.proc is None:
            self.restarts += 1
            self._collect()
            self.launch()
            started = self.ready()
            if started.status != "ok":
                return self._restart_failed(started)
        assert self.worker is not None
        self.saw_hidden = self.saw_hidden or hidden
        return self.worker.call(case.inputs, timeout, keywords=case.keywords, scalars=case.scalars)

    def _restart_failed(self, started: ImportOutcome) -> CallOutcome:
        """The call's outcome when its new process did not start: the run's timeout when the
        run's time ran out meanwhile, else a crash."""
        if started.status == "timeout" and self.deadline is not None and time.monotonic() >= self.deadline:
            return CallOutcome(status="timeout", limit="total", message=started.message)
        return CallOutcome(status="crash", message=f"restarting the submission failed: {started.message}")

    def _collect(self) -> None:
        if self.worker is not None:
            self.worker.close(keep_cache=not self.saw_hidden)
            self.outputs.append(self.worker.output())
            self.worker = None

    def close(self) -> dict[str, Any]:
        self._collect()
        out = empty_output()
        for o in self.outputs:
            out["stdout"] += o["stdout"]
            out["stderr"] += o["stderr"]
            out["stdout_bytes"] += o["stdout_bytes"]
            out["stderr_bytes"] += o["stderr_bytes"]
            out["truncated"] = out["truncated"] or o["truncated"]
        return out


class SubprocessExecutor:
    """The submission ``loaded`` (with ``siblings``) run in a sandboxed child process.

    Args:
        loaded: the submission as read; its bytes are what the child imports.
        siblings: the sibling modules taken along.
        function: the name of the function graded.
        framework: ``"numpy"``, ``"jax"`` or ``"torch"``.
        options: the check's options (limits, JAX cache folder).
        tier, wrap: the sandbox tier and its wrapper (``grader.sandbox.choose_tier``).
        shown: the submission's path as the learner knows it (:meth:`unprivate`).
        deadline: ``time.monotonic()`` value at which the whole run ends.

    The child is started at construction (:meth:`launch` is idempotent), so that its import
    overlaps with whatever the caller does next (the reference values).

    Raises:
        GraderError: the private copy cannot be written.
    """

    max_restarts = MAX_RESTARTS

    def __init__(self, loaded: LoadedSubmission, siblings: Siblings, function: str, framework: str,
                 options: CheckOptions, tier: str, wrap: Any, shown: str, deadline: float) -> None:
        # the checked bytes, where nothing else can swap them, in a folder named like no folder of
        # the host (grader-sub-*/submission/): the child's __file__, sys.path and mount table name
        # no class, home or learner folder; unprivate() writes them back as the report names the file
        neutral = dataclasses.replace(loaded, path=os.path.join(os.sep, PRIVATE_FOLDER, os.path.basename(loaded.path)))
        from .spare import take
        # a child started ahead for this framework, limits and tier (grader serve): the copy is
        # written into the folder it was shown, then it is told the file's name
        spare = take(framework, options.limits, tier)
        try:
            self.copy = PrivateCopy(neutral, siblings.files, root=spare.root if spare is not None else None)
        except BaseException:
            if spare is not None:
                spare.close()
            raise
        self.options, self.tier, self.wrap, self.shown, self.framework = options, tier, wrap, shown, framework
        self.session = _Session(Path(self.copy.path), function, framework, options, wrap, siblings.files,
                                self.copy.folder, shared=(self.copy.root,), deadline=deadline,
                                spare=spare.worker if spare is not None else None,
                                cells=loaded.notebook.cell_runs() if loaded.notebook is not None else None)
        self._launched = False
        try:
            self.launch()
        except BaseException:   # no process for it (the machine's processes spent): no copy left behind
            self.close()
            raise

    @property
    def restarts(self) -> int:
        """Restarts after a crash so far."""
        return self.session.restarts

    def launch(self) -> None:
        """Start the child (once); :meth:`start` waits for its import."""
        if not self._launched:
            self._launched = True
            self.session.launch()

    def start(self) -> ImportOutcome:
        """Wait for the submission's import; a crash while importing under a memory limit
        below what the framework's import needs says so in ``hint``."""
        from .. import frameworks
        from ..sandbox import address_space_bytes

        self.launch()
        started = self.session.ready()
        if started.status == "crash" and self.options.limits.memory_bytes:
            need = frameworks.get(self.framework).ADDRESS_SPACE_MIB
            space = address_space_bytes(self.options.limits.memory_bytes, self.wrap) >> 20
            if space < need:
                # a framework that runs out of address space while importing may abort, not raise
                label = frameworks.get(self.framework).LABEL
                started.hint = (f"the memory limit leaves {space} MiB of address space, and importing {label} needs "
                                f"about {need} MiB: raise --memory-mb (docs/security.md, rlimits)")
        return started

    def facts(self) -> dict[str, Any]:
        """Versions the child imported, the memory limit applied and the sandbox layers."""
        from ..sandbox import memory_limit

        out: dict[str, Any] = {"jax": self.session.versions.get("jax"), "torch": self.session.versions.get("torch"),
                               "memory_limit": memory_limit(self.tier, self.session.layers,
                                                            self.options.limits.memory_bytes, self.wrap)}
        if self.session.layers:  # what the child applied to itself: the view, rlimits, its uid, Landlock, seccomp
            out["sandbox_layers"] = list(self.session.layers)
        if self.session.adopted:  # its first process was started ahead (grader.run.spare)
            out["child"] = "spare"
        return out

    def call(self, case: Case, timeout: float | None = None) -> CallOutcome:
        """Call the submission on ``case`` (restarting or replacing its process as needed)."""
        return self.session.call(case, timeout=self.options.limits.call_timeout if timeout is None else timeout)

    def postpone(self, seconds: float) -> None:
        """Move the run's end ``seconds`` later (s, wall clock): the time an assignment spent on
        another part's visible cases while this run waited before its hidden ones
        (``grading.grading_steps``) is not this run's."""
        session = self.session
        session.deadline = None if session.deadline is None else session.deadline + seconds
        if session.worker is not None and session.worker.deadline is not None:
            session.worker.deadline += seconds

    def close(self) -> dict[str, Any]:
        """Stop the child, remove the private copy; the captured output."""
        try:
            return self.session.close()
        finally:
            self.copy.close()

    def unprivate(self, text: str | None) -> str | None:
        """``text`` with the private copy's paths as the report names the submission: the copy
        itself as :attr:`shown`, a sibling as the file beside it (``class/bob/helper.py`` for
        ``class/bob/solution.py``; ``helper.py`` for ``solution.py``), the private folder alone
        as the shown file's folder (``.`` when it has none). Learner reports then name them
        relative to the learner's folder (``grader.reports.view.learner_paths``)."""
        if not text:
            return text
        folder = os.path.dirname(self.shown)
        text = text.replace(self.copy.path, self.shown)
        text = text.replace(self.copy.folder + os.sep, folder + os.sep if folder else "")
        return text.replace(self.copy.folder, folder or os.curdir)
