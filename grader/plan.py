"""What a check will do, decided before any submission code runs: a :class:`Plan`.

:func:`make_plan` reads the options and the loaded submission once and fixes everything the
later stages need: the seed (derived from the instructor's secret, if any), the framework and
its dtypes, the cases (from the case cache or made afresh, cut to ``--case`` names, or one
replay literal), their reference values (:class:`References`), the case-cache key, the report's
``environment`` as known before the run, and why the submission cannot run at all, if it
cannot. The executor (``grader.run``) and the grading loop (``grader.grading.grade``) only read
a plan. Nothing here starts a process; the reference runs in a thread of this process when
:meth:`References.start` is called.
"""
from __future__ import annotations

import ast
import dataclasses
import hashlib
import json
import os
import platform
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from . import cache, memo
from .cases import Case, case_from_literal, case_literal, cases_digest, fixed_cases, generated_cases
from .compare import SMALL, Expected
from .errors import GraderError
from .expected import expected_for, expected_from
from .options import CheckOptions, derive_seed
from .results import Failure, Replay
from .siblings import Siblings
from .spec import NO_DEFAULT, Problem
from .submission import LoadedSubmission, fix_for, function_line, load_submission, siblings_of, submission_digest
from .version import __version__


def reference_threads() -> int:
    """How many threads compute a plan's reference values: the cores this process may run on,
    at most 4. Each case's values depend on that case alone (the derived allowance's probes are
    seeded by the case's name), so the values are the same whatever the count; XLA compiles
    and computes without the GIL. An empty cache's first check of cross_entropy spent 10.6 of
    its 12.9 s waiting for one thread's 456 compilations."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(4, cores))


class References:
    """The expected values of a plan's cases (:class:`grader.compare.Expected`, by index).

    Values the case cache already holds (``known``: the whole set, or some of its cases from
    another set of its family, :func:`grader.cache.donated_values`) are ready at once; the
    others are computed by the JAX reference in :func:`reference_threads` threads of this
    process once :meth:`start` is called, so that they overlap with the submission's import in
    its own process (XLA releases the GIL while it compiles and computes). :meth:`store` writes
    a set completed here to the case cache.
    """

    def __init__(self, problem: Problem, cases: list[Case],
                 known: dict[str, tuple[np.ndarray, np.ndarray | None]] | None = None, stored: bool = False) -> None:
        self.problem, self.cases = problem, cases
        #: whether ``known`` is this set's own cache entry (nothing to store)
        self.stored = stored
        known = known or {}
        #: (exact output, scale) of each case the cache gave, else None
        self._given = [known.get(c.name) for c in cases]
        self._ready = [expected_from(problem, c, *g) if g is not None else None for c, g in zip(cases, self._given)]
        self._pool: ThreadPoolExecutor | None = None
        self._futures: dict[int, Future] = {}

    @property
    def cached(self) -> bool:
        """Whether every value came from the case cache."""
        return all(r is not None for r in self._ready)

    def start(self) -> None:
        """Start computing the values the cache did not hold (a no-op when all were cached)."""
        if not self.cached and self._pool is None:
            self._pool = ThreadPoolExecutor(reference_threads(), thread_name_prefix="reference")
            self._futures = {i: self._pool.submit(expected_for, self.problem, c)
                             for i, c in enumerate(self.cases) if self._ready[i] is None}

    def __getitem__(self, i: int) -> Expected:
        """The expected value of case ``i``, waiting for it if it is being computed.

        Raises:
            GraderError: the reference failed on that case (``expected.expected_for``).
        """
        if self._ready[i] is not None:
            return self._ready[i]
        self.start()
        return self._futures[i].result()

    def complete(self) -> bool:
        """Whether every value is known, those the cache lacked computed here without error,
        and the set is not its own cache entry already: a set the cache can keep."""
        return not self.stored and all(r is not None or (i in self._futures and self._futures[i].done()
                                                         and not self._futures[i].cancelled()
                                                         and self._futures[i].exception() is None)
                                       for i, r in enumerate(self._ready))

    def store(self, key: str) -> None:
        """Write the set to the case cache under ``key`` (when :meth:`complete`)."""
        if key and self.complete():
            values = [g if g is not None else (self._futures[i].result().ref, self._futures[i].result().scale)
                      for i, g in enumerate(self._given)]
            cache.store_cases(key, [(c, ref, scale) for c, (ref, scale) in zip(self.cases, values)])

    def close(self) -> None:
        """Stop computing (cancel what has not started; wait for the one running)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)


