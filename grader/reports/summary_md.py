"""``summary.md`` of a graded class (:func:`summary_markdown`): totals, score distribution,
commonest failure kinds with an example learner each, failure rates per case group and per
case (:func:`failure_rates`, which summary.html draws too), submissions that could not be
graded, and the slowest submissions; and the run's last line (:func:`tally`).

It renders a class from its gradebook rows and reports; ``grader grade`` and ``grader merge``
write it (:func:`grader.batch.outputs.write_outputs`). Learner links point into the output
folder's ``reports/`` (:func:`grader.batch.gradebook.report_name`).
"""
from __future__ import annotations

import statistics
from collections import Counter
from typing import TYPE_CHECKING, Any

from ..batch.gradebook import REPORTS, could_not_be_graded, report_name
from ..results import no_submission
from ..results import Report

if TYPE_CHECKING:  # pragma: no cover
    from ..batch.gradebook import Row


SLOWEST = 10                # rows in summary.md's "slowest submissions"


def _link(learner: str) -> str:
    """A Markdown link to the learner's report, relative to the output folder."""
    from .github import md
    return f"[{md(learner)}]({REPORTS}/{report_name(learner)})"


def _counted(missing: int) -> str:
    """Who the score statistics count as 0 besides the submissions."""
    return "the learner who submitted nothing counted" if missing == 1 else f"the {missing} who submitted nothing counted"


def summary_markdown(rows: list[Row], reports: dict[str, Report]) -> str:
    """``summary.md``: totals, score distribution, commonest failure kinds (with an example
    learner each), failure rates per case group and per case, submissions that could not be
    graded, and the slowest submissions.

    Passed whole through :func:`grader.reports.common.printable`: no raw control, escape or
    bidi character from learner ids or messages.
    """
    from .common import printable
    return printable(_summary_markdown(rows, reports))


