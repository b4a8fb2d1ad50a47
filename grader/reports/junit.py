"""JUnit XML report, for CI systems (Jenkins, GitLab, GitHub test reporters) and batch grading.

Layout (validated in tests against both windyroad ``JUnit.xsd`` and the Jenkins xunit plugin's
``junit-10.xsd`` but for the attributes neither has and the consumers read: a testcase's
``file`` and ``line``, the totals of ``<testsuites>``; parsed in tests by junitparser and
xunitparser; see docs/formats.md)::

    <testsuite name="problem (submission)" tests= failures= errors= skipped= time= timestamp= hostname=>
      <properties> environment (seed, versions...), score, max_score, cases_passed, cases_total </properties>
      <testcase classname="group" name="case name" time="seconds" file="submission" line="def line">
        <failure type="kind" message="message — hint: hint">details</failure>   a wrong value
        <error type="kind" message="one line">details</error>       the submission raised, crashed,
                                                                    timed out or could not be imported
        <skipped message="..."/>                                    not run
      </testcase>
      <system-out/> <system-err/>   the submission's captured output, when it may be shown
    </testsuite>

For learners, hidden cases become one testcase per group named ``hidden cases: P of N passed``
(no details). A whole-submission failure (``report.failure``) is one testcase with an
``<error>``, ``classname="submission"``, ``name=<kind>``. Shrunk cases are no testcase: each is
told in the text of the case it was shrunk from (``grader.reports.view``).
"""
from __future__ import annotations

import json

import re
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from typing import Any, Iterable

from grader.reports import common, view
from grader.results import RUN_KINDS, CaseResult, Report

# Characters XML 1.0 cannot carry (control characters, lone surrogates, U+FFFE/U+FFFF).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: Any) -> str:
    """``str(text)`` through :func:`grader.reports.common.printable` (controls, ANSI escapes, bidi
    characters and lone surrogates as visible escapes), and what else XML 1.0 forbids
    (U+FFFE, U+FFFF) written as ``\\uNNNN``."""
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", common.printable(text))


def _el(parent: ET.Element, tag: str, text: str | None = None, **attrs: Any) -> ET.Element:
    child = ET.SubElement(parent, tag, {k: xml_safe(v) for k, v in attrs.items() if v is not None})
    if text:
        child.text = xml_safe(text)
    return child


def _outcome(testcase: ET.Element, status: str, kind: str, message: str, text: str | None) -> None:
    """``<error>`` for a fault of the submission's run (it raised, crashed, timed out, ran out of
    memory or could not be imported: :data:`grader.results.RUN_KINDS`), as pytest writes an
    exception; ``<failure>`` for a wrong value; ``<skipped>`` for a case not run."""
    if status == "skipped":
        _el(testcase, "skipped", message=message)
    elif status in ("error", "timeout") or kind in RUN_KINDS:
        _el(testcase, "error", text, type=kind, message=message)
    elif status == "failed":
        _el(testcase, "failure", text, type=kind, message=message)


def _case(suite: ET.Element, v: view.ReportView, case: CaseResult, classname: str) -> None:
    tc = _el(suite, "testcase", classname=classname, name=case.name, time=f"{case.seconds:.6f}",
             file=v.file, line=v.line_of(case))  # the line that raised, for an exception
    if case.status != "passed":  # message and hint in one line: the consumers' titles show only it
        body = v.case_text(case)
        hint = v.best_hint(case)
        if hint and f"hint: {hint}" not in body:  # the pattern's hint: in the body too (raw output)
            body = f"hint: {hint}\n{body}"
        _outcome(tc, case.status, common.kind(case), v.one_line_message(case), body)


def _properties(suite: ET.Element, v: view.ReportView, extra: dict[str, Any], prefix: str = "") -> None:
    report = v.report
    props = _el(suite, "properties")
    def scalar(value: Any) -> Any:
        """A list of scalars joined with ``,``; anything nested (an assignment's problems) as
        compact JSON, which tools can parse (a Python repr they cannot); a scalar as it is."""
        if isinstance(value, (list, tuple)) and all(x is None or isinstance(x, (str, int, float, bool)) for x in value):
            return ",".join(map(str, value))
        if isinstance(value, (list, tuple, dict)):
            return json.dumps(value, separators=(",", ":"), default=str)
        return value

    flat: dict[str, Any] = {}
    for key, value in {**extra, **report.environment}.items():
        if isinstance(value, dict):
            flat.update({f"{key}.{k}": scalar(v) for k, v in value.items()})
        else:
            flat[key] = scalar(value)
    flat.update(score=common.points(report.score), max_score=common.points(report.max_score),
                cases_passed=v.passed, cases_total=v.total)  # graded cases, hidden ones included
    for name, value in flat.items():
        _el(props, "property", name=prefix + name, value="" if value is None else value)