@dataclass
class Plan:
    """One check, decided (:func:`make_plan`).

    Attributes:
        problem: the problem graded.
        loaded: the submission as read (``grader.submission.load_submission``).
        shown: the submission's path as reports and replay commands name it.
        options: the check's options, with ``seed`` derived from the secret (which is dropped)
            when there was one.
        framework: ``"numpy"``, ``"jax"`` or ``"torch"``.
        dtypes: the dtypes graded for that framework, in the spec's order.
        siblings: the sibling modules taken along (``grader.siblings``).
        secret: whether the seed came from the instructor's secret.
        environment: the report's ``environment`` as known before the run (docs/formats.md).
        tier, wrap: the sandbox tier the executor uses and its wrapper (``grader.sandbox``).
        cannot_run: why the submission cannot run at all (the framework is missing here, the
            file cannot be graded, a syntax error), as the report's failure; else None. When
            set, ``cases`` is empty.
        cases: the cases to run, in the order of the report.
        expected: their reference values.
        cache_key: the case-cache key ("" for a replay).
        started: ``time.monotonic()`` when the check began (its seconds count from here).
        deadline: ``started + options.total_timeout``.
        seeded: under a secret seed, the names of the cases whose inputs the seed chooses
            (:func:`seed_dependent`); empty otherwise.
    """

    problem: Problem
    loaded: LoadedSubmission
    shown: str
    options: CheckOptions
    framework: str
    dtypes: tuple[str, ...]
    siblings: Siblings
    secret: bool
    environment: dict[str, Any]
    tier: str
    wrap: Any
    cannot_run: Failure | None
    cases: list[Case] = field(default_factory=list)
    expected: References | None = None
    cache_key: str = ""
    started: float = 0.0
    deadline: float = 0.0
    seeded: frozenset[str] = frozenset()

    def replay_of(self, case: Case) -> Replay | None:
        """How to re-run exactly ``case`` (:func:`replay_of`)."""
        return replay_of(self.options, self.problem, case, self.shown, case.name in self.seeded)


def replay_of(opts: CheckOptions, problem: Problem, case: Case, shown: str, seeded: bool = False) -> Replay | None:
    """How to re-run exactly ``case`` (by name, or as a literal for small ones), as facts
    (``grader.results.Replay``; ``seeded``: the seed chooses the case's inputs).

    With a secret seed (``opts.seed_source == "secret"``) and the learner audience the command
    never holds ``--seed``: a case with at most ``compare.SMALL`` elements per array is given
    as a literal (``--replay JSON``), a larger one gets None (``reports.common.SECRET_REPLAY_NOTE``
    says why). The instructor gets ``--seed N --case NAME``.
    """
    base = {"submission": shown, "problem": problem.id, "problems_dir": opts.problems_dir or None,
            "framework": opts.framework or None, "seeded": seeded}
    secret_for_learner = opts.seed_source == "secret" and opts.audience != "instructor"
    small = all(a.size <= SMALL for a in case.inputs.values())
    if case.origin in ("shrunk", "replay") or (secret_for_learner and small):
        return Replay(**base, literal=json.dumps(case_literal(case), separators=(",", ":")))
    if secret_for_learner:
        return None
    # under a secret, a small seeded case keeps its literal for a learner shown the instructor's
    # report (grade's feedback): they get it as --replay, as a learner's own check gives it
    small_literal = json.dumps(case_literal(case), separators=(",", ":")) \
        if opts.seed_source == "secret" and seeded and small else None
    return Replay(**base, case=case.name, seed=opts.seed or None, max_examples=opts.max_examples, small=small_literal)


