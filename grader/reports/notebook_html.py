"""The HTML of :func:`grader.notebook_check.check`'s result in Jupyter (:func:`render_html`):
verdict, score, the failing cases with kind, message, hint and worst element, and for a
tolerance failure a heat map of ``|got - expected|`` over the output, the element worst for its
allowance framed (:func:`heat_map_png`).

It renders a ``--format json`` report (a dict), like the other reporters here render a
:class:`grader.results.Report`. The picture is drawn from what the JSON report holds: the
values of cases with at most 64 elements per array (``compare.SMALL``), and the worst
element's error and allowance. The report has no per-element allowance, so the map shows the
error, and its caption how many elements exceed their allowance; a larger case (the real-size
one) is drawn from the coarse error/allowance grid of its tolerance failure
(``Failure.data.grid``, :func:`grader.compare.error_grid`).

Matplotlib is optional (``pip install 'grader[notebook]'``); without it the HTML has no picture.
"""
from __future__ import annotations

import base64
import io
from types import SimpleNamespace
from typing import Any

from ..results import RUN_KINDS  # failure kinds of the run rather than the values

#: failing cases shown in the HTML, as in the text report
MAX_CASES = 5


def heat_map_png(case: dict[str, Any]) -> str | None:
    """A base64 PNG of where a failing case's output is off, or None (no values nor grid, a
    scalar output, or matplotlib missing).

    A small case (its values are in the report when every array has 64 elements or fewer):
    ``|got - expected|`` per element, the worst element framed. A larger one: the coarse grid of
    its tolerance failure (``failure.data.grid``, :func:`grader.compare.error_grid`), the largest
    ``|got - expected| / allowed`` per block of the output (leading axes as rows), on a log
    colour scale, the block holding the worst element framed. The case name is drawn without
    mathtext."""
    values = case.get("values") or {}
    failure = case.get("failure") or {}
    grid = (failure.get("data") or {}).get("grid")
    # several outputs' values come by output name: those are mapped through the grid only
    by_values = "got" in values and "expected" in values and not isinstance(values["got"], dict)
    if not by_values and not isinstance(grid, dict):
        return None
    try:
        import numpy as np
        import matplotlib

        matplotlib.use("Agg", force=False)
        from matplotlib.figure import Figure
    except ImportError:
        return None
    if by_values:
        return _heat_map_of_values(case, np, Figure)
    return _heat_map_of_grid(case, grid, np, Figure)


def _fit_title(name: Any, fig: Any, points: float = 9) -> str:
    """A case name broken into lines that fit the figure's width at ``points`` (about 0.62 em a
    character in matplotlib's default sans-serif), so a long name is never clipped."""
    import textwrap
    width = max(20, int(fig.get_figwidth() * 72 / (0.62 * points)) - 4)
    return "\n".join(textwrap.wrap(str(name), width, break_long_words=True, break_on_hyphens=False)) or str(name)