def _summary_markdown(rows: list[Row], reports: dict[str, Report]) -> str:
    from .common import points
    from .github import md

    rows = sorted(rows, key=lambda r: r.learner)
    problems = sorted({rep.problem for rep in reports.values()})
    title = ", ".join(problems) or "no submission"
    out = [f"# Gradebook summary: {md(title)}", ""]
    if not rows:
        return "\n".join(out + ["No submission was graded.", ""])
    passed = sum(r.passed for r in rows)
    crashed = [r for r in rows if r.learner in reports and could_not_be_graded(reports[r.learner])
               and not no_submission(reports[r.learner])]
    missing = [r for r in rows if r.learner in reports and no_submission(reports[r.learner])]
    scores = [r.score for r in rows]
    top = max(r.max_score for r in rows)
    n = len(rows) - len(missing)   # a learner who submitted nothing is no submission that failed
    # the same words as summary.html's (a helper read "3 submissions ... 1 learner submitted
    # nothing" here and "4 learners: 1 passed, 3 failed (1 with no submission)" there)
    out += [f"{len(rows)} learner{'s' if len(rows) != 1 else ''}: **{passed} passed**, {n - passed} failed"
            + (f" ({len(crashed)} could not be graded)" if crashed else "")
            + (f", {len(missing)} submitted nothing" if missing else "") + ".",
            # over every learner, as summary.html and the distribution below: say so when that is
            # more than the submissions (a trial read the mean as the submissions' own)
            (f"Score of all {len(rows)} learners ({_counted(len(missing))} as 0): " if missing else "Score: ")
            + f"mean {points(statistics.fmean(scores))}, median {points(statistics.median(scores))} "
            f"of {points(top)} points.", ""]

    out += ["## Score distribution", "", "| Score | Learners | |", "| --- | ---: | --- |"]
    same_max = len({r.max_score for r in rows}) == 1
    width = top / 10 if top > 0 else 1.0
    bins = Counter()
    for r in rows:
        frac = r.score / r.max_score if r.max_score else 0.0
        bins[10 if frac >= 1 else min(9, int(frac * 10))] += 1
    for b in range(10, -1, -1):
        if b == 10:
            label = f"{points(top)} (full marks)" if same_max else "100%"
        elif same_max:
            label = f"{points(b * width)} to under {points((b + 1) * width)}"
        else:
            label = f"{b * 10}% to under {(b + 1) * 10}%"
        out.append(f"| {label} | {bins[b]} | {'█' * bins[b]} |")
    out.append("")

    kinds: dict[str, list[str]] = {}
    for r in rows:
        if r.learner in reports and no_submission(reports[r.learner]):
            continue   # nothing submitted is no failure of code (a newcomer read it as kind "import")
        for k in r.kinds:
            kinds.setdefault(k, []).append(r.learner)
    out += ["## Most common failure kinds", ""]
    if kinds:
        out += ["| Kind | Learners | Example |", "| --- | ---: | --- |"]
        for k, who in sorted(kinds.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            out.append(f"| {md(k)} | {len(who)} | {_link(who[0])} |")
    else:
        out.append("None: every submission passed.")
    out.append("")

    out += _failure_rates(rows, reports)

    if crashed:
        out += ["## Could not be graded", "", "| Learner | Why |", "| --- | --- |"]
        for r in crashed:
            f = reports[r.learner].failure
            out.append(f"| {_link(r.learner)} | {md(f.message if f else '')} |")
        out.append("")

    out += ["## Slowest submissions", "", "| Learner | Seconds | Verdict |", "| --- | ---: | --- |"]
    graded = [r for r in rows if not (r.learner in reports and no_submission(reports[r.learner]))]
    for r in sorted(graded, key=lambda r: -r.seconds)[:SLOWEST]:   # nothing submitted ran nothing
        verdict = "passed" if r.passed else "failed: " + ", ".join(r.kinds)
        out.append(f"| {md(r.learner)} | {r.seconds:.1f} | {md(verdict)} |")
    return "\n".join(out) + "\n"


MAX_RATE_ROWS = 20  # cases listed in summary.md's failure rates per case


def part_not_graded(case: Any) -> bool:
    """Whether ``case`` stands for a whole part of an assignment that could not be graded (its
    function missing, its check failed: ``grader.assignment._part_report`` makes it one failed
    case, group and name the problem id, no inputs). It is no graded case: the class view and the
    failure rates leave it out (issue 37: a missing function read as a group "100% failing")."""
    return not case.inputs and not case.dtype and case.name == case.group and "/" not in case.name


def failure_rates(rows: list[Row], reports: dict[str, Report]) -> tuple[list[tuple[str, list[str], int]],
                                                                       list[tuple[str, list[str], int]]]:
    """The failure rates of summary.md and summary.html: ``(groups, cases)``, each a list of
    ``(name, failing learners, learners who ran it)``, the failing learners by score, highest
    first (then by name): the first is the row's example.

    Per case group, the learners with a failing case in it of those who ran it, highest rate
    first, then most failing (sorted by count, 1 of 3 (33%) stood between rows of 40%); per case
    (its name without the dtype), the learners failing it in some dtype of those who ran it,
    the failing cases only, highest rate first. Shrunk cases are no graded cases and
    are left out; learners whose run graded no case too; a case a secret seed chose
    (``CaseResult.seeded``) counts in its group only (each learner had other inputs)."""
    ran: dict[str, dict[str, set[str]]] = {"group": {}, "case": {}}
    failed: dict[str, dict[str, list[str]]] = {"group": {}, "case": {}}
    for row in sorted(rows, key=lambda r: r.learner):
        rep = reports.get(row.learner)
        if rep is None:
            continue
        for c in rep.cases:
            if c.shrunk or c.status == "skipped" or part_not_graded(c):
                continue
            # a case whose inputs a secret seed chose has each learner's own inputs: its name is
            # no one case to rate across the class (an instructor saw gen001 added up), its group is
            levels = (("group", c.group),) if c.seeded else (("group", c.group), ("case", c.name.split("[", 1)[0]))
            for level, key in levels:
                ran[level].setdefault(key, set()).add(row.learner)
                if c.status != "passed" and row.learner not in failed[level].setdefault(key, []):
                    failed[level][key].append(row.learner)
    # the first learner of each list is its example: the one who fails it with the most points
    # elsewhere, whose report shows this failure rather than everything failing (an instructor's
    # trial: the same learner, failing every case with a shape error, was every row's example)
    score = {row.learner: row.score for row in rows}
    for level in failed.values():
        for who in level.values():
            who.sort(key=lambda name: (-score.get(name, 0.0), name))
    groups = [(g, failed["group"].get(g, []), len(ran["group"][g]))
              for g in sorted(ran["group"], key=lambda g: (-len(failed["group"].get(g, [])) / len(ran["group"][g]),
                                                           -len(failed["group"].get(g, [])), g))]
    cases = [(c, failed["case"][c], len(ran["case"][c]))
             for c in sorted((c for c in ran["case"] if failed["case"].get(c)),
                             key=lambda c: (-len(failed["case"][c]) / len(ran["case"][c]), c))]
    return groups, cases


#: under summary.md's failure-rate tables: why the learner counts differ from row to row
RATE_NOTE = ("Counted of the learners whose run reached the group or case: a learner whose cases there "
             "were skipped (after a crash) or who could not be graded is left out. Under a secret seed a case "
             "whose inputs the seed chose differs from learner to learner: it counts in its group only.")


def _failure_rates(rows: list[Row], reports: dict[str, Report]) -> list[str]:
    """summary.md's failure rates (:func:`failure_rates`) as Markdown tables with an example learner."""
    from .github import md
    groups, cases = failure_rates(rows, reports)
    if not groups:
        return []
    out = ["## Failure rates per case group", "", "| Group | Learners failing | Rate | Example |",
           "| --- | ---: | ---: | --- |"]
    for group, who, n in groups:
        out.append(f"| {md(group)} | {len(who)} of {n} | {100 * len(who) / n:.0f}% | "
                   f"{_link(who[0]) if who else ''} |")
    out += ["", RATE_NOTE]
    out += ["", "## Failure rates per case", ""]
    if not cases:
        return out + ["No case failed.", ""]
    out += ["| Case | Learners failing | Rate | Example |", "| --- | ---: | ---: | --- |"]
    merged = merge_alike(cases)
    for names, who, n in merged[:MAX_RATE_ROWS]:
        out.append(f"| {md(case_names(names))} | {len(who)} of {n} | {100 * len(who) / n:.0f}% | {_link(who[0])} |")
    if len(merged) > MAX_RATE_ROWS:
        rest = sum(len(names) for names, _, _ in merged[MAX_RATE_ROWS:])
        out.append(f"\n... and {rest} more failing cases (see the reports)")
    return out + ["", RATE_NOTE, ""]


def merge_alike(cases: list[tuple[str, list[str], int]]) -> list[tuple[list[str], list[str], int]]:
    """:func:`failure_rates`'s cases with the rows that the same learners fail (of the same
    count) made one, in the order of each one's first row: an instructor read twelve rows
    ``gen000`` ... ``gen011`` of one learner each, the same learner (a helper's trial)."""
    rows: dict[tuple[tuple[str, ...], int], tuple[list[str], list[str], int]] = {}
    for name, who, n in cases:
        rows.setdefault((tuple(sorted(who)), n), ([], who, n))[0].append(name)
    return list(rows.values())


def case_names(names: list[str], shown: int = 3) -> str:
    """One row's case names: all of up to ``shown`` + 1, else the first ``shown`` and how many more."""
    if len(names) <= shown + 1:
        return ", ".join(names)
    return f"{', '.join(names[:shown])} and {len(names) - shown} more ({len(names)} cases)"


def tally(rows: list[Row], reports: dict[str, Report]) -> str:
    """The run's last line: submissions, passed, failed and (:func:`could_not_be_graded`) not
    graded; then the learners who submitted nothing (a roster's, an empty folder), counted apart:
    an instructor read "4 could not be graded" where one file could not and three learners
    submitted nothing, and "9 submissions: 3 passed, 6 failed" where one learner sent none."""
    passed = sum(r.passed for r in rows)
    missing = sum(r.learner in reports and no_submission(reports[r.learner]) for r in rows)
    crashed = sum(r.learner in reports and could_not_be_graded(reports[r.learner]) for r in rows) - missing
    n = len(rows) - missing
    return (f"{n} submission{'s' if n != 1 else ''}: {passed} passed, {n - passed} failed ({crashed} could not be graded)"
            + (f"; {_nothing(missing)}" if missing else ""))


def _nothing(missing: int) -> str:
    """How many learners submitted nothing, in words."""
    return f"{missing} learner{'s' if missing != 1 else ''} submitted nothing"