def make_plan(submission: str | Path, problem: Problem, opts: CheckOptions,
              sandbox: Callable[[str], tuple[str, Any]]) -> Plan:
    """Read ``submission`` (once, no link followed) and decide its check against ``problem``.

    ``sandbox`` chooses the sandbox tier for ``opts.sandbox`` (``grader.sandbox.choose_tier``:
    the tier's name and its wrapper); it is called once the submission is known to be gradable
    by this problem, and its choice is recorded in the plan and the environment.

    Raises:
        GraderError: the file is missing or unreadable, ``--seed`` was given with a secret, the
            problem does not grade the submission's framework, a replay literal is malformed or of
            a dtype not graded, or a ``--case`` name is unknown.
    """
    from . import frameworks

    started = time.monotonic()
    shown = opts.submission_shown or str(submission)
    loaded = load_submission(submission, shown)  # read once, links not followed: what the child imports
    started = min(started, loaded.read_at or started)  # the clock runs from the file's first read (load_submission)
    secret = opts.seed_secret is not None
    if secret and opts.seed:
        raise GraderError("--seed cannot be used with a seed secret: the seed is derived from the secret "
                          "and the submission")
    siblings = siblings_of(submission, loaded, opts.siblings)  # the modules beside it that it imports
    if secret:
        # the seed of everything the submission is, the main file and each module taken along
        # (a helper that was a table of one run's answers kept the main file's seed: round
        # four, class 2); the secret itself goes no further than this line
        opts = dataclasses.replace(opts, seed=derive_seed(opts.seed_secret or b"", seed_material(loaded, siblings)),
                                   seed_secret=None, seed_source="secret")
    framework = opts.framework or frameworks.detect(loaded.tree, loaded.source)
    if framework not in problem.frameworks:
        raise GraderError(f"problem {problem.id!r} does not grade {framework} submissions "
                          f"(it grades: {', '.join(problem.frameworks)})")
    dtypes = problem.frameworks[framework]
    tier, wrap = sandbox(opts.sandbox)
    env = _environment(problem, opts, loaded, siblings, framework, dtypes, tier, secret)
    plan = Plan(problem=problem, loaded=loaded, shown=shown, options=opts, framework=framework, dtypes=dtypes,
                siblings=siblings, secret=secret, environment=env, tier=tier, wrap=wrap,
                cannot_run=cannot_run(loaded, framework, shown), started=started,
                deadline=started + opts.total_timeout)
    if plan.cannot_run is not None:
        return plan
    cases, known, key, donated = _plan_cases(problem, opts, framework, dtypes, secret)
    # what was graded, so two runs can be compared (a whole cached set's: remembered by a fork server)
    whole_cached = known is not None and not opts.only_cases and opts.replay is None
    env["cases_digest"] = cache.case_set_digest(key, cases) if whole_cached else cases_digest(cases)
    if opts.replay is not None or opts.only_cases:
        env["partial"] = True  # a few selected cases: reports show no grade
        env["dtypes"] = [d for d in dtypes if any(c.dtype == d for c in cases)]
    plan.cases, plan.expected, plan.cache_key = cases, References(problem, cases, known or donated,
                                                                   stored=known is not None), key
    if secret:
        plan.seeded = seed_dependent(problem, cases, dtypes)
    return plan


def seed_dependent(problem: Problem, cases: list[Case], dtypes: tuple[str, ...]) -> frozenset[str]:
    """The names of those of ``cases`` whose inputs the seed chooses: every generated case, and
    each fixed case whose inputs the seed changes (random values, an optional array or a scalar
    drawn: :func:`seed_independent`). A learner of a secret run is not shown their expected
    values (round four, class 2: one run's report was a table of answers that a helper file
    replayed)."""
    if not any(c.origin == "fixed" for c in cases):
        return frozenset(c.name for c in cases)
    independent = seed_independent(problem, dtypes)
    return frozenset(c.name for c in cases if c.origin != "fixed" or c.name not in independent)


#: the seeds whose fixed cases :func:`seed_independent` compares: a case drawn alike from all
#: of them is the same under every seed (a random one that came out alike by chance has at most
#: a few possible inputs: one random bit came out alike in all four with chance 1/8)
COMPARED_SEEDS = (1, 2, 3, 4)


