"""The instructor's class view: ``summary.html``, written by ``grader grade`` beside summary.md.

One self-contained HTML file (no external resource; a Content-Security-Policy that allows only
inline styles, ``data:`` images and the one table script by its SHA-256), made from the Jinja2
template ``templates/summary.html.j2`` with autoescaping (:mod:`grader.reports.templating`):

* the totals, and the learners whose score changed since the previous run in the same output
  folder, by how much and why (:mod:`grader.batch.history`);
* the class grid: one row per learner (the roster's learners with no submission too), one
  column per case group (per problem for an assignment), each cell coloured by the share of its
  cases passed, grey where none ran, and linking to that part of the learner's feedback page;
  then the reason (the main failure kind, the hint, how many cases were not run), the
  submission time and lateness against ``--deadline`` (:mod:`grader.batch.times`), the
  seconds and the JSON report. Sortable by any heading and filterable by text (``table.js``);
* the score histogram, the failure rate per case group, the commonest hints (one row per
  mistake, whatever numbers its sentence holds) with an example learner each, the submissions
  that could not be graded and the slowest; a link to ``similarity.html`` when it was written.

Each chart is a static matplotlib PNG (Agg backend) embedded as a ``data:`` URI, with a table of
the same numbers under it. The per-case chart is gone: for a class, its rows repeated their
group's rate (issue 37).

Learner ids, messages and hints are learner-controlled: the template escapes every value (after
:func:`grader.reports.common.printable`), and chart text is drawn with ``text.parse_math`` off,
so a ``$...$`` in a name is shown as typed, never as mathtext.

No matplotlib configuration is read but its built-in defaults: ``grader grade`` runs in a folder
that may hold learners' files, and matplotlib reads ``./matplotlibrc`` first of all (a learner's
``text.usetex: True`` made the batch exit 2 after grading everyone). matplotlib is imported
from an empty folder with ``MATPLOTLIBRC`` and ``MPLCONFIGDIR`` pointing at another, and the
charts are drawn under ``style.context("default")`` with what they need set on top
(:mod:`grader.isolation`).

matplotlib is the ``instructor`` extra (``pip install 'grader[instructor]'``); without it
:func:`render` raises ``ImportError`` and ``grader grade`` skips summary.html with a note.
"""
from __future__ import annotations

import base64
import io
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import common
from .classview_anchor import anchor
from .templating import script

if TYPE_CHECKING:  # pragma: no cover
    from grader.batch.gradebook import Row
    from grader.results import Report

MAX_HINTS = 10      # hints listed
SLOWEST = 10        # submissions in the slowest chart
DPI = 84            # with FIG_WIDTH inches: about 60em, the page's width, so a chart shows at 1:1
FIG_WIDTH = 11.5

#: sorts and filters the learner tables; the page's only script, allowed by its SHA-256 in the
#: Content-Security-Policy (no other script can run)
_SORT_SCRIPT, _SORT_SOURCE = script("table.js")
_SORT_HASH = _SORT_SOURCE.removeprefix("'sha256-").removesuffix("'")
_CSP = f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src {_SORT_SOURCE}"


@dataclass
class Cell:
    """One cell of the class grid: ``text`` (passed/total, or a problem's points), ``share`` of
    its cases passed (None: none ran), ``href`` into the learner's feedback page, ``title``."""

    text: str
    share: float | None
    href: str
    title: str
    value: float = 0.0


@dataclass
class LearnerLine:
    """One learner's row of the class grid (see the module's docstring)."""

    learner: str
    page: str
    report: str
    status: str
    score: float
    score_text: str
    cells: list[Cell]
    reason: str
    not_run: int
    submitted: str = ""
    source: str = ""
    late: str = ""
    late_seconds: float | None = None
    seconds: float = 0.0
    changed: str = ""


@dataclass
class Grid:
    """The class grid: its ``columns`` (group or problem names) and ``lines`` (one per learner)."""

    columns: list[str]
    kind: str
    lines: list[LearnerLine] = field(default_factory=list)


def _feedback(learner: str) -> str:
    from grader.batch.gradebook import FEEDBACK, feedback_html_name
    return FEEDBACK + "/" + feedback_html_name(learner)


def _json(learner: str, reports_dir: str) -> str:
    from grader.batch.gradebook import report_name
    return reports_dir + "/" + report_name(learner)


