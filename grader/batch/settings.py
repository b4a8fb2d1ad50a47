"""The output folder's ``settings.json``: the record of the settings that decide the grades
(:func:`grade_settings`: problem id, a SHA-256 of its spec and reference, grader version, seed
or whether seeds come from a secret (never the secret), max-examples, framework override,
timeouts, memory, sandbox, audience, siblings, shard I/N), written before the first check
(:func:`write_settings`).

``--resume`` into a folder whose record differs is refused (exit 2, one line naming what
differs, :func:`settings_diff`; nothing changed); ``--jobs``, ``-q``/``-v`` and ``--no-shrink``
are not in it. A folder written before the record (none there) is checked against what its
reports tell (problem, grader version, seed or secret use, max-examples), then given the
record. ``grader merge`` reads it (:func:`read_settings`) to know each folder's shard
(:func:`grader.batch.merge.check_merge`).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Iterable

from ..errors import GraderError
from .gradebook import Row, load_report, report_path


SETTINGS = "settings.json"
SETTINGS_FORMAT = 1
#: the settings of a run that decide its grades (:func:`grade_settings`), in the order a refusal
#: names them, each with the name it is given there
SETTING_NAMES = {
    "problem": "--problem", "spec": "the problem's (or assignment's) spec and reference (SHA-256)", "grader": "grader version",
    "seed": "--seed", "seed_secret": "seed secret used", "max_examples": "--max-examples",
    "framework": "--framework", "timeout": "--timeout", "total_timeout": "--total-timeout",
    "hard_timeout": "--hard-timeout", "memory_mb": "--memory-mb", "sandbox": "--sandbox",
    "audience": "--audience", "siblings": "siblings taken along (--no-siblings)", "shard": "--shard",
}


def grade_settings(args: argparse.Namespace, problem: Any, secret: bool, hard_timeout: float) -> dict[str, Any]:
    """The settings of a ``grade`` run that decide its grades (:data:`SETTING_NAMES`), as JSON values.

    ``seed`` is None when seeds come from a secret (``seed_secret`` true; the secret itself is
    never recorded, so a run with another secret is not told apart); ``max_examples`` is the
    number of generated cases (the spec's count when not given); ``shard`` is ``"I/N"`` or None.
    ``--jobs``, ``-q``/``-v``, ``--no-shrink`` and ``--problems-dir`` (the spec's digest stands
    for it) do not change a grade and are left out.
    """
    from ..version import __version__
    from ..spec import problem_digest
    if hasattr(problem, "parts"):  # an assignment: its file and every problem's spec and reference
        spec, count = problem.digest(), {p.problem.id: (p.problem.generated or {}).get("count", 0)
                                         for p in problem.parts}
    else:
        spec, count = problem_digest(problem), (problem.generated or {}).get("count", 0)
    return {
        "problem": problem.id, "spec": spec, "grader": __version__,
        "seed": None if secret else (args.seed or 0), "seed_secret": secret,
        "max_examples": args.max_examples if args.max_examples is not None else count,
        "framework": args.framework, "timeout": args.timeout, "total_timeout": args.total_timeout,
        "hard_timeout": hard_timeout, "memory_mb": args.memory_mb, "sandbox": args.sandbox,
        "audience": args.audience, "siblings": not getattr(args, "no_siblings", False),
        "shard": f"{args.shard[0]}/{args.shard[1]}" if args.shard else None,
    }


def read_settings(folder: Path) -> dict[str, Any] | None:
    """The settings recorded in ``folder`` (:data:`SETTINGS`), or None when it has no record.

    Raises:
        GraderError: the record cannot be read or is not one.
    """
    path = folder / SETTINGS
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        settings = data["settings"]
        if not isinstance(settings, dict):
            raise TypeError
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "not a settings record"
        raise GraderError(f"{str(path)!r} cannot be read ({why}); it records the settings of that folder's run: "
                          "restore it, or grade into another --out") from None
    return settings


def write_settings(folder: Path, settings: dict[str, Any], by: str = "grader grade") -> None:
    """Record ``settings`` in ``folder`` (:data:`SETTINGS`, atomically), written ``by`` a command.

    Raises:
        GraderError: it cannot be written.
    """
    from .._io import write_output
    record = {"format": SETTINGS_FORMAT, "written_by": by,
              "about": "the settings that decide this folder's grades; grade --resume and merge compare them",
              "settings": settings}
    write_output(json.dumps(record, indent=2) + "\n", str(folder / SETTINGS))


def _shown(key: str, value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, tuple):  # unknown (settings_of_reports)
        return str(value[0])
    if key == "spec":
        return str(value)[:12]
    from ..reports.common import printable
    return printable(f"{value:g}" if isinstance(value, float) else str(value), one_line=True)


def settings_diff(there: dict[str, Any], now: dict[str, Any], skip: Iterable[str] = (),
                  labels: tuple[str, str] = ("there", "now")) -> list[str]:
    """What differs between two settings records, as ``"--seed 0 there, 5 now"`` (``labels``);
    keys one of them lacks (written by another grader version, which differs itself) or in
    ``skip`` are not compared."""
    skipped = set(skip)
    return [f"{name} {_shown(key, there[key])} {labels[0]}, {_shown(key, now[key])} {labels[1]}"
            for key, name in SETTING_NAMES.items()
            if key not in skipped and key in there and key in now and there[key] != now[key]]


def settings_of_reports(out: Path, rows: list[Row], settings: dict[str, Any]) -> dict[str, Any]:
    """For a folder written before the record: its settings as far as its kept reports tell
    (problem, grader version, seed or secret use, max-examples), the rest taken from ``settings``
    (this run's). A setting the reports disagree on among themselves is marked unknown."""
    told: dict[str, Any] = {}

    def tell(key: str, value: Any) -> None:
        if told.setdefault(key, value) != value:
            told[key] = ("several values in its reports",)

    for row in rows:
        try:
            report = load_report(report_path(out, row.learner))
        except (OSError, ValueError, KeyError, TypeError):
            continue
        env = report.environment
        tell("problem", report.problem)
        if isinstance(env.get("grader"), str):
            tell("grader", env["grader"])
        if "framework" not in env:  # a placeholder (no case run): no seed nor count in it
            continue
        secret = env.get("seed_source") == "secret"
        tell("seed_secret", secret)
        if not secret and isinstance(env.get("seed"), int):
            tell("seed", env["seed"])
        if isinstance(env.get("max_examples"), int):
            tell("max_examples", env["max_examples"])
    return {**settings, **told}