def seed_independent(problem: Problem, dtypes: tuple[str, ...]) -> frozenset[str]:
    """The names of ``problem``'s fixed cases in ``dtypes`` whose inputs are the same under
    every seed (literal inputs, zeros, a constant fill): those drawn alike from each of
    :data:`COMPARED_SEEDS`, compared by dtype and value (NaN equal to NaN).

    Drawing the fixed cases again was 0.76 of a secret-seeded check's 2.7 CPU-s on tied_lm_head
    (its real-size tables, twice), in every such check: the answer depends only on the spec, the
    grader and the dtypes, so it is kept in the case cache's folder
    (:func:`grader.cache.load_seed_independent`) and, in a fork server, in memory."""
    key = cache.case_key(problem, 0, 0, dtypes)
    known = cache.load_seed_independent(key)
    if known is not None:
        return known
    draws = [{c.name: c for c in fixed_cases(problem, dtypes, seed)} for seed in COMPARED_SEEDS]

    def same(a: Case, b: Case | None) -> bool:
        return b is not None and a.inputs.keys() == b.inputs.keys() and all(
            a.inputs[k].dtype == b.inputs[k].dtype and np.array_equal(a.inputs[k], b.inputs[k], equal_nan=True)
            for k in a.inputs)

    first, *others = draws
    found = frozenset(name for name, case in first.items() if all(same(case, d.get(name)) for d in others))
    cache.store_seed_independent(key, found)
    return found


def _environment(problem: Problem, opts: CheckOptions, loaded: LoadedSubmission, siblings: Siblings,
                 framework: str, dtypes: tuple[str, ...], tier: str, secret: bool) -> dict[str, Any]:
    """The report's ``environment`` as known before the submission runs (docs/formats.md): seed
    (``"secret"`` for learners of a secret run), framework, dtypes, versions, sandbox tier, and
    where they apply the siblings taken, the notebook's cells, the secret's source and the
    function's (or syntax error's) line. The run adds ``cases_digest``, ``jax``/``torch`` and
    ``memory_limit``."""
    tree, syntax_error = loaded.tree, loaded.syntax_error
    env: dict[str, Any] = {
        "seed": opts.seed if not secret or opts.audience == "instructor" else "secret",
        "framework": framework, "dtypes": list(dtypes),
        "framework_note": problem.framework_notes.get(framework, ""),
        "python": platform.python_version(), "numpy": np.__version__, "jax": None,
        **({"torch": None} if framework == "torch" else {}),
        "grader": __version__, "sandbox": tier, "x64": framework == "jax" or None,
        "served": "pool" if memo.ENABLED else "cold",   # on only in grader serve's fork server
        "max_examples": opts.max_examples if opts.max_examples is not None else
        (problem.generated or {}).get("count", 0),
    }
    if opts.submission_named:   # learners' reports name its files by name (reports.view.learner_paths)
        env["named_by"] = "--shown"
    if siblings.files or siblings.skipped:
        env["siblings"] = siblings.report()
    env["submission_sha256"] = submission_digest(loaded, siblings)  # what was graded (grade --resume)
    if loaded.notebook is not None:  # what of the notebook ran, and what was left out
        env["notebook"] = {"code_cells": loaded.notebook.code_cells, "left_out": loaded.notebook.left_out}
        env["framework_note"] = " ".join(x for x in (env["framework_note"], loaded.notebook.note()) if x)
    if secret:  # where the seed came from, never the secret (nor, for learners, the seed)
        env["seed_source"] = "secret"
        env["seed_secret_from"] = opts.seed_secret_source or "CheckOptions.seed_secret"
    # where annotations and JUnit testcases point: a line of the file as it is on disk (for a
    # notebook, of its JSON text, not of the converted module; 1 where that is not known)
    in_file = (lambda n: loaded.notebook.file_line(n) or 1) if loaded.notebook is not None else (lambda n: n)
    if line := function_line(tree, problem.function):
        env["function_line"] = in_file(line)
        if note := parameters_note(tree, problem):
            env["parameters_note"] = note
    elif syntax_error is not None and syntax_error.lineno:
        env["syntax_error_line"] = in_file(syntax_error.lineno)
    return env