def _graded(rep: "Report") -> list[Any]:
    from .summary_md import part_not_graded
    return [c for c in rep.cases if not c.shrunk and not part_not_graded(c)]


def expected_cases(reports: dict[str, "Report"]) -> dict[str, int]:
    """Group -> the number of graded cases the class's fullest report ran in it: how many a
    learner whose check stopped early (a crash, a timeout, an import failure, an assignment's
    missing function) did not run. An assignment's part that could not be graded is no group."""
    out: dict[str, int] = {}
    for rep in reports.values():
        from .summary_md import part_not_graded
        counts = Counter(c.group for c in _graded(rep))
        stand_ins = {c.group for c in rep.cases if part_not_graded(c)}
        for g in rep.groups:
            if g.group not in stand_ins:
                out[g.group] = max(out.get(g.group, 0), counts.get(g.group, 0), g.total)
    return out


def _ran(rep: "Report") -> Counter:
    return Counter(c.group for c in _graded(rep) if c.status != "skipped")


def _passed(rep: "Report") -> Counter:
    return Counter(c.group for c in _graded(rep) if c.status == "passed")


def _reason(rep: "Report", not_run: int) -> tuple[str, str]:
    """A learner's status and reason: the whole submission's failure, or the commonest failure
    kind of their cases with its first hint; then how many cases were not run."""
    from grader.results import no_submission

    from .view import build
    if rep.failure is not None:
        f = rep.failure
        status = "no submission" if no_submission(rep) else "could not be graded"
        if status == "no submission":   # on the roster only: the two words; a folder without a file: why
            from grader.results import EMPTY_FOLDER
            text = f.message if (f.message or "").startswith(EMPTY_FOLDER) else "no submission"
        else:
            text = f"{f.kind}: {f.message}"
        if f.hint and status != "no submission":
            text += f"; hint: {f.hint}"
    elif rep.passed:
        status, text = "passed", ""
    else:
        from .summary_md import part_not_graded
        status = "failed"
        # an assignment's part that could not be graded is said as such, not as "1 case"
        parts = [f"{c.name} not graded ({c.failure.kind}: {c.failure.message})" for c in rep.cases
                 if part_not_graded(c) and c.failure is not None]
        kinds = Counter(c.failure.kind for c in _graded(rep) if c.failure is not None)
        kind, n = kinds.most_common(1)[0] if kinds else ("", 0)
        # the count takes in hidden cases, which the learner's gradebook message leaves out: say
        # how many (an instructor read "dtype in 21 cases" here and "dtype: 19 cases" there)
        hidden = sum(c.failure is not None and c.failure.kind == kind and c.visibility == "hidden" for c in _graded(rep))
        text = "; ".join(parts + ([f"{kind} in {n} case{'s' if n != 1 else ''}"
                                   + (f" ({hidden} hidden)" if hidden else "")] if n else []))
        try:
            hints = build(rep, common.INSTRUCTOR).hints
        except Exception:  # noqa: BLE001 - one odd report must not cost the class view
            hints = []
        if hints:
            text += f"; hint: {hints[0]}"
    if not_run and status != "no submission" and not (rep.failure is not None and rep.failure.kind in ("import", "missing")):
        # (a file that could not be imported ran nothing, plainly; a crash or a timeout is worth the count)
        text += ("; " if text else "") + f"{not_run} case{'s were' if not_run != 1 else ' was'} not run"
    text = common.printable(text, one_line=True)
    return status, (text if len(text) <= 300 else text[:297] + "...")


