"""Helpers shared by the report formats: audience checks, hiding hidden cases, failure text.

Every reporter receives a :class:`~grader.results.Report` and an ``audience``:

``"learner"``     cases whose ``visibility`` is ``"hidden"`` are *concealed*: their names,
                  inputs and failure details never appear, only counts per group
                  (:class:`HiddenTally`, e.g. ``"hidden cases: 12 of 14 passed"``). Their
                  points still count in every score.
``"instructor"``  everything is shown.
"""
from __future__ import annotations

import dataclasses
import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Any

from grader.results import LATE_KINDS, SECRET_REPLAY_NOTE, CaseResult, Failure, Report  # noqa: F401 - the note, re-exported

LEARNER, INSTRUCTOR = "learner", "instructor"
AUDIENCES = (LEARNER, INSTRUCTOR)


# What must never reach a person's terminal, spreadsheet or browser raw (issue 9, class 11):
# C0 controls but tab and line feed (ESC starts ANSI/CSI/OSC sequences; CR overwrites a line),
# DEL and the C1 controls (U+009B is a one-byte CSI), the bidi controls that reorder what is
# shown (U+200E/F, U+061C, U+202A-U+202E, U+2066-U+2069), the line and paragraph separators,
# and lone surrogates (a non-UTF-8 file name, an exception message), which no UTF-8 output can
# carry; and every other invisible format character (Unicode category Cf: zero-width space and
# joiners, word joiner, BOM, soft hyphen, Mongolian vowel separator, tags...), with which
# "alice\u200b" would look like "alice" in a gradebook or a class view (tests/test_report_view.py
# checks this list against unicodedata).
_UNSAFE = ("\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
           "\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff"
           "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
           "\U000e0001\U000e0020-\U000e007f")
_UNSAFE_MULTILINE = re.compile(f"[{_UNSAFE}]")
_UNSAFE_ONE_LINE = re.compile(f"[{_UNSAFE}\t\n]")
#: first characters that make a spreadsheet read a cell as a formula (OWASP "CSV injection"),
#: and the quote that neutralises them
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape): show the byte
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: Any, *, one_line: bool = False) -> str:
    """``str(text)`` safe to show a person: control, bidi and other unsafe characters (see
    ``_UNSAFE``) written as visible escapes (``ESC`` -> ``\\x1b``, U+202E -> ``\\u202e``, a
    non-UTF-8 byte of a file name -> ``\\xe9``); line feeds and tabs kept unless ``one_line``.

    The one helper every reporter, the progress log, summary.md and the gradebook apply to text
    that may hold learner-controlled characters. Idempotent: ``printable(printable(t)) ==
    printable(t)``, and the result always encodes as UTF-8.
    """
    return (_UNSAFE_ONE_LINE if one_line else _UNSAFE_MULTILINE).sub(_escape, str(text))