def parameters_note(tree: ast.Module | None, problem: Problem) -> str:
    """A note when the submission's ``def`` names its parameters otherwise than the statement
    (in order, as far as both go; ``*args``/``**kwargs`` take any name), else ``""``. A newcomer's
    renamed parameters passed in one problem and lost 3 points in another, only in the cases that
    pass ``eps`` by name: the report says it wherever the names differ, passing or not."""
    node = None
    for stmt in tree.body if tree is not None else []:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == problem.function:
            node = stmt   # the last one, as Python keeps it
    if node is None:
        return ""
    given = [a.arg for a in [*node.args.posonlyargs, *node.args.args]]
    want = [p.name for p in problem.parameters]
    if node.args.vararg is not None or node.args.kwarg is not None or given[:len(want)] == want[:len(given)]:
        return ""
    by_name = [p.name for p in problem.parameters if p.default is not NO_DEFAULT]
    why = (f", as the grader passes {' and '.join(by_name)} by name where a case gives {'them' if len(by_name) > 1 else 'it'}"
           if by_name else "")
    return (f"{problem.function} here takes ({', '.join(given)}); the statement names its parameters "
            f"({', '.join(want)}): a call that passes one by name fails{why}")


def seed_material(loaded: LoadedSubmission, siblings: Siblings) -> bytes:
    """The bytes a secret seed is derived from (:func:`grader.options.derive_seed`): the main
    file as the child imports it (``loaded.data``; a notebook's converted Python), a NUL (which
    no Python source contains), ``name``, NUL and the main file's name (the child sees it in
    ``__file__``: the same bytes under another name carried a table of one run's answers in
    that name, round four), then, when modules are taken along, ``siblings``, NUL and each
    one's name and SHA-256 in name order. Anything that differs gets unrelated cases."""
    name = os.path.basename(loaded.path).encode("utf-8", "surrogateescape")
    parts = [loaded.data, b"\0name\0", name]
    if siblings.files:
        parts.append(b"\0siblings\0")
        for sib, data in sorted(siblings.files):
            parts += [sib.encode("utf-8", "surrogateescape"), b"\0", hashlib.sha256(data).digest()]
    return b"".join(parts)


def cannot_run(loaded: LoadedSubmission, framework: str, shown: str) -> Failure | None:
    """Why the submission cannot be run at all, as its failure (a report, exit 1), or None: the
    framework is not installed here, the file cannot be graded (``loaded.fault``), or it does
    not parse."""
    from . import frameworks

    syntax_error = loaded.syntax_error
    if not frameworks.installed(framework):
        # the grading machine's fault, said as a report (exit 1), not exit 2, so that the
        # learner's row, CI log or Gradescope result says what to install (README, "Frameworks")
        return Failure(kind="import", message=frameworks.missing_message(framework),
                       hint="the grading machine lacks it, not the submission: whoever runs the "
                            f"grader installs it ({frameworks.get(framework).REQUIREMENT})")
    if loaded.fault is not None:
        return Failure(kind="import", message=loaded.fault, hint=fix_for(loaded.fault, None))
    if loaded.tree is not None and not loaded.tree.body:
        # nothing to import: said so, not "defines no function" after a child's start (a newcomer)
        what = "notebook has no code" if loaded.notebook is not None else "file holds no code"
        return Failure(kind="import", message=f"the submission is empty: the {what}",
                       hint="write the function the statement asks for in it (grader problems ID prints "
                            "the statement)")
    if syntax_error is not None:
        where = f"{shown}:{syntax_error.lineno}" if syntax_error.lineno else shown
        if loaded.notebook is not None and loaded.notebook.where(syntax_error.lineno):
            where = f"{shown}, {loaded.notebook.where(syntax_error.lineno)}"
        detail = (syntax_error.text or "").rstrip()
        return Failure(kind="import", message=f"SyntaxError: {syntax_error.msg} ({where})",
                       hint="fix the syntax error at the place named; Python reports one at a time, so check "
                            "again after fixing it",
                       details=[detail] if detail else [])
    return None


def generated_count(problem: Problem, opts: CheckOptions) -> int:
    """How many generated cases a check makes per dtype: ``--max-examples``, else the spec's count."""
    return opts.max_examples if opts.max_examples is not None else (problem.generated or {}).get("count", 0)


def case_set_key(problem: Problem, opts: CheckOptions, dtypes: tuple[str, ...]) -> str:
    """The case-cache key (:func:`grader.cache.case_key`) of a check of ``problem`` in ``dtypes``
    with ``opts`` (its seed and generated count)."""
    return cache.case_key(problem, opts.seed, generated_count(problem, opts), dtypes)