def _suite(report: Report, name: str, audience: str, timestamp: str | None,
           classprefix: str = "", extra: dict[str, Any] | None = None, propprefix: str = "") -> ET.Element:
    v = view.build(report, audience)  # a learner never sees a secret seed nor a hidden case
    if v.audience == "learner":  # the name holds the submission's path: as the learner has it
        name = view.learner_paths(name, report.submission, by_name=view.named_by_caller(report))
    report = v.report
    suite = ET.Element("testsuite")
    _properties(suite, v, extra or {}, propprefix)
    if report.failure:
        f = report.failure
        tc = _el(suite, "testcase", classname=classprefix + "submission", name=f.kind, time=f"{report.seconds:.6f}",
                 file=v.file, line=v.failure_line())
        message = f.message + (f" — hint: {f.hint}" if f.hint else "")
        _outcome(tc, "error", f.kind, common.printable(message, one_line=True), "\n".join(common.failure_lines(f, 40)))
    for case in v.shown:
        _case(suite, v, case, classprefix + case.group)
    for tally in v.tallies:
        tc = _el(suite, "testcase", classname=classprefix + tally.group, name=tally.text, time=f"{tally.seconds:.6f}",
                 file=v.file, line=v.group_line(tally.group))
        _outcome(tc, tally.status, "hidden", tally.text, None)
    cases = suite.findall("testcase")
    show = v.show_output
    _el(suite, "system-out", report.output.get("stdout") if show else None)
    _el(suite, "system-err", report.output.get("stderr") if show else None)
    suite.attrib.update(
        name=xml_safe(name), tests=str(len(cases)),
        failures=str(sum(tc.find("failure") is not None for tc in cases)),
        errors=str(sum(tc.find("error") is not None for tc in cases)),
        skipped=str(sum(tc.find("skipped") is not None for tc in cases)),
        time=f"{report.seconds:.3f}",
        # made after the hidden calls: a learner who reads a clock in a visible case's message
        # would time them (round four, a fourth attacker's pass: 11.85 s vs -0.42 s by a guess at
        # a hidden input), so a learner's report with hidden cases gives the day only
        timestamp=timestamp or datetime.now(timezone.utc).strftime(
            "%Y-%m-%dT00:00:00" if v.audience == "learner" and v.tallies else "%Y-%m-%dT%H:%M:%S"),
        hostname="localhost")
    return suite


def _text(root: ET.Element) -> str:
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def render(report: Report, *, audience: str = "learner", timestamp: str | None = None) -> str:
    """One submission as a JUnit ``<testsuite>`` document (str, with XML declaration).

    Args:
        report: the graded submission.
        audience: ``"learner"`` (hidden cases only as per-group counts) or ``"instructor"``.
        timestamp: ``YYYY-MM-DDTHH:MM:SS`` (no zone, as the schemas require); default now, UTC.

    Raises:
        ValueError: unknown ``audience``.

    Format: Ant/JUnit XML as described by windyroad/JUnit-Schema ``JUnit.xsd`` and
    jenkinsci/xunit-plugin ``junit-10.xsd``; counts are those of the emitted testcases.
    """
    return _text(_suite(report, f"{report.problem} ({report.submission})", audience, timestamp))


def render_many(reports: Iterable[tuple[str, Report]], *, audience: str = "learner",
                timestamp: str | None = None) -> str:
    """Several learners' submissions as one ``<testsuites>`` document, one suite per learner.

    Args:
        reports: ``(learner_id, report)`` pairs, in the order wanted.
        audience, timestamp: as for :func:`render`.

    Each suite is named ``"<learner_id>: <problem> (<submission>)"``, carries ``id`` (0, 1, ...),
    ``package`` (the problem id) and a ``learner`` property; testcase classnames are
    ``<learner_id>.<group>`` so that CI views (which group by classname) keep learners apart.
    Property names start with ``<learner_id>.``: xunitparser merges the suites of a document
    and rejects a property name it has seen. ``<testsuites>`` carries the totals (``tests``,
    ``failures``, ``errors``, ``skipped``, ``time``), as pytest and the CI test reporters read
    them (windyroad's JUnit.xsd allows no attribute there, junit-10.xsd all but ``skipped``).

    Raises:
        ValueError: unknown ``audience``.
    """
    root = ET.Element("testsuites")
    for i, (learner, report) in enumerate(reports):
        suite = _suite(report, f"{learner}: {report.problem} ({report.submission})", audience,
                       timestamp, classprefix=f"{learner}.", extra={"learner": learner}, propprefix=f"{learner}.")
        suite.attrib.update(id=str(i), package=xml_safe(report.problem))
        root.append(suite)
    suites = root.findall("testsuite")
    root.attrib.update({k: str(sum(int(s.get(k, 0)) for s in suites))
                        for k in ("tests", "failures", "errors", "skipped")})
    root.set("time", f"{sum(float(s.get('time', 0)) for s in suites):.3f}")
    return _text(root)