def _png_of(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")  # the figures are laid out "constrained": titles and labels fit
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _heat_map_of_values(case: dict[str, Any], np: Any, Figure: Any) -> str | None:
    values, failure = case["values"], case.get("failure") or {}
    got = np.asarray(values["got"], dtype=float)
    want = np.asarray(values["expected"], dtype=float)
    if got.shape != want.shape or got.ndim == 0 or got.size == 0:
        return None
    err = np.abs(got - want)
    grid = err.reshape(-1, err.shape[-1])
    # a 1-D output is one strip: no row axis (its ticks ran from -0.5 to 0.5, a newcomer's trial)
    fig = Figure(figsize=(min(max(4.5, 1.5 + 0.4 * grid.shape[1]), 7.0),
                          min(max(2.6, 1.5 + 0.4 * grid.shape[0]), 5.0) if got.ndim > 1 else 2.2),
                 dpi=90, layout="constrained")
    ax = fig.subplots()
    im = ax.imshow(grid, cmap="Reds", aspect="auto", interpolation="nearest", vmin=0)
    fig.colorbar(im, ax=ax, label="|got - expected|")
    from matplotlib.ticker import MaxNLocator
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if got.ndim > 1:
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    else:
        ax.set_yticks([])
    worst = (failure.get("data") or {}).get("worst_index")
    if isinstance(worst, list) and len(worst) == got.ndim:
        flat = int(np.ravel_multi_index(tuple(worst[:-1]), got.shape[:-1])) if got.ndim > 1 else 0
        from matplotlib.patches import Rectangle
        ax.add_patch(Rectangle((worst[-1] - 0.5, flat - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=2))
    ax.set_xlabel("index on the last axis" if got.ndim > 1 else "index")
    ax.set_ylabel("row" if got.ndim > 1 else "")
    ax.set_title(f"{_fit_title(case.get('name'), fig)}\noutput {tuple(got.shape)}; framed: worst for its tolerance",
                 fontsize=9, parse_math=False)
    return _png_of(fig)


def _heat_map_of_grid(case: dict[str, Any], grid: dict[str, Any], np: Any, Figure: Any) -> str | None:
    try:
        rows, cols = (int(v) for v in grid["shape"])
        ratio = np.array([[float(v) for v in str(line).split()] for line in grid["max_ratio"]], dtype=float)
    except (KeyError, TypeError, ValueError):
        return None
    if ratio.ndim != 2 or ratio.size == 0 or rows <= 0 or cols <= 0:
        return None
    from matplotlib.colors import LogNorm
    from matplotlib.patches import Rectangle

    finite = ratio[np.isfinite(ratio) & (ratio > 0)]
    top = max(float(finite.max()) if finite.size else 1.0, 10.0)
    low = min(float(finite.min()) if finite.size else 0.1, 0.1)
    shown = np.where(np.isfinite(ratio), np.clip(ratio, low, None), top * 10)  # no allowance: off the scale
    fig = Figure(figsize=(6.5, 4.4), dpi=90, layout="constrained")
    ax = fig.subplots()
    # block i covers rows i * rows // nr up to (i + 1) * rows // nr: draw the blocks at their extents
    nr, nc = ratio.shape
    y = [i * rows // nr for i in range(nr + 1)]
    x = [j * cols // nc for j in range(nc + 1)]
    mesh = ax.pcolormesh(x, y, shown, cmap="Reds", norm=LogNorm(vmin=low, vmax=top * 10))
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)
    bar = fig.colorbar(mesh, ax=ax, label="largest |got - expected| / allowed in the block")
    # plain numbers (0.1, 1, 10, 100): the default labels are mathtext ($\mathdefault{10^{2}}$), shown
    # raw wherever math text is off (a kernel's rcParams, an SVG viewer)
    from matplotlib.ticker import FuncFormatter
    bar.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    bar.ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    worst = grid.get("worst")  # [row, column] of the worst element, leading axes flattened
    if isinstance(worst, list) and len(worst) == 2:
        i = next((k for k in range(nr) if y[k] <= worst[0] < y[k + 1]), None)
        j = next((k for k in range(nc) if x[k] <= worst[1] < x[k + 1]), None)
        if i is not None and j is not None:
            ax.add_patch(Rectangle((x[j], y[i]), x[j + 1] - x[j], y[i + 1] - y[i], fill=False, edgecolor="black",
                                   linewidth=2))
    ax.set_xlabel("index on the last axis")
    ax.set_ylabel("row (leading axes flattened)")
    ax.set_title(f"{_fit_title(case.get('name'), fig)}\noutput {rows} x {cols} in {nr} x {nc} blocks; framed: "
                 "the worst", fontsize=9, parse_math=False)
    return _png_of(fig)


def _not_graded(report: dict[str, Any]) -> str:
    """``"; not graded: P (kind)"`` for an assignment's problems that could not be graded (as the
    text report's count line says it: ``grader.reports.view.ReportView.counts_text``); empty
    otherwise, and when the whole file could not be."""
    assignment = (report.get("environment") or {}).get("assignment")
    parts = assignment.get("problems") if isinstance(assignment, dict) else None
    if not isinstance(parts, list) or report.get("failure"):
        return ""
    missing = [f"{p.get('problem')} ({p.get('failure')})" for p in parts if isinstance(p, dict) and p.get("failure")]
    return f"; not graded: {', '.join(missing)}" if missing else ""


def _framed(data: dict[str, Any]) -> str:
    """The heat map's words on its framed worst element, from the failure's facts: its error, its
    allowance and their ratio (a learner trial read "the allowance ...: 0.0678 (64x the
    allowance)" as an allowance 64 times itself)."""
    if not all(isinstance(data.get(k), (int, float)) for k in ("error", "allowed", "ratio")):
        return "the framed element is the worst (see above)"
    return (f"the framed worst one is off by {data['error']:.6g}, {data['ratio']:.3g}x its allowance of "
            f"{data['allowed']:.6g}")


def _shown_details(failure: dict[str, Any]) -> list[str]:
    """A JSON failure's detail lines and then its traceback's words (``Failure.shown_details``)."""
    return [*(failure.get("details") or []), *([failure["traceback"]] if failure.get("traceback") else [])]


def _worst(failure: dict[str, Any]) -> str:
    return next((d for d in failure.get("details") or [] if d.startswith(("worst at", "first at"))), "")


def render_html(report: dict[str, Any], text: str = "", source: str = "") -> str:
    """The HTML of a JSON report: verdict and score, the failure pattern, up to
    :data:`MAX_CASES` failing cases (kind, message, hint, worst element, the traceback of an
    error, a heat map for a tolerance failure: per element for a small case, per block of the
    output for a large one), and folded away the full text report and
    the ``source`` that was graded (tracebacks' line numbers are its lines). The markup is the
    Jinja2 template ``templates/feedback.html.j2``, every value autoescaped."""
    from ..results import Failure
    from .classview_anchor import anchor
    from .common import all_zero, compact_value, entry_key, example_order, pick_examples, scalar_text
    from .templating import render

    passed = bool(report.get("passed"))
    counts = report.get("counts") or {}
    env = report.get("environment") or {}
    groups = [g for g in report.get("groups") or [] if isinstance(g, dict)]
    f = report.get("failure")
    # a roster learner who submitted nothing: said so, with no "0 of 0" counts or groups (the
    # text report's rule; an instructor's trial read "(0 of 0 cases passed)" and a table of 0 of 0)
    missing = isinstance(f, dict) and f.get("kind") == "missing"
    shown_groups = groups if (len(groups) > 1 or (groups and not passed)) and not missing else []
    failing = [c for c in report.get("cases") or [] if c.get("status") not in ("passed", "skipped")
               and c.get("visibility") != "hidden" and c.get("failure")]
    # the text report's order (common.example_order) and choice (common.pick_examples)
    failing.sort(key=lambda c: example_order(
        c["failure"].get("kind", ""), bool(c.get("shrunk")),
        [tuple(i.get("shape", [])) for i in (c.get("inputs") or {}).values()], all_zero(c.get("values"), c.get("inputs") or {}),
        c.get("name", ""), c.get("group") or ""))
    hints = {c["name"]: c["failure"]["hint"] for c in failing if c["failure"].get("hint")}
    distinct: dict[tuple[str, str], dict[str, Any]] = {}
    for c in failing:  # one entry per case and kind; one per message for errors of the run (the text report's)
        fc = c["failure"]
        key = entry_key(c["name"], fc["kind"], fc.get("message", ""))
        if c.get("shrunk") and key in distinct and not distinct[key].get("shrunk"):
            distinct[key] = c   # a shrunk case leads its entry (the text report's rule)
        distinct.setdefault(key, c)
    cases = []
    seen: dict[str, str] = {}   # a traceback's facts -> the case that showed it (the text report's rule)
    examples, _ = pick_examples(list(distinct.values()), MAX_CASES, lambda c: (c["failure"].get("data") or {}).get("hint_id"),
                                lambda c: c["failure"].get("kind"))
    for c in examples:
        fc = c["failure"]
        same = None
        if fc.get("frames") or fc.get("exception"):
            try:   # the text report's rule (Failure.same_raise), on the JSON's facts
                key = Failure.from_json(fc).same_raise
            except (KeyError, TypeError, ValueError):
                key = c["name"]
            same = seen.setdefault(key, c["name"])
            same = None if same == c["name"] else same
        cases.append({
            "name": c["name"], "group": c.get("group"), "kind": fc.get("kind"), "message": fc.get("message"),
            # a scalar by its value, as the text report (a newcomer read "temperature () float64")
            "shapes": ", ".join(scalar_text(k, SimpleNamespace(dtype=v.get("dtype")), c.get("values"))
                                if not v.get("shape") else f"{k} {tuple(v.get('shape', []))} {v.get('dtype')}"
                                for k, v in (c.get("inputs") or {}).items()),
            "worst": _worst(fc), "hint": fc.get("hint") or hints.get(c["name"].removeprefix("shrunk:")),
            "tail": "\n".join("\n".join(_shown_details(fc)).rstrip().splitlines()[-15:])
            if fc.get("kind") in RUN_KINDS and _shown_details(fc) and not same else "",
            "same_as": same, "replay": c.get("replay"), "replay_note": c.get("replay_note"),
            # a small case's inputs, expected and got, as the text report writes them (a newcomer
            # found the cards without them)
            "small_values": [f"{key} = {compact_value(value)}" for key, value in (c.get("values") or {}).items()]})
    # the graded hidden cases: a shrunk case is extra feedback, counted nowhere
    hidden = [c for c in report.get("cases") or [] if c.get("visibility") == "hidden" and not c.get("shrunk")]
    return render(
        "feedback.html.j2", colour="#1a7f37" if passed else "#cf222e", verdict="PASS" if passed else "FAIL",
        problem=report.get("problem"), score=f"{report.get('score', 0):g}", max_score=f"{report.get('max_score', 0):g}",
        counts={"passed": counts.get("passed", 0), "total": counts.get("total", 0)} if counts.get("total") else None,
        no_submission=missing,
        not_graded=_not_graded(report),
        # not for the placeholder of a learner with nothing to run
        framework=env.get("framework"), dtypes=", ".join(env.get("dtypes") or []), sandbox=env.get("sandbox"),
        skipped=counts.get("skipped") or 0,
        # the class view's grid links each cell here (grader.reports.classview.anchor)
        groups=[{"anchor": anchor(str(g.get("group"))), "group": g.get("group"), "passed": g.get("passed"),
                 "total": g.get("total"), "earned": f"{float(g.get('earned') or 0):g}",
                 "points": f"{float(g.get('points') or 0):g}"} for g in shown_groups],
        failure={"kind": f.get("kind"), "message": f.get("message"), "hint": f.get("hint"),
                 "details": "\n".join(_shown_details(f))[-3000:]} if f else None,
        summary=[{"text": e.get("text"),
                  "hints": [{"count": h.get("count"), "of": h.get("of"), "text": h.get("text")}
                            for h in e.get("hints") or ([e["hint"]] if e.get("hint") else []) if isinstance(h, dict)]}
                 for e in report.get("summary") or []],
        # drawn from a case the page lists (an instructor's trial: a heat map of three_axes, a
        # case in neither the .txt nor the .html list)
        cases=cases, distinct=len(distinct), picture=_picture(examples),
        hidden={"passed": sum(c.get("status") == "passed" for c in hidden), "total": len(hidden)} if hidden else None,
        text=text, source="\n".join(f"{i:4d}  {line}" for i, line in enumerate(source.splitlines(), start=1)))


def _picture(failing: list[dict[str, Any]]) -> dict[str, str] | None:
    """One picture of where the output is off: for the tolerance failure with the most output
    values shown; else, for the largest one, its coarse grid (``failure.data.grid``)."""
    tolerance_failures = [c for c in failing if c["failure"].get("kind") == "tolerance"]
    pictured = [c for c in tolerance_failures if (c.get("values") or {}).get("got")]
    pictured.sort(key=lambda c: -_numel(list(_shape_of(c["values"]["got"]))))
    gridded = [c for c in tolerance_failures if isinstance((c["failure"].get("data") or {}).get("grid"), dict)]
    gridded.sort(key=lambda c: -_numel(c["failure"]["data"]["grid"].get("shape") or []))
    for c in (pictured or gridded)[:1]:
        if png := heat_map_png(c):
            data = c["failure"].get("data") or {}
            over = (f'{data["mismatched"]} of {data["total"]} elements exceed their allowance; '
                    if "mismatched" in data and "total" in data else "")
            what = ("|got - expected| per element; " + _framed(data)) if pictured else \
                "the largest |got - expected| / allowed per block of the output; over 1 is outside the tolerance"
            return {"name": c["name"], "over": over, "what": what, "png": png}
    return None


def _shape_of(value: Any) -> tuple[int, ...]:
    shape = []
    while isinstance(value, list):
        shape.append(len(value))
        value = value[0] if value else None
    return tuple(shape)


def _numel(shape: list[int]) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n


#: a feedback page runs nothing and loads nothing: inline styles and data: images only
PAGE_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"


def feedback_page(report: Any, *, audience: str = "learner") -> str:
    """A learner's feedback as one self-contained HTML document (``grader grade`` writes it to
    ``feedback/<name>.html``): :func:`render_html` of the JSON report for ``audience`` (hidden
    cases as counts for learners), with the text report folded away, under a
    Content-Security-Policy that lets nothing run or load. The heat map is drawn only where
    matplotlib is installed, read with no configuration of the working folder
    (:func:`grader.isolation.import_matplotlib`).

    Raises:
        ValueError: unknown ``audience``.
    """
    from . import json_report, text

    data = json_report.to_dict(report, audience=audience)
    body_text = text.render(report, audience=audience)
    try:
        from grader.isolation import import_matplotlib, matplotlib_defaults
        matplotlib = import_matplotlib()
        matplotlib.use("Agg", force=False)
        with matplotlib_defaults(matplotlib):
            body = render_html(data, body_text)
    except ImportError:
        body = render_html(data, body_text)
    from markupsafe import Markup

    from .templating import render
    # the file as this audience's view names it (a learner's: by its name, no class folder)
    title = f"{'PASS' if report.passed else 'FAIL'} {report.problem}: {data.get('submission')}"
    # the body is render_html's own autoescaped template output; the CSP a constant of ours
    return render("feedback_page.html.j2", csp=Markup(PAGE_CSP), title=title, body=Markup(body)) + "\n"
