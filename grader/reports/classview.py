"""The instructor's class view: ``summary.html``, written by ``grader grade`` beside summary.md.

One self-contained HTML file (no external resource; a Content-Security-Policy that allows only
inline styles, ``data:`` images and the one sorting script by its SHA-256): the totals, a
sortable table of every learner (score, each problem's points for an assignment, verdict,
seconds, links to their feedback page and JSON report), the score histogram, the
failure rates per case group and per case, the commonest hints with an example learner each,
the submissions that could not be graded and the slowest submissions. Each chart is a static
matplotlib PNG (Agg backend) embedded as a ``data:`` URI, with a table of the same numbers
under it (readable without the picture, and where the learner links are).

Learner ids, messages and hints are learner-controlled: every one is HTML-escaped
(``html.escape``) after :func:`grader.reports.common.printable`, and chart text is drawn with
``text.parse_math`` off, so a ``$...$`` in a name is shown as typed, never as mathtext.

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
import hashlib
import html
import io
import statistics
from collections import Counter
from typing import TYPE_CHECKING, Any, Iterable

from . import common

if TYPE_CHECKING:  # pragma: no cover
    from grader.batch.gradebook import Row
    from grader.results import Report

MAX_BARS = 20       # bars in the per-case failure-rate chart and rows in its table
MAX_HINTS = 10      # hints listed
SLOWEST = 10        # submissions in the slowest chart
DPI = 84            # with FIG_WIDTH inches: about 60em, the page's width, so a chart shows at 1:1
FIG_WIDTH = 11.5

#: sorts the per-learner table when a heading is clicked (numbers as numbers); the page's only
#: script, allowed by its SHA-256 in the Content-Security-Policy (no other script can run)
_SORT_SCRIPT = ("document.querySelectorAll('table.sortable th').forEach(function(th,i){"
                "th.style.cursor='pointer';th.title='sort';th.addEventListener('click',function(){"
                "var t=th.closest('table'),rows=Array.from(t.querySelectorAll('tr')).slice(1),"
                "up=th.dataset.dir!=='up';th.dataset.dir=up?'up':'down';"
                "rows.sort(function(a,b){var x=a.children[i].dataset.v||a.children[i].textContent,"
                "y=b.children[i].dataset.v||b.children[i].textContent,p=parseFloat(x),q=parseFloat(y),"
                "c=(isNaN(p)||isNaN(q))?x.localeCompare(y):p-q;return up?c:-c;});"
                "rows.forEach(function(r){t.appendChild(r);});});});")
_SORT_HASH = base64.b64encode(hashlib.sha256(_SORT_SCRIPT.encode()).digest()).decode()
_CSP = f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'sha256-{_SORT_HASH}'"
_STYLE = """body{font-family:sans-serif;margin:2em;max-width:60em;color:#1f2328}
table{border-collapse:collapse;margin:0.5em 0 1.5em}td,th{border:1px solid #d0d7de;padding:2px 8px;text-align:left}
td.n{text-align:right}img{width:100%;height:auto;display:block;margin:0.5em 0}.muted{color:#57606a}"""


def _e(text: Any) -> str:
    """``text`` safe in HTML text and attribute values: printable, then escaped (quotes too)."""
    return html.escape(common.printable(text), quote=True)


def _link(learner: str, reports_dir: str) -> str:
    """A link to the learner's HTML feedback (``feedback/<name>.html``, beside ``reports_dir``'s
    JSON report), named by the learner id."""
    from grader.batch.gradebook import FEEDBACK, feedback_html_name
    return f'<a href="{_e(FEEDBACK + "/" + feedback_html_name(learner))}">{_e(learner)}</a>'


def _json_link(learner: str, reports_dir: str) -> str:
    from grader.batch.gradebook import report_name
    return f'<a href="{_e(reports_dir + "/" + report_name(learner))}">json</a>'


def learner_table(rows: list["Row"], reports_dir: str) -> str:
    """The per-learner table of summary.html: learner (linked to their HTML feedback), score,
    the points of each problem of an assignment (the gradebook's per-problem columns), verdict
    and failure kinds, seconds, and the JSON report; sortable by any column."""
    from grader.batch.gradebook import columns_of
    from .common import points

    problems = columns_of(rows)
    head = ["Learner", "Score", *[_e(p) for p in problems], "Verdict", "Seconds", "Report"]
    out = ['<table class="sortable" id="learners"><tr>' + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    for r in rows:
        cells = [f"<td>{_link(r.learner, reports_dir)}</td>",
                 f'<td class="n" data-v="{r.score:.6g}">{points(r.score)} / {points(r.max_score)}</td>']
        cells += [f'<td class="n" data-v="{r.problems.get(p, 0):.6g}">{points(r.problems[p])}</td>'
                  if p in r.problems else '<td class="n" data-v="0"></td>' for p in problems]
        cells += [f"<td>{_e('passed' if r.passed else 'failed: ' + ', '.join(r.kinds))}</td>",
                  f'<td class="n">{r.seconds:.1f}</td>', f"<td>{_json_link(r.learner, reports_dir)}</td>"]
        out.append("<tr>" + "".join(cells) + "</tr>")
    return "\n".join(out + ["</table>"])


def _png(fig: Any) -> str:
    """The figure as an ``<img>`` data URI (PNG)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _img(fig: Any, alt: str) -> str:
    return f'<img alt="{_e(alt)}" src="data:image/png;base64,{_png(fig)}">'


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
    cases'), each counted once per learner."""
    from collections import Counter

    from .view import build
    who: dict[str, list[str]] = {}
    texts: dict[str, Counter] = {}
    for r in sorted(rows, key=lambda r: r.learner):
        rep = reports.get(r.learner)
        if rep is None or rep.passed:
            continue
        try:
            hints = build(rep, common.INSTRUCTOR).hints
        except Exception:  # noqa: BLE001 - one odd report must not cost the class view
            continue
        # one mistake is one row whatever numbers its sentence holds ("offset of 0.0098",
        # "offset of 0.009901"...): hints are grouped by the idea that found them (hint_id)
        idea = {c.failure.hint: c.failure.data.get("hint_id") for c in rep.cases
                if c.failure is not None and c.failure.hint and c.failure.data.get("hint_id")}
        for h in dict.fromkeys(hints):
            key = f"id:{idea[h]}" if h in idea else h
            if r.learner not in who.setdefault(key, []):
                who[key].append(r.learner)
            texts.setdefault(key, Counter())[h] += 1
    out = [(texts[k].most_common(1)[0][0], learners) for k, learners in who.items()]
    return sorted(out, key=lambda kv: (-len(kv[1]), kv[0]))


def _table(head: Iterable[str], body: list[list[str]], numeric: Iterable[int] = ()) -> str:
    nums = set(numeric)
    out = ["<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    for cells in body:
        out.append("<tr>" + "".join(f'<td class="n">{c}</td>' if i in nums else f"<td>{c}</td>"
                                    for i, c in enumerate(cells)) + "</tr>")
    return "\n".join(out + ["</table>"])


def render(rows: list["Row"], reports: dict[str, "Report"], *, reports_dir: str = "reports") -> str:
    """summary.html of a graded class: ``rows`` (the gradebook) and their ``reports`` by learner.

    Raises:
        ImportError: matplotlib is not installed.
    """
    from grader.isolation import import_matplotlib, matplotlib_defaults
    matplotlib = import_matplotlib()  # reading no matplotlibrc of the working folder (a class folder)
    matplotlib.use("Agg", force=False)  # the Agg canvas only; pyplot is never imported
    with matplotlib_defaults(matplotlib):  # built-in defaults, mathtext and TeX off
        return _render(sorted(rows, key=lambda r: r.learner), reports, reports_dir)


def _render(rows: list["Row"], reports: dict[str, "Report"], reports_dir: str) -> str:
    from grader.batch.gradebook import could_not_be_graded
    from .summary_md import RATE_NOTE, failure_rates
    from .common import points

    problems = sorted({rep.problem for rep in reports.values()})
    title = "Class summary: " + (", ".join(problems) or "no submission")
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
           f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>", f"<h1>{_e(title)}</h1>"]
    if not rows:
        return "\n".join(out + ["<p>No submission was graded.</p></body></html>", ""])
    passed = sum(r.passed for r in rows)
    crashed = [r for r in rows if r.learner in reports and could_not_be_graded(reports[r.learner])]
    scores = [r.score for r in rows]
    out.append(f"<p>{len(rows)} submissions: <b>{passed} passed</b>, {len(rows) - passed} failed"
               + (f" ({len(crashed)} could not be graded)" if crashed else "") + ". "
               f"Score: mean {statistics.fmean(scores):.2f}, median {statistics.median(scores):.2f} "
               f"of {points(max(r.max_score for r in rows))} points.</p>")

    out += ["<h2>Learners</h2>", '<p class="muted">Click a heading to sort; a learner links to their '
            "feedback page.</p>", learner_table(rows, reports_dir)]
    out += ["<h2>Score distribution</h2>", _img(_histogram(rows), "score histogram")]

    groups, cases = failure_rates(rows, reports)
    if groups:
        out.append("<h2>Failure rates per case group</h2>")
        out.append(_img(_barh([g for g, _, _ in groups], [100 * len(w) / n for _, w, n in groups],
                              "% of the learners who ran it failing", "Failure rate per case group",
                              "#cf222e", 100), "failure rate per case group"))
        out.append(_table(["Group", "Learners failing", "Rate", "Example"],
                          [[_e(g), f"{len(w)} of {n}", f"{100 * len(w) / n:.0f}%",
                            _link(w[0], reports_dir) if w else ""] for g, w, n in groups], (1, 2)))
        out.append(f'<p class="muted">{_e(RATE_NOTE)}</p>')
        out.append("<h2>Failure rates per case</h2>")
        if cases:
            shown = cases[:MAX_BARS]
            out.append(_img(_barh([c for c, _, _ in shown], [100 * len(w) / n for _, w, n in shown],
                                  "% of the learners who ran it failing",
                                  f"Failure rate per case (the {len(shown)} most failed)", "#bc4c00", 100),
                            "failure rate per case"))
            out.append(_table(["Case", "Learners failing", "Rate", "Example"],
                              [[_e(c), f"{len(w)} of {n}", f"{100 * len(w) / n:.0f}%", _link(w[0], reports_dir)]
                               for c, w, n in shown], (1, 2)))
            out.append(f'<p class="muted">{_e(RATE_NOTE)}</p>')
            if len(cases) > MAX_BARS:
                # summary.md lists as many (summary_md.MAX_RATE_ROWS): only the reports have the rest
                out.append(f'<p class="muted">... and {len(cases) - MAX_BARS} more failing cases '
                           "(see the reports)</p>")
        else:
            out.append("<p>No case failed.</p>")

    out.append("<h2>Commonest hints</h2>")
    hints = common_hints(rows, reports)[:MAX_HINTS]
    if hints:
        out.append(_img(_barh([f"{i}. {h}" for i, (h, _) in enumerate(hints, 1)], [len(w) for _, w in hints],
                              "learners", "Learners given each hint", "#0969da", counts=True), "learners per hint"))
        out.append(_table(["#", "Hint", "Learners", "Example"],
                          [[str(i), _e(h), str(len(w)), _link(w[0], reports_dir)]
                           for i, (h, w) in enumerate(hints, 1)], (0, 2)))
    else:
        out.append("<p>No hint was given.</p>")

    if crashed:
        out.append("<h2>Could not be graded</h2>")
        body = []
        for r in crashed:
            f = reports[r.learner].failure
            body.append([_link(r.learner, reports_dir), _e(f.message if f else "")])
        out.append(_table(["Learner", "Why"], body))

    slow = sorted(rows, key=lambda r: -r.seconds)[:SLOWEST]
    out.append("<h2>Slowest submissions</h2>")
    out.append(_img(_barh([r.learner for r in slow], [r.seconds for r in slow], "seconds (whole check)",
                          "Slowest submissions", "#8250df"), "slowest submissions"))
    out.append(_table(["Learner", "Seconds", "Verdict"],
                      [[_link(r.learner, reports_dir), f"{r.seconds:.1f}",
                        _e("passed" if r.passed else "failed: " + ", ".join(r.kinds))] for r in slow], (1,)))
    out += [f"<script>{_SORT_SCRIPT}</script>", "</body></html>", ""]
    return "\n".join(out)
