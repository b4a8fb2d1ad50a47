"""The output folder's files made from the gradebook and the reports, rewritten when a
``grade`` or ``merge`` ends (:func:`write_outputs`):

``gradebook.csv``       sorted by learner (:mod:`grader.batch.gradebook`).
``junit.xml``           one ``<testsuite>`` per learner, one ``<testcase>`` per test case
                        (:func:`grader.reports.junit.render_many`).
``summary.md``          score distribution, commonest failure kinds with an example learner,
                        failure rates per case group and per case, submissions that could not
                        be graded, slowest submissions (:mod:`grader.reports.summary_md`).
``summary.html``        the class view (:mod:`grader.reports.classview`): the learner x group
                        grid with reasons, submission times and lateness, the score changes
                        since the previous run, charts; self-contained (PNG data URIs, one
                        inline script). Needs matplotlib (the ``instructor`` extra): without
                        it, skipped with a note on stderr.
``similarity.html``     the pairs of submissions that share code (:mod:`grader.reports.similarity`),
                        the starter code left out; written by ``grade`` (which knows the files).
``feedback/<name>.txt`` each learner's text report for the learner audience (hidden cases as
                        counts only), to hand back; ``<name>`` is
                        :func:`grader.batch.gradebook.feedback_name` (like the report's);
                        ``feedback/index.csv`` maps learner to file.
"""
from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Iterable

from .._io import csv_line
from ..errors import GraderError
from ..results import Report
from .gradebook import (FEEDBACK, GRADEBOOK, JUNIT, REPORTS, SUMMARY, SUMMARY_HTML, Row, feedback_html_name, feedback_name,
                        load_report, report_path, write_gradebook)


def _load_reports(out: Path, rows: list[Row]) -> dict[str, Report]:
    reports = {}
    for row in rows:
        try:
            reports[row.learner] = load_report(report_path(out, row.learner))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise GraderError(f"cannot read the report of {row.learner!r} in {out / REPORTS}: {exc}") from None
    return reports


SIMILARITY_HTML = "similarity.html"


def write_outputs(out: Path, rows: list[Row], audience: str, *, sources: dict[str, Path] | None = None,
                  starters: Iterable[str] = (), threshold: float = 0.5,
                  helpers: Iterable[str] = (), written: dict[str, str] | None = None) -> dict[str, Report]:
    """Rewrite ``gradebook.csv`` (sorted), ``junit.xml`` and ``summary.md`` of ``out`` from
    ``rows`` and their reports; with ``sources`` (learner -> the file graded), ``similarity.html``
    (pairs sharing ``threshold`` of their code, the ``starters`` files left out); then the
    class view. ``helpers``: the learners whose check takes along the modules beside their file
    (their code is compared with those modules'). ``written``: the learners whose feedback files
    were written from their report of this run as their check ended (:func:`write_feedback`), by
    learner, with their page's name: not written again. Returns the reports, by learner.

    Raises:
        GraderError: a report is missing or unreadable, or a file cannot be written.
    """
    from .._io import write_output
    from ..reports import junit
    from ..reports.summary_md import summary_markdown

    rows = sorted(rows, key=lambda r: r.learner)
    reports = _load_reports(out, rows)
    write_gradebook(out / GRADEBOOK, rows)
    write_output(junit.render_many([(r.learner, reports[r.learner]) for r in rows], audience=audience),
                 str(out / JUNIT))
    write_output(summary_markdown(rows, reports), str(out / SUMMARY))
    if sources is not None:
        write_similarity(out, sources, list(starters), threshold, next(iter(reports.values())).problem
                         if reports else "", helpers=set(helpers))
    write_class_view(out, rows, reports, written)
    return reports


def write_similarity(out: Path, sources: dict[str, Path], starters: list[str], threshold: float,
                     problem: str, helpers: set[str] | frozenset[str] = frozenset()) -> None:
    """Write ``similarity.html`` into ``out``: the pairs of ``sources`` (learner -> file) that
    share at least ``threshold`` of their code, ``starters`` (files) left out. A learner of
    ``helpers`` is compared with their file and the modules beside it that the check takes
    along (a copy moved into ``pooling.py`` behind a one-line main file was in no pair: round
    sixteen of issue 32). Like the class
    view it costs only itself: when it cannot be made (copydetect missing, anything raised) a
    stale page is removed and one note goes to stderr.
    """
    from .._io import write_output
    from ..reports import similarity
    from ..reports.common import printable
    try:
        codes = {learner: code for learner, path in sources.items()
                 if (code := similarity.code_of(Path(path), helpers=learner in helpers)) is not None}
        starter_codes = [c for c in (similarity.code_of(Path(s)) for s in starters) if c is not None]
        pairs = similarity.similar_pairs(codes, starter_codes, threshold)
        page = similarity.render(pairs, learners=len(codes), threshold=threshold,
                                 starters=[Path(s).name for s in starters],
                                 title=f"Similar submissions: {problem}",
                                 links={k: f"{FEEDBACK}/{feedback_html_name(k)}" for k in codes})
        write_output(page, str(out / SIMILARITY_HTML))
    except GraderError:
        raise
    except Exception as exc:  # noqa: BLE001 - the similarity page must never cost the grades
        with contextlib.suppress(OSError):
            (out / SIMILARITY_HTML).unlink(missing_ok=True)
        name = getattr(exc, "name", None) if isinstance(exc, ImportError) else None
        why = f" ({name} is missing; pip install copydetect)" if name else f": {type(exc).__name__}: {exc}"
        sys.stderr.write(printable(f"grader: note: {SIMILARITY_HTML} not written{why}", one_line=True)[:500] + "\n")