def grid(rows: list["Row"], reports: dict[str, "Report"], reports_dir: str = "reports",
         times: dict[str, Any] | None = None, changes: list[Any] | None = None) -> Grid:
    """The class grid of ``rows`` (see the module's docstring): learner x case group, or learner x
    problem for an assignment (its cells the problem's points, coloured by the share of the
    problem's cases passed)."""
    from grader.batch.gradebook import columns_of
    from .common import points
    from .summary_md import part_not_graded

    times = times or {}
    moved = {c.learner: c for c in changes or []}
    problems = columns_of(rows)
    expected = expected_cases(reports)
    if problems:
        columns, kind = problems, "problem"
    else:
        columns, kind = list(expected), "group"
    out = Grid(columns=columns, kind=kind)
    for r in rows:
        rep = reports.get(r.learner)
        page = _feedback(r.learner)
        ran, ok = (_ran(rep), _passed(rep)) if rep is not None else (Counter(), Counter())
        # the learner's own cases that did not run (after a timeout or repeated crashes), not the
        # class's largest case set: a NumPy submission has no bfloat16 cases to run (an instructor
        # read "19 cases were not run" on NumPy rows where every case ran)
        skipped = Counter(c.group for c in _graded(rep) if c.status == "skipped") if rep is not None else Counter()
        # and an assignment's part that could not be graded: the cases the class ran of it
        missing = [c.name for c in rep.cases if part_not_graded(c)] if rep is not None else []
        for g, n in expected.items():
            if any(g.startswith(part + "/") for part in missing):
                skipped[g] += n
        not_run = sum(skipped.values())
        cells = []
        for col in columns:
            groups = [g for g in expected if g.startswith(col + "/")] if kind == "problem" else [col]
            total, passed = sum(ran.get(g, 0) for g in groups), sum(ok.get(g, 0) for g in groups)
            share = passed / total if total else None
            has = [g.group for g in rep.groups if g.group in groups] if rep is not None else []
            href = f"{page}#{anchor(has[0])}" if has else page  # the group's row of their feedback page
            if kind == "problem":
                got = r.problems.get(col)
                text = points(got) if got is not None else ""
                value = got or 0.0
            else:
                text, value = (f"{passed}/{total}" if total else "not run"), (share if share is not None else -1)
            unrun = sum(skipped.get(g, 0) for g in groups)
            title = (f"{passed} of {total} cases passed" if total else "no case ran") + \
                (f"; {unrun} not run" if total and unrun else "")
            cells.append(Cell(text=text, share=share, href=href, title=title, value=value))
        status, reason = _reason(rep, not_run) if rep is not None else ("failed", "")
        when = times.get(r.learner)
        change = moved.get(r.learner)
        out.lines.append(LearnerLine(
            learner=r.learner, page=page, report=_json(r.learner, reports_dir), status=status, score=r.score,
            score_text=f"{points(r.score)} / {points(r.max_score)}", cells=cells, reason=reason, not_run=not_run,
            submitted=when.at[:16].replace("T", " ") + " UTC" if when else "",
            source=when.source if when else "", late=lateness(when.late_seconds) if when else "",
            late_seconds=when.late_seconds if when else None, seconds=r.seconds,
            changed=f"{change.delta:+g}" if change else ""))
    return out