def printable_tree(value: Any) -> Any:
    """``value`` (JSON-like: dicts, lists, strings, numbers) with :func:`printable` applied to
    every string, keys included; multi-line strings keep their line feeds."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable(k) if isinstance(k, str) else k: printable_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [printable_tree(v) for v in value]
    return value


def csv_cell(text: Any) -> str:
    """A learner-controlled gradebook cell: :func:`printable` on one line, and a leading ``'``
    when it starts with ``=``, ``+``, ``-``, ``@`` (a spreadsheet formula; also after leading
    blanks and as a full-width or other compatibility form, judged after NFKC) or with ``'`` itself,
    so that :func:`from_csv_cell` gives back exactly the printable text."""
    cell = printable(text, one_line=True)
    # a spreadsheet may skip leading blanks and fold full-width forms ("＝1+1", "  =HYPERLINK"):
    # judge the first character that is left after both
    lead = unicodedata.normalize("NFKC", cell.lstrip()[:1])[:1]
    return "'" + cell if cell.startswith("'") or lead.startswith(_FORMULA_START) else cell


def from_csv_cell(cell: str) -> str:
    """The text a :func:`csv_cell` was made from (its leading ``'`` removed)."""
    return cell[1:] if cell.startswith("'") else cell


def check_audience(audience: str) -> str:
    """Return ``audience`` unchanged; raise ValueError unless it is ``learner`` or ``instructor``."""
    if audience not in AUDIENCES:
        raise ValueError(f"audience must be one of {AUDIENCES}, not {audience!r}")
    return audience


def for_audience(report: Report, audience: str) -> Report:
    """``report`` as ``audience`` may see it (docs/security.md, round two class 6 and round four
    classes 2 and 3). An instructor sees everything. A learner:

    - never sees a seed derived from the instructor's secret: ``grader check`` leaves it out of a
      learner's report already; an instructor's report (``environment.seed_source`` ``"secret"``
      with the number) shown to a learner gets ``seed: "secret"``; a case's replay loses its
      seed where the seed does not choose the case's inputs (``Replay.without_seed``, on the
      facts), and is :data:`SECRET_REPLAY_NOTE` for the others (and for an older report's
      replay words, which carry no facts to tell them apart);
    - is not shown the expected values of a case whose inputs came from the secret seed
      (``CaseResult.seeded``): :func:`without_expected` (one run's report was a table of answers
      a helper file replayed in the next);
    - gets no ``environment.cases_digest``, a hash of every case's inputs, the hidden ones
      included (an offline oracle for guesses at hidden inputs).
    """
    env = report.environment
    if check_audience(audience) == INSTRUCTOR:
        return report
    secret = env.get("seed_source") == "secret"
    renamed = secret and env.get("seed") != "secret"
    if not secret and "cases_digest" not in env and not isinstance(env.get("assignment"), dict):
        return report
    cases = []
    for c in report.cases:
        if renamed and c.replay_facts is not None:
            # a case whose inputs the seed does not choose (a literal of the spec) is the same case
            # under any seed: its command without --seed replays it; the others get the note
            again = c.replay_facts.without_seed()
            c = dataclasses.replace(c, replay=None, replay_facts=again, replay_note=None if again else SECRET_REPLAY_NOTE)
        elif renamed and c.replay:   # an older report's words: whether they name the seed is not a fact here
            c = dataclasses.replace(c, replay=None, replay_note=SECRET_REPLAY_NOTE)
        cases.append(without_expected(c) if secret and c.seeded else c)
    env = {k: v for k, v in env.items() if k != "cases_digest"}
    parts = (env.get("assignment") or {}).get("problems") if isinstance(env.get("assignment"), dict) else None
    if isinstance(parts, list):     # an assignment's parts carry theirs too (a hidden part's hashes its inputs)
        env["assignment"] = {**env["assignment"], "problems": [
            {k: v for k, v in p.items() if k != "cases_digest"} if isinstance(p, dict) else p for p in parts]}
    return dataclasses.replace(report, cases=cases, environment={**env, "seed": "secret"} if renamed else env)


#: what a failure's ``data`` holds of the expected output: itself, or what gives it back with the
#: submission's own value (the error, its ratio to the known allowance, the per-block ratios)
_EXPECTED_DATA = ("expected", "error", "ratio", "grid", "values", "allowed", "scale")
#: detail-line fragments that carry a number derived from the expected values: an output's
#: margin (error over allowance: with the output's ``got`` and ``allowed`` it gave the expected
#: value exactly, round twenty-two) and the scale ``S`` (the reference on |inputs|: the expected
#: value itself where the inputs are >= 0)
_MARGIN_WORDS = re.compile(r"\s*\([^()]*of the allowance\)")
_SCALE_WORDS = "scaled by S ="
#: the line that stands for the detail lines left out of a seeded case
WITHHELD_EXPECTED = ("expected values are withheld: this case's inputs come from the instructor's secret seed "
                     "(fixed cases show theirs)")


#: what a seeded case's hint says instead when the hint names a value of the output
WITHHELD_HINT = ("a hint naming values of the expected output is withheld: this case's inputs come from the "
                 "instructor's secret seed (the fixed cases' hints name theirs)")


def _names_values(params: Any) -> bool:
    """Whether a hint's parameters hold a float (a factor, an offset: with the submission's own
    output it gives the expected one back); sizes, dtypes and names do not."""
    if isinstance(params, float):
        return True
    if isinstance(params, dict):
        return any(_names_values(v) for v in params.values())
    if isinstance(params, (list, tuple)):
        return any(_names_values(v) for v in params)
    return False


def _from_sizes(params: Any) -> bool:
    """Whether a hint's only value is a factor it names as an expression of the inputs' sizes
    (1/sqrt(d_model), a count of an axis): the learner computes it from the inputs shown, so it
    gives no expected value away (an instructor's trial: under a secret the 1/sqrt(d_model) hint
    of 25 cases was withheld and the learner read only "a hint ... is withheld")."""
    return isinstance(params, dict) and bool(params.get("named") or (params.get("where") and "n" in params)) \
        and not _names_values({k: v for k, v in params.items() if k != "factor"})


def without_expected(case: CaseResult) -> CaseResult:
    """``case`` without its expected values: ``values["expected"]``, the failure's detail lines
    that name an expected value or the scale ``S``, the margins written in the others, the
    expected-derived ``data`` fields (:data:`_EXPECTED_DATA`: the allowance and ``S`` too), each
    output's ``margin``, the case's ``margin``, and a hint whose parameters hold a value (a factor of 0.1491 applied to a
    returned 1.0 names the expected 6.707: :data:`WITHHELD_HINT`) unless that value is a factor
    named from the inputs' sizes (:func:`_from_sizes`). Inputs, the submission's output, the
    kind, the message and the other hints stay."""
    values = {k: v for k, v in case.values.items() if k != "expected"} if case.values else case.values
    failure = case.failure
    if failure is not None:
        details = [_MARGIN_WORDS.sub("", d) for d in failure.details
                   if "expected" not in d.lower() and _SCALE_WORDS not in d]
        if len(details) < len(failure.details):
            details.insert(0, WITHHELD_EXPECTED)
        data = {k: v for k, v in failure.data.items() if k not in _EXPECTED_DATA}
        if isinstance(data.get("outputs"), dict):   # each output's kind and whether it is right; no margin
            data["outputs"] = {name: {k: v for k, v in out.items() if k != "margin"} if isinstance(out, dict) else out
                               for name, out in data["outputs"].items()}
        hint = failure.hint
        params = failure.data.get("hint_params")
        if hint and _names_values(params) and not _from_sizes(params):
            hint = WITHHELD_HINT
            data.pop("hint_params", None)
        failure = dataclasses.replace(failure, details=details, data=data, hint=hint)
    return dataclasses.replace(case, values=values, failure=failure, margin=None)


def conceals(case: CaseResult, audience: str) -> bool:
    """True when ``case`` may only be shown as a count to ``audience``."""
    return check_audience(audience) == LEARNER and case.visibility == "hidden"


def split_cases(cases: list[CaseResult], audience: str) -> tuple[list[CaseResult], list[CaseResult]]:
    """Split ``cases`` into (shown, concealed), keeping run order; concealed is empty for instructors."""
    shown = [c for c in cases if not conceals(c, audience)]
    return shown, [c for c in cases if conceals(c, audience)]


@dataclass
class HiddenTally:
    """What a learner may know of the concealed cases of one group: ``passed`` of ``total``.

    Nothing else (security round four, class 3): a submission that picks one of eight outcomes
    per hidden call (pass, tolerance, shape, dtype, type, non-finite, exception, memory) read 3
    bits of a hidden input per call from per-case statuses and kinds; a count of passes per group
    carries only what the score already says. No status breakdown, no timing, no order.
    """

    group: str
    total: int = 0
    passed: int = 0

    @property
    def text(self) -> str:
        """One line, e.g. ``"hidden cases: 12 of 14 passed"``; names no case."""
        return f"hidden cases: {self.passed} of {self.total} passed"

    @property
    def status(self) -> str:
        """``passed`` when every concealed case passed, else ``failed`` (never which way)."""
        return "passed" if self.passed == self.total else "failed"

    @property
    def seconds(self) -> float:
        """Always 0.0: the time of hidden calls is a channel a submission controls."""
        return 0.0


def hidden_tallies(concealed: list[CaseResult]) -> list[HiddenTally]:
    """One :class:`HiddenTally` per group of ``concealed`` cases, in order of first appearance."""
    tallies: dict[str, HiddenTally] = {}
    for case in concealed:
        t = tallies.setdefault(case.group, HiddenTally(case.group))
        t.total += 1
        t.passed += case.status == "passed"
    return list(tallies.values())


def kind(case: CaseResult) -> str:
    """The failure kind of a case that did not pass (its status when it has no Failure record)."""
    return case.failure.kind if case.failure else case.status


def one_line(case: CaseResult) -> str:
    """``"name: kind: message"`` for a case that did not pass, ``"name: passed"`` otherwise."""
    if case.status == "passed":
        return f"{case.name}: passed"
    message = case.failure.message if case.failure else case.status
    return f"{case.name}: {kind(case)}: {message}"


def failure_lines(failure: Failure, max_details: int | None = None) -> list[str]:
    """Message, ``hint:`` line and up to ``max_details`` detail lines (all when None) of a Failure."""
    lines = [failure.message] + ([f"hint: {failure.hint}"] if failure.hint else [])
    shown = failure.shown_details
    details = shown if max_details is None else shown[:max_details]
    lines += details
    if max_details is not None and len(shown) > max_details:
        lines.append(f"... {len(shown) - max_details} more lines")
    return lines


def scalar_text(name: str, info: object, values: dict | None) -> str:
    """A 0-d input for people: ``axis = -1`` (from the case's values, or a scalar parameter's
    :attr:`~grader.results.ArrayInfo.value`), or ``axis (int64 scalar)`` when the report has no
    value for it."""
    value = (values or {}).get(name)
    if value is None or isinstance(value, (list, dict)):
        value = getattr(info, "value", None)   # a scalar parameter's value, kept whatever the case's size
    if value is not None and not isinstance(value, (list, dict)):
        return f"{name} = {value}"
    return f"{name} ({getattr(info, 'dtype', '')} scalar)"


def case_text(case: CaseResult, max_details: int | None = 20) -> str:
    """Multi-line explanation of one case: failure lines, input shapes/dtypes, replay command."""
    lines = failure_lines(case.failure, max_details) if case.failure else [case.status]
    if case.inputs:
        shapes = ", ".join(scalar_text(k, v, case.values) if tuple(v.shape) == () else f"{k}: {v.dtype}{list(v.shape)}"
                           for k, v in case.inputs.items())
        lines.append(f"inputs: {shapes}")
    if case.replay:
        lines.append(f"replay: {case.replay}")
    elif case.replay_note:
        lines.append(f"replay: none ({case.replay_note})")
    return "\n".join(lines)


def kind_counts(cases: list[CaseResult]) -> Counter:
    """Failure kind -> number of cases that did not pass (skipped cases excluded)."""
    return Counter(kind(c) for c in cases if c.status not in ("passed", "skipped"))


def group_names(report: Report) -> list[str]:
    """Group names: those of ``report.groups`` first, then any other group a case names."""
    names = [g.group for g in report.groups]
    return names + list(dict.fromkeys(c.group for c in report.cases if c.group not in names))


@dataclass
class GroupView:
    """What ``audience`` may see of one case group.

    Attributes:
        group: the group name.
        points, earned: points available and earned (0 when ``report.groups`` lacks the group).
        passed, total: cases passed and run, hidden ones included (counts are never concealed).
        hidden: the group's visibility is ``"hidden"``.
        failing: the shown cases that did not pass, in run order.
        tallies: counts of the concealed cases (learners only).
    """

    group: str
    points: float
    earned: float
    passed: int
    total: int
    hidden: bool
    failing: list[CaseResult]
    tallies: list[HiddenTally]

    @property
    def ok(self) -> bool:
        """Every case passed and every point was earned (up to the float noise of points scaled
        by an assignment: 1.2 earned of 1.2000000000000002 is every point)."""
        return self.passed == self.total and self.earned >= self.points - 1e-9 * max(1.0, abs(self.points))

    def lines(self, max_cases: int, max_details: int | None = 5) -> list[str]:
        """Counts line, then up to ``max_cases`` failing cases (name line + indented text), then tallies."""
        out = [f"{self.passed} of {self.total} cases passed "
               f"({points(self.earned)} of {points(self.points)} points)"]
        for case in self.failing[:max_cases]:
            out.append(f"- {case.name}" if case.name.endswith(f"[{case.dtype}]") else f"- {case.name} [{case.dtype}]")
            out += ["    " + line for line in case_text(case, max_details).splitlines()]
        if len(self.failing) > max_cases:
            out.append(f"... and {len(self.failing) - max_cases} more failing cases")
        return out + [t.text for t in self.tallies]


def group_views(report: Report, audience: str) -> list[GroupView]:
    """One :class:`GroupView` per group of :func:`group_names`, in that order (replay commands
    as :func:`for_audience` allows)."""
    report = for_audience(report, audience)
    views = []
    for name in group_names(report):
        score = next((g for g in report.groups if g.group == name), None)
        cases = [c for c in report.cases if c.group == name]
        shown, concealed = split_cases(cases, audience)
        views.append(GroupView(
            name, score.points if score else 0.0, score.earned if score else 0.0,
            sum(c.status == "passed" for c in cases), len(cases),
            score.visibility == "hidden" if score else any(c.visibility == "hidden" for c in cases),
            [c for c in shown if c.status != "passed"], hidden_tallies(concealed)))
    return views


def may_show_output(report: Report, audience: str) -> bool:
    """True when the submission's captured stdout/stderr may be shown to ``audience``.

    The capture spans every case, so a submission printing its arguments would reveal hidden
    inputs: learners get it only when the report has no hidden case.
    """
    return check_audience(audience) == INSTRUCTOR or all(c.visibility != "hidden" for c in report.cases)


def points(x: float) -> str:
    """Points for display: ``2`` rather than ``2.0``, at most 4 decimals (``1.3333``)."""
    return f"{round(x, 4):g}"


#: failure kinds an example explains through its values: for these even a shrunk case of all
#: zeros is put after the others (a heat map of zeros against zeros says little); for the others
#: (an exception, a shape, a dtype...) the values do not matter and the shrunk case leads
VALUE_KINDS = ("tolerance", "non_finite")
#: failure kinds whose telling case often has an axis of size 0 or 1 (a forgotten keepdims
#: returns (4, 4) for x of shape (4, 1)): such a case is not put after the others for it. A
#: learner's trial found that case 13th, behind cases of 60 and 65 elements.
AXIS_KINDS = ("shape",)


def all_zero(values: dict[str, Any] | None, names: Any) -> bool:
    """Whether a case's inputs ``names`` all have values in ``values`` (the report's nested
    lists) and every one of them is zero (:func:`example_order`'s ``all_zero``)."""
    def flat(v: Any) -> list[Any]:
        return [x for item in v for x in flat(item)] if isinstance(v, list) else [v]
    arrays = [(values or {}).get(name) for name in names]
    return bool(arrays) and all(a is not None for a in arrays) and all(not any(flat(a)) for a in arrays)


#: the case group of the statement's worked example (every bundled problem's, docs/authoring.md)
EXAMPLES_GROUP = "examples"


def example_order(kind: str, shrunk: bool, shapes: list[tuple[int, ...]], all_zero: bool,
                  name: str, group: str = "") -> tuple[Any, ...]:
    """The sort key of a failing case among the examples a report shows (the text report and the
    feedback page alike): a :data:`LATE_KINDS` failure last; a degenerate case after the others
    (an input with an axis of size 0 or 1, or all-zero inputs: a 1x1 zero case explains less
    than the worked example), except a shrunk case (the smallest failing input hypothesis found,
    zeros wherever the values do not matter: the most telling example; for its zeros only of a
    :data:`VALUE_KINDS` failure) and, for its axes, a :data:`AXIS_KINDS` failure; then the fewest input elements first, a shrunk case before the
    case of its size it came from, then by name. A case of the :data:`EXAMPLES_GROUP` (the
    statement's worked example, which the learner has read) is never degenerate: conv1d's
    example, a batch of one signal of one channel, came after three larger generated cases under
    a heading that says "smallest first" (a newcomer's finding).

    Args:
        kind: the failure kind (or the case's status when it has no failure).
        shrunk: whether the case is a shrunk one (extra feedback).
        shapes: the shapes of its inputs (a scalar parameter: ``()``).
        all_zero: whether every input's values are known and all zero.
        name: the case's name.
        group: the case's group.
    """
    size = 0
    degenerate_shape = False
    for shape in shapes:
        n = 1
        for extent in shape:
            n *= int(extent)
        size += n
        degenerate_shape = degenerate_shape or n <= 1 or 0 in shape or 1 in shape
    degenerate = group != EXAMPLES_GROUP and ((degenerate_shape and not shrunk and kind not in AXIS_KINDS)
                                              or (all_zero and (not shrunk or kind in VALUE_KINDS)))
    return (kind in LATE_KINDS, degenerate, size, not shrunk, name)


def entry_key(name: str, kind: str, message: str) -> tuple[str, str]:
    """Which entry of a report's failing cases a failing case belongs to (the text report and the
    feedback page list one per entry, and count them alike): the same case in every dtype, a
    case shrunk by hypothesis with the case it was shrunk from (extra feedback, shown first), and
    every case failing with the same message for a failure of the run (``RUN_KINDS``: one
    exception, timeout or crash seen in 27 cases is one entry). A learner's class feedback said
    "5 of 29 shown" in the .txt and "5 of 27" in the .html."""
    from grader.results import RUN_KINDS
    if kind in RUN_KINDS:
        return message, kind
    return name.split("[")[0].removeprefix("shrunk:"), kind


def pick_examples(entries: list[Any], most: int, hint_of: Any, kind_of: Any) -> tuple[list[Any], bool]:
    """The ``most`` of ``entries`` (in :func:`example_order`) a report shows, and whether any was
    chosen out of that order: the first entry of each hint id, then the first of each failure
    kind not yet shown, then the others in order, cases held back (``unearned``) last unless
    there are only those; shown in their order. A masked_mean_pool
    learner who divided by the count and summed in float16 saw five NaN cases and never the
    float16 overflow's hint, which only two large cases carried; a layer_norm learner saw five
    cases of one exception and not the shape failure of the one case with d_model 1.

    Args:
        entries: the candidate examples, best first.
        most: how many to show.
        hint_of: entry -> its hint id, or None.
        kind_of: entry -> its failure kind.
    """
    if len(entries) <= most:
        return entries, False
    hints: set[str] = set()
    kinds: set[str] = set()
    first, second, rest = [], [], []
    # a case held back until the values are right (``unearned``) comes after every case of a real
    # failure: the summary's line says it, and its card took one of five places from the mistake
    # (a newcomer's trial: "unearned" beside every wrong report's one real mistake)
    held = [e for e in entries if kind_of(e) == "unearned"]
    if len(held) == len(entries):
        held = []
    for entry in entries:
        if held and kind_of(entry) == "unearned":
            continue
        hint, kind = hint_of(entry), kind_of(entry)
        if hint is not None and hint not in hints:
            first.append(entry)
        elif kind not in kinds:
            second.append(entry)
        else:
            rest.append(entry)
        if hint is not None:
            hints.add(hint)
        kinds.add(kind)
    chosen = {id(e) for e in (first + second + rest + held)[:most]}
    shown = [e for e in entries if id(e) in chosen]
    return shown, shown != entries[:most]


def compact_value(value: object, limit: int | None = 200) -> str:
    """A case's value (nested lists of numbers and booleans, as the JSON report holds them) as
    Python writes it, which the learner's own prints match: ``True``, ``nan``, ``-inf`` (a trial
    read ``mask = [true]`` and ``-Infinity``, JSON's words); cut at ``limit`` characters. A
    report read back from JSON holds non-finite numbers as the strings ``"nan"``, ``"inf"`` and
    ``"-inf"`` (strict JSON has none): they read as the numbers (a helper read ``['nan', 'nan']``
    in a class's feedback)."""
    text = repr(_numbers(value))
    return text if limit is None or len(text) <= limit else text[: limit - 3] + "..."


_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _numbers(value: object) -> object:
    """``value`` with the JSON report's non-finite strings as floats, lists item by item."""
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    if isinstance(value, str) and value in _NON_FINITE:
        return _NON_FINITE[value]
    return value