def write_feedback(out: Path, learner: str, report: Report) -> str:
    """Write ``learner``'s feedback files from ``report``: ``feedback/<name>.txt``, their text
    report in the learner audience (hidden cases as counts only), and the same as a page,
    ``feedback/<name>.html`` (:func:`grader.reports.notebook_html.feedback_page`). Returns the
    page's name, or "" when the page could not be made (said on stderr; the .txt is there).
    ``grader grade`` writes them as each check ends, while the others run.

    Raises:
        GraderError: a feedback file cannot be written.
    """
    from .._io import write_output
    from ..reports import text
    from ..reports.common import LEARNER, printable
    from ..reports.notebook_html import feedback_page

    name, page = feedback_name(learner), feedback_html_name(learner)
    # bob.py, not the instructor's class/bob.py: grader grade named the file (view.named_by_caller)
    write_output(text.render(report, audience=LEARNER), str(out / FEEDBACK / name))
    try:  # one learner's page must never cost the others' feedback, the index or summary.html
        write_output(feedback_page(report, audience=LEARNER), str(out / FEEDBACK / page))
    except GraderError:
        raise
    except Exception as exc:  # noqa: BLE001 - said, and the batch goes on
        sys.stderr.write(printable(f"grader: note: the feedback page of {learner!r} could not be made "
                                   f"({type(exc).__name__}: {exc}); its .txt is there", one_line=True) + "\n")
        page = ""
    return page


def write_class_view(out: Path, rows: list[Row], reports: dict[str, Report],
                     written: dict[str, str] | None = None) -> None:
    """Write the learners' feedback files ``feedback/<name>.txt`` (:func:`feedback_name`): each
    learner's text report in the learner audience (hidden cases as counts only), to hand back,
    the same as a page, ``feedback/<name>.html`` (:func:`feedback_html_name`,
    :func:`grader.reports.notebook_html.feedback_page`), and ``feedback/index.csv`` (learner,
    file, page); then ``summary.html``
    (:func:`grader.reports.classview.render`).

    ``written``: learners whose feedback files this run wrote already (:func:`write_feedback`),
    with their page's name. The class view costs only itself: when it cannot be made (matplotlib, the ``instructor``
    extra, is missing; or rendering or writing it raises anything), a stale ``summary.html`` is
    removed and one ``grader: note: summary.html not written ...`` line goes to stderr; the
    feedback files are written before it is tried.

    Raises:
        GraderError: a feedback file cannot be written.
    """
    from .._io import write_output
    from ..reports.common import csv_cell, printable

    index = [csv_line(("learner", "file", "page"))]
    for r in sorted(rows, key=lambda r: r.learner):
        page = (written or {}).get(r.learner)
        if page is None:
            page = write_feedback(out, r.learner, reports[r.learner])
        index.append(csv_line((csv_cell(r.learner), feedback_name(r.learner), page)))
    write_output("".join(index), str(out / FEEDBACK / "index.csv"))

    why = None
    try:
        from ..reports import classview
        from .history import changes
        from .times import off_roster, read as read_times
        deadline, times = read_times(out)
        previous, changed = changes(out, rows)
        write_output(classview.render(rows, reports, reports_dir=REPORTS, times=times, deadline=deadline,
                                      changes=changed, previous=previous, off_roster=off_roster(out),
                                      similarity=SIMILARITY_HTML if (out / SIMILARITY_HTML).is_file() else None),
                     str(out / SUMMARY_HTML))
    except ImportError as exc:
        why = f" ({exc.name or 'matplotlib'} is missing; pip install 'grader[instructor]')"
    except Exception as exc:  # noqa: BLE001 - the charts must never cost the grades, reports or feedback
        why = f": {type(exc).__name__}: {exc}"
    if why is not None:
        with contextlib.suppress(OSError):
            (out / SUMMARY_HTML).unlink(missing_ok=True)  # an older run's page would say other grades
        line = printable(f"grader: note: {SUMMARY_HTML} not written{why}", one_line=True)
        sys.stderr.write((line if len(line) <= 500 else line[:497] + "...") + "\n")