def lateness(seconds: float | None) -> str:
    """``seconds`` after the deadline in words: ``on time``, ``2 h 5 min late``, ``3 d 4 h late``;
    empty without a deadline."""
    if seconds is None:
        return ""
    if seconds <= 0:
        return "on time"
    minutes = int(seconds // 60)
    days, hours, mins = minutes // 1440, minutes // 60 % 24, minutes % 60
    if days:
        return f"{days} d {hours} h late"
    return f"{hours} h {mins} min late" if hours else f"{max(mins, 1)} min late"


def cell_colour(share: float | None) -> str:
    """A grid cell's background: red (none passed) through yellow to green (all passed); grey
    where no case ran."""
    if share is None:
        return "#d0d7de"
    return f"hsl({round(120 * share)},65%,78%)"


def _png(fig: Any) -> str:
    """The figure as an ``<img>`` data URI (PNG)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _img(fig: Any, alt: str) -> dict[str, str]:
    """A chart for the template: its ``alt`` text and PNG data (base64)."""
    return {"alt": alt, "png": _png(fig)}


def _label(text: str, width: int = 60) -> str:
    """A chart label: printable on one line, at most ``width`` characters."""
    text = common.printable(text, one_line=True)
    return text if len(text) <= width else text[: width - 1] + "…"


def _barh(names: list[str], values: list[float], xlabel: str, title: str, colour: str,
          xmax: float | None = None, counts: bool = False) -> Any:
    """A horizontal bar chart, first name on top; ``counts``: whole-number ticks (learners)."""
    from matplotlib.figure import Figure
    fig = Figure(figsize=(FIG_WIDTH, 1.0 + 0.36 * max(len(names), 2)), layout="constrained")
    ax = fig.subplots()
    pos = list(range(len(names)))
    ax.barh(pos, values, color=colour)
    ax.set_yticks(pos, [_label(n) for n in names], fontsize=11)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel, fontsize=11)
    ax.tick_params(axis="x", labelsize=10)
    ax.set_title(title, fontsize=13)
    if xmax is not None:
        ax.set_xlim(0, xmax)
    if counts:
        from matplotlib.ticker import MaxNLocator
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    return fig


def _histogram(rows: list["Row"]) -> Any:
    """The score histogram: learners per tenth of the maximum score, full marks apart."""
    from matplotlib.figure import Figure
    bins = Counter()
    for r in rows:
        frac = r.score / r.max_score if r.max_score else 0.0
        bins[10 if frac >= 1 else min(9, int(frac * 10))] += 1
    labels = [f"{10 * b}-{10 * b + 10}%" for b in range(10)] + ["100%"]
    fig = Figure(figsize=(FIG_WIDTH, 3.6), layout="constrained")
    ax = fig.subplots()
    ax.bar(range(11), [bins[b] for b in range(11)], color=["#cf222e"] * 10 + ["#1a7f37"])
    ax.set_xticks(range(11), labels, fontsize=10)
    ax.set_ylabel("learners", fontsize=11)
    ax.set_title("Score distribution (share of the maximum score)", fontsize=13)
    from matplotlib.ticker import MaxNLocator
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    return fig


def common_hints(rows: list["Row"], reports: dict[str, "Report"]) -> list[tuple[str, list[str]]]:
    """The hints the most learners got: ``(hint text, learners in order)``, commonest first.

    A learner's hints are those of the instructor's view of their report
    (:func:`grader.reports.view.build`: the whole submission's, the shared ones, the failing
    cases'), each counted once per learner; a learner who submitted nothing has none."""
    from collections import Counter

    from .view import build
    who: dict[str, list[str]] = {}
    texts: dict[str, Counter] = {}
    for r in sorted(rows, key=lambda r: r.learner):
        rep = reports.get(r.learner)
        # nothing submitted is no mistake of code: the grid's "missing" says it, and "submit one
        # .py file" led a class's commonest hints above every real one (an instructor's trial)
        if rep is None or rep.passed or (rep.failure is not None and rep.failure.kind == "missing"):
            continue
        try:
            hints = build(rep, common.INSTRUCTOR).hints
        except Exception:  # noqa: BLE001 - one odd report must not cost the class view
            continue
        # one mistake is one row whatever numbers its sentence holds ("offset of 0.0098",
        # "offset of 0.009901"...): hints are grouped by the idea that found them (hint_id)
        idea = {c.failure.hint: c.failure.data.get("hint_id") for c in rep.cases
                if c.failure is not None and c.failure.hint and c.failure.data.get("hint_id")}
        # an uncredited case's note ("make the other cases right first") is a scoring rule, no
        # mistake: it led the class's commonest hints above every real one (an instructor's trial)
        rule = {c.failure.hint for c in rep.cases if c.failure is not None and c.failure.kind == "unearned"} - \
            {c.failure.hint for c in rep.cases if c.failure is not None and c.failure.kind != "unearned"}
        for h in dict.fromkeys(hints):
            if h in rule:
                continue
            # a hint without its idea's id: its numbers do not make another mistake ("offset of 1",
            # "offset of 0.999")
            key = f"id:{idea[h]}" if h in idea else re.sub(r"(?<![A-Za-z_\d.])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![A-Za-z_\d])", "#", h)
            if r.learner not in who.setdefault(key, []):
                who[key].append(r.learner)
            texts.setdefault(key, Counter())[h] += 1
    out = [(texts[k].most_common(1)[0][0], learners) for k, learners in who.items()]
    return sorted(out, key=lambda kv: (-len(kv[1]), kv[0]))


def render(rows: list["Row"], reports: dict[str, "Report"], *, reports_dir: str = "reports",
           times: dict[str, Any] | None = None, deadline: str | None = None,
           changes: list[Any] | None = None, previous: str | None = None,
           similarity: str | None = None, off_roster: list[str] | None = None) -> str:
    """summary.html of a graded class: ``rows`` (the gradebook) and their ``reports`` by learner;
    ``times`` (learner -> submission time) and the ``deadline`` they were measured against;
    ``changes`` since the ``previous`` run kept in the folder's history; ``similarity``: the
    file name of the similarity report to link to, when there is one; ``off_roster``: the
    learners graded who are not on the roster (marked in the grid and named at the top: the
    LMS exports leave them out).

    Raises:
        ImportError: matplotlib is not installed.
    """
    from grader.isolation import import_matplotlib, matplotlib_defaults
    matplotlib = import_matplotlib()  # reading no matplotlibrc of the working folder (a class folder)
    matplotlib.use("Agg", force=False)  # the Agg canvas only; pyplot is never imported
    with matplotlib_defaults(matplotlib):  # built-in defaults, mathtext and TeX off
        return _render(sorted(rows, key=lambda r: r.learner), reports, reports_dir, times or {}, deadline,
                       changes or [], previous, similarity, off_roster or [])


def _render(rows: list["Row"], reports: dict[str, "Report"], reports_dir: str, times: dict[str, Any],
            deadline: str | None, changes: list[Any], previous: str | None, similarity: str | None,
            off_roster: list[str]) -> str:
    from grader.batch.gradebook import could_not_be_graded
    from .common import points
    from .summary_md import RATE_NOTE, failure_rates
    from .templating import render as render_template

    problems = sorted({rep.problem for rep in reports.values()})
    title = "Class summary: " + (", ".join(problems) or "no submission")
    context: dict[str, Any] = {"title": title, "csp": _CSP, "script": _SORT_SCRIPT, "rows": rows,
                               "similarity": similarity, "deadline": deadline, "previous": previous,
                               "changes": changes, "rate_note": RATE_NOTE, "colour": cell_colour,
                               "feedback": _feedback, "points": points,
                               "off_roster": sorted(set(off_roster) & {r.learner for r in rows})}
    if not rows:
        return render_template("summary.html.j2", **context, empty=True)
    the_grid = grid(rows, reports, reports_dir, times, changes)
    statuses = Counter(line.status for line in the_grid.lines)
    crashed = [r for r in rows if r.learner in reports and could_not_be_graded(reports[r.learner])
               and statuses_of(the_grid, r.learner) != "no submission"]
    scores = [r.score for r in rows]
    context.update(
        # a learner who submitted nothing is counted apart, not among the failed (as summary.md)
        empty=False, grid=the_grid, passed=statuses["passed"],
        failed=len(rows) - statuses["passed"] - statuses["no submission"],
        ungraded=len(crashed), missing=[line.learner for line in the_grid.lines if line.status == "no submission"],
        late=[line for line in the_grid.lines if line.late_seconds is not None and line.late_seconds > 0],
        mean=statistics.fmean(scores), median=statistics.median(scores),
        max_score=points(max(r.max_score for r in rows)), histogram=_img(_histogram(rows), "score histogram"))

    groups, _ = failure_rates(rows, reports)
    context["groups"] = [{"name": g, "failing": w, "ran": n} for g, w, n in groups]
    context["group_chart"] = _img(_barh([g for g, _, _ in groups], [100 * len(w) / n for _, w, n in groups],
                                        "% of the learners who ran it failing", "Failure rate per case group",
                                        "#cf222e", 100), "failure rate per case group") if groups else None
    hints = common_hints(rows, reports)[:MAX_HINTS]
    context["hints"] = hints
    context["hint_chart"] = _img(_barh([f"{i}. {h}" for i, (h, _) in enumerate(hints, 1)], [len(w) for _, w in hints],
                                       "learners", "Learners given each hint", "#0969da", counts=True),
                                 "learners per hint") if hints else None
    context["crashed"] = [(r.learner, reports[r.learner].failure.message if reports[r.learner].failure else "")
                          for r in crashed]
    graded = [r for r in rows if statuses_of(the_grid, r.learner) != "no submission"]
    slow = sorted(graded, key=lambda r: -r.seconds)[:SLOWEST]
    context["slow"] = [(r.learner, r.seconds, "passed" if r.passed else "failed: " + ", ".join(r.kinds)) for r in slow]
    context["slow_chart"] = _img(_barh([r.learner for r in slow], [r.seconds for r in slow], "seconds (whole check)",
                                       "Slowest submissions", "#8250df"), "slowest submissions") if slow else None
    return render_template("summary.html.j2", **context)


def statuses_of(the_grid: Grid, learner: str) -> str:
    """The status of ``learner``'s line in ``the_grid`` (``passed``, ``failed``, ``could not be
    graded``, ``no submission``)."""
    return next((line.status for line in the_grid.lines if line.learner == learner), "")
