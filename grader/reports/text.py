"""The text report for a person at a terminal (the default of ``grader check``).

Layout: a verdict line; what ran (framework, dtypes, seed, sandbox); the failure pattern by
kind, dtype and rank (``grader.summary.summarise``), each with the hints its failing cases share
and how many share them; the failing cases, smallest first (shrunk ones lead), each with shapes,
the mismatch, the hint, small values and a replay command; the points per group; the head of
the submission's own output. Hidden cases appear as counts only unless the audience is the
instructor.
"""
from __future__ import annotations

import json
import re

from ..results import CaseResult, Report
from . import view
from .common import printable

MAX_CASES = 5
MAX_DETAIL_LINES = 12


def _shapes(case: CaseResult) -> str:
    return ", ".join(f"{name} {tuple(info.shape)} {info.dtype}" for name, info in case.inputs.items())


def _compact(value: object, limit: int = 200) -> str:
    text = json.dumps(value, separators=(", ", ": "))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _degenerate(case: CaseResult) -> bool:
    """A case that says little as a first example: an input with an axis of size 0 or 1, or inputs
    that are all zeros (a 1x1 zero case explains less than the worked example)."""
    if any(_size(i.shape) <= 1 or 0 in i.shape or 1 in i.shape for i in case.inputs.values()):
        return True
    values = case.values or {}
    arrays = [values.get(name) for name in case.inputs]
    return all(a is not None for a in arrays) and all(not any(_flat(a)) for a in arrays)


def _flat(value: object) -> list[float]:
    if isinstance(value, list):
        return [x for v in value for x in _flat(v)]
    return [float(value)]  # type: ignore[arg-type]


def _case_lines(case: CaseResult, seen: dict[str, str] | None = None) -> list[str]:
    """The lines of one failing case; a traceback already shown (in ``seen``) is referred to, not repeated."""
    f = case.failure
    lines = [f"x {case.name}  ({case.group})", f"    inputs: {_shapes(case)}"]
    if f is None:
        lines.append(f"    {case.status}")
        return lines
    lines.append(f"    {f.kind}: {f.message}")
    budget = MAX_DETAIL_LINES
    for detail in f.details:
        if seen is not None and "Traceback" in detail:
            key = re.sub(r"\d+", "N", detail.strip())  # the same error with other sizes is the same traceback
            if key in seen:
                lines.append(f"    (the same traceback as {seen[key]} above)")
                continue
            seen[key] = case.name
        for line in detail.rstrip().splitlines():
            if budget <= 0:
                break
            lines.append(f"    {line}")
            budget -= 1
    if f.hint:
        lines.append(f"    hint: {f.hint}")
    if case.values:
        for key, value in case.values.items():
            lines.append(f"    {key} = {_compact(value)}")
    if case.replay:
        lines.append(f"    replay: {case.replay}")
    elif case.replay_note:
        lines.append(f"    replay: none ({case.replay_note})")
    return lines


