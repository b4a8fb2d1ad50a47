"""Check one submission against one problem: load -> plan -> executor -> grade.

:func:`check_submission` is the whole of ``grader check`` without the printing; batch grading
calls it once per submission. It never raises for a fault of the submission (those become the
report), only :class:`grader.errors.GraderError` for faults of the grader's inputs. The stages
are modules of their own (docs/architecture.md): ``grader.submission`` reads the file,
``grader.plan`` decides the cases and their reference values, ``grader.run`` runs the
submission (the sandboxed child), ``grader.grading`` judges and scores and builds the report.

The names callers have imported from here over time (the options, the submission readers, the
seed secret's helpers) are re-exported from the modules that now hold them.
"""
from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING

from .options import (SEED_LABEL, SEED_SECRET_ENV, SIBLINGS_ENV, CheckOptions, Limits,  # noqa: F401 - re-exported
                      derive_seed, read_seed_secret)
from .expected import expected_for, values_of  # noqa: F401 - re-exported
from .plan import Plan, make_plan  # noqa: F401 - re-exported
from .results import SECRET_REPLAY_NOTE, CallOutcome, ImportOutcome, Report  # noqa: F401 - re-exported
from .run import MAX_RESTARTS  # noqa: F401 - re-exported
from .spec import Problem
from .submission import (DIGEST_LABEL, MAX_SUBMISSION_BYTES, LoadedSubmission, PrivateCopy,  # noqa: F401
                         current_digest, defined_functions, detect_framework, function_line, functions_of,
                         load_submission, names_in, parse_python, read_submission, scanned_functions,
                         siblings_of, submission_digest)

if TYPE_CHECKING:
    from .run import Executor


def check_submission(submission: str | Path, problem: Problem, opts: CheckOptions | None = None) -> Report:
    """Grade ``submission`` against ``problem`` and return the :class:`Report`.

    The child that runs the submission is started before the reference values are computed,
    so that its import and the JAX reference (a thread of this process) overlap.

    Raises:
        GraderError: the submission file is missing or unreadable, the framework is not graded by
            the problem, a replay case is malformed, or the reference solution fails.
    """
    from .grading import drive

    return drive(check_steps(submission, problem, opts))


def check_steps(submission: str | Path, problem: Problem,
                opts: CheckOptions | None = None) -> Generator[None, None, Report]:
    """:func:`check_submission` as a generator that pauses once before the first hidden case
    (``grading.grading_steps``) and returns the report; ``assignment.check_assignment`` runs
    every part's visible cases before any part's hidden ones with it. The plan is made (and
    the child started) when the generator is first advanced.

    Raises:
        GraderError: as :func:`check_submission`.
    """
    from .grading import grading_steps
    from .processes import release_user_slot
    from .run.sandboxed import SubprocessExecutor
    from .sandbox import choose_tier

    plan = make_plan(submission, problem, opts or CheckOptions(), choose_tier)
    if plan.cannot_run is not None:
        return (yield from grading_steps(plan, None))
    slot = _user_slot(plan)   # before the child starts; the wait is added to the run's time
    try:
        executor = SubprocessExecutor(plan.loaded, plan.siblings, problem.function, plan.framework, plan.options,
                                      plan.tier, plan.wrap, plan.shown, plan.deadline)
        return (yield from plan_steps(plan, executor))
    finally:
        release_user_slot(slot)


def _user_slot(plan: Plan) -> int | None:
    """This user's one check slot (``processes.take_user_slot``), waited for, where the
    submission's process will be this user itself (``sandbox_user.shares_user_budget`` of the
    plan's tier): its threads count against the user's one process budget, which another
    learner's check in another grader process could fill while XLA starts its threads in this
    one (attack round 47: two shards of a class at once on one node; a correct JAX file aborted,
    9.75). The time waited is added to the plan's deadline: another check's run is not this
    one's. None where no slot is needed."""
    import os
    import time

    from .processes import SLOT_HELD_ENV, wait_user_slot
    from .sandbox_user import shares_user_budget
    if not shares_user_budget(plan.tier) or os.environ.get(SLOT_HELD_ENV) == "1":
        return None   # (a batch that holds the slot for this check says so)
    began = time.monotonic()
    slot = wait_user_slot(plan.tier)
    plan.deadline += time.monotonic() - began
    return slot


def grade_plan(plan: Plan, executor: "Executor") -> Report:
    """Grade ``plan`` with ``executor`` (``grading.grade``), computing the reference values the
    case cache lacks meanwhile, and store them in the cache when all were computed: not for a
    replay, named cases (``--case``) or a secret seed, whose case sets are not the cache's.

    Raises:
        GraderError: the reference solution failed on a case.
    """
    from .grading import drive

    return drive(plan_steps(plan, executor))


def plan_steps(plan: Plan, executor: "Executor") -> Generator[None, None, Report]:
    """:func:`grade_plan` as a generator pausing before the hidden cases (``check_steps``)."""
    from .grading import grading_steps

    if plan.expected is None:   # nothing can run (plan.cannot_run): no reference values
        return (yield from grading_steps(plan, executor))
    plan.expected.start()
    try:
        report = yield from grading_steps(plan, executor)
    finally:
        plan.expected.close()
    if plan.options.replay is None and not plan.options.only_cases and not plan.secret:
        plan.expected.store(plan.cache_key)
    return report