def _plan_cases(problem: Problem, opts: CheckOptions, framework: str, dtypes: tuple[str, ...],
                secret: bool) -> tuple[list[Case], dict[str, tuple[np.ndarray, np.ndarray | None]] | None, str,
                                       dict[str, tuple[np.ndarray, np.ndarray | None]]]:
    """The cases to run (a replay literal, else the fixed and generated cases from the case
    cache or made afresh, cut to ``--case`` names), the reference values the cache holds for
    the whole set (case name -> (exact output, scale); None on a miss, a replay or a secret
    seed), the case-cache key ("" for a replay), and on a miss the values other sets of the
    family hold for some of the cases (:func:`grader.cache.donated_values`; else empty).

    Raises:
        GraderError: a malformed replay, a replay dtype not graded, or an unknown ``--case`` name.
    """
    known = None
    key = ""
    donated: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}
    if opts.replay is not None:
        try:
            cases = [case_from_literal(problem, opts.replay)]
        except (ValueError, TypeError) as exc:
            raise GraderError(f"--replay: {exc}") from None
        if cases[0].dtype not in dtypes:
            raise GraderError(f"--replay: dtype {cases[0].dtype} is not graded for {framework} "
                              f"(graded: {', '.join(dtypes)})")
        # a replay of a published case (a report's replay command) has that case's values
        donated = cache.donated_values(cache.family_key(problem, 0 if secret else opts.seed, dtypes), cases,
                                       private_only=secret)
        return cases, known, key, donated
    count = generated_count(problem, opts)
    key = case_set_key(problem, opts, dtypes)
    # a secret seed's cases are never cached: the cache is readable by whoever runs the
    # grader, and they are the answers (docs/security.md, class 6)
    cached = None if secret else cache.load_cases(key)
    if cached is not None:
        cases = [c for c, _, _ in cached]
        known = {c.name: (ref, scale) for c, ref, scale in cached}
    else:
        cases = fixed_cases(problem, dtypes, opts.seed) + generated_cases(problem, dtypes, opts.seed, count)
        # what another count's set of the same seed computed for the same inputs (under a
        # secret: the published seed's, for the fixed cases the seed does not choose)
        family = cache.family_key(problem, 0 if secret else opts.seed, dtypes)
        donated = cache.donated_values(family, cases, key, private_only=secret)
    if opts.only_cases:
        cases = [c for c in cases if c.name in _wanted(opts.only_cases, cases, dtypes, secret, opts.seed, count)]
    return cases, known, key, donated


def _wanted(names: list[str], cases: list[Case], dtypes: tuple[str, ...], secret: bool, seed: int,
            count: int) -> set[str]:
    """The case names ``--case`` selects among ``cases``: a name as the report writes it
    (``batch[float16]``), or a bare name for that case in every graded dtype (``batch``).

    Raises:
        GraderError: a name no case has, said with the likeliest meant, or a dtype not graded
            (a newcomer's ``--case NAME`` without a dtype and ``[bfloat16]`` on a NumPy run were
            both told to mind --max-examples).
    """
    import difflib
    have = {c.name for c in cases}
    bare = {c.name.rsplit("[", 1)[0] for c in cases}
    wanted: set[str] = set()
    for name in names:
        if name in have:
            wanted.add(name)
            continue
        if name in bare:
            wanted |= {c.name for c in cases if c.name.rsplit("[", 1)[0] == name}
            continue
        stem, _, dtype = name.partition("[")
        dtype = dtype.rstrip("]")
        if stem in bare and dtype and dtype not in dtypes:
            raise GraderError(f"--case {name}: {dtype} is not graded for this submission (its dtypes: "
                              f"{', '.join(dtypes)}); give {stem} for every one of them")
        close = difflib.get_close_matches(stem, sorted(bare), n=3)
        generated = stem.startswith("gen") and stem[3:].isdigit()
        raise GraderError(f"--case: no case named {name}"
                          + (f" (with {'the secret seed' if secret else f'seed {seed}'} and {count} generated "
                             "cases: --max-examples must be the run's)" if generated else "")
                          + (f"; did you mean {' or '.join(close)}?" if close else
                             f"; the cases are named like {', '.join(sorted(bare)[:4])} (a dtype in brackets "
                             f"picks one: {sorted(bare)[0]}[{dtypes[0]}])"))
    return wanted