def render(report: Report, *, audience: str = "learner") -> str:
    """The report as plain text lines (ends with a newline).

    Every line is passed through :func:`grader.reports.common.printable`: escape sequences,
    controls, bidi characters and line breaks from the submission's output, messages or file
    name appear as visible escapes (``\\x1b``, ``\\n``), never raw on the terminal.
    """
    v = view.build(report, audience)  # a learner never sees a secret seed nor a hidden case
    report, env = v.report, v.environment
    verdict = "PASS" if report.passed else "FAIL"
    counted = v.counts_text
    if env.get("unrun_groups"):  # e.g. --max-examples 0: a group with points ran no case
        lines = [f"INCOMPLETE {report.problem}: {counted}, but group"
                 f"{'s' if len(env['unrun_groups']) != 1 else ''} {', '.join(env['unrun_groups'])} ran no case "
                 f"(--max-examples 0?): no score  {report.submission}"]
    elif env.get("partial"):  # --case / --replay: a few cases, no grade
        lines = [f"{verdict} {report.problem}: {v.passed} of {v.total} selected case"
                 f"{'s' if v.total != 1 else ''} passed (a partial run: no score)  {report.submission}"]
    else:
        lines = [f"{verdict} {report.problem}: score {report.score:g} / {report.max_score:g}"
                 + (f" ({counted})" if v.total else "")
                 + f"  {report.submission}"]
    dtypes = ", ".join(env.get("dtypes", []))
    if env.get("seed") == "secret":
        seed = "seed: secret (set by your instructor)"
    else:
        seed = f"seed {env.get('seed')}" + (" (from the instructor's secret)" if env.get("seed_source") == "secret" else "")
    ran = f"{env.get('framework')} submission, graded in {dtypes}; {seed}; sandbox {env.get('sandbox')}"
    if env.get("framework") == "jax":
        ran += "; jax_enable_x64 on"
    lines.append(ran)
    if env.get("framework_note"):
        lines.append(f"note: {env['framework_note']}")

    if report.failure is not None:
        f = report.failure
        lines += ["", f"{f.kind}: {f.message}"]
        for detail in f.details:
            lines += [f"    {line}" for line in detail.rstrip().splitlines()[-MAX_DETAIL_LINES:]]
        if f.hint:
            lines.append(f"hint: {f.hint}")
    summary = v.summary  # learners: the pattern of the cases they may see, only
    if summary:
        lines += ["", "What failed (by kind, dtype and rank):"]
        for entry in summary:
            lines.append(f"  {entry['text']}")
            for hint in entry.get("hints") or ([entry["hint"]] if entry.get("hint") else []):
                lines.append(f"    hint ({hint['count']} of {hint['of']} cases): {hint['text']}")

    failing = v.failing + v.shrunk  # a shrunk case (extra feedback) leads its kind when smallest
    failing.sort(key=lambda c: (_degenerate(c), sum(_size(i.shape) for i in c.inputs.values()), not c.shrunk, c.name))
    # one entry per case and failure kind: the same case failing in several dtypes is listed once
    distinct: dict[tuple[str, str], list[CaseResult]] = {}
    for c in failing:
        key = (c.name.split("[")[0], c.failure.kind if c.failure else c.status)
        distinct.setdefault(key, []).append(c)
    if distinct:
        lines += ["", f"Failing cases (smallest first; {min(len(distinct), MAX_CASES)} of {len(distinct)} shown;"
                      f" all {len(failing)} failing case runs in --format json):"]
        seen: dict[str, str] = {}  # traceback text -> the case that showed it
        for same in list(distinct.values())[:MAX_CASES]:
            lines += _case_lines(same[0], seen)
            others = [c.dtype for c in same[1:]]
            if others:
                lines.append(f"    (the same case fails the same way in {', '.join(others)})")
    if v.skipped:
        lines.append(f"{v.skipped} cases were not run (after a timeout or repeated crashes)")
    for tally in v.tallies:
        lines.append(f"{tally.group}: {tally.text}")
    if report.groups and not env.get("partial"):
        lines += ["", "Points: " + ", ".join(f"{g.group} {g.earned:g}/{g.points:g}" for g in report.groups)]
    out = (report.output or {}) if v.show_output else {}
    for stream in ("stdout", "stderr"):
        text = (out.get(stream) or "").rstrip()
        if text:
            head = text.splitlines()[:5]
            total = out.get(f"{stream}_bytes") or len(text)
            more = f" (first lines of {total:,} bytes)" if out.get("truncated") or len(text.splitlines()) > 5 else ""
            lines += ["", f"The submission's {stream}{more}:"] + [f"  | {line[:200]}" for line in head]
    # one line per entry: a newline in a file name or message cannot start a line of its own
    return "\n".join(printable(line, one_line=True) for line in lines) + "\n"


def _size(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n
