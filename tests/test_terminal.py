"""The text report at a terminal (issue 12, item 5): colour on a TTY only (NO_COLOR, FORCE_COLOR,
--output), lines fitted to the width without breaking replay commands or tracebacks, -q and -v,
and learner-controlled controls still made visible. In process, with fake streams."""
from __future__ import annotations

import io
import json
import re

import pytest

from grader import cli
from grader.reports import text
from grader.results import ArrayInfo, CaseResult, Failure, Frame, GroupScore, Report

from .conftest import SUBMISSIONS

#: run_grader runs grader.cli.main in this process (tests/conftest.py): these tests read the
#: CLI's findings, exit codes and reports; each submission still runs in its sandboxed child
pytestmark = pytest.mark.cli_in_process

SGR = re.compile(r"\x1b\[[0-9;]*m")
LONG_HINT = ("looks like softmax was applied to the logits: return the raw logits (softmax belongs to the loss "
             "or to sampling), and compare the two on the worked example before submitting again")
REPLAY = "grader check submissions/very/long/path/to/the/learner/solution.py --problem tied_lm_head --case 'batch[float32]'"
#: a raise 30 frames deep, as facts (the report words it: grader.words.places)
TRACE = ([Frame(ref="submission", file="sub.py", line=i, function=f"f{i}") for i in range(1, 30)],
         "ValueError: boom " + "x" * 90)


class Tty(io.StringIO):
    """A stdout that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def case(name, *, message="48 / 48 elements (100.0%) are outside the tolerance", hint=LONG_HINT, trace=None,
         kind="tolerance", dtype="float32"):
    failure = Failure(kind=kind, message=message, hint=hint, frames=trace[0] if trace else [],
                      exception=trace[1] if trace else "")
    return CaseResult(name=f"{name}[{dtype}]", group="shapes", status="failed", dtype=dtype, rank=2,
                      inputs={"hidden": ArrayInfo(shape=(4, 8), dtype=dtype),
                              "embedding_matrix": ArrayInfo(shape=(12, 8), dtype=dtype)},
                      visibility="visible", failure=failure, replay=REPLAY)


def report(cases, *, passed=False, stdout=""):
    return Report(problem="tied_lm_head", title="Tied LM head", submission="sub.py", passed=passed,
                  score=10.0 if passed else 0.0, max_score=10.0, failure=None, cases=cases,
                  groups=[GroupScore(group="shapes", points=10, earned=10.0 if passed else 0.0, passed=0, total=len(cases))], summary=[],
                  environment={"seed": 0, "framework": "numpy", "dtypes": ["float32"], "sandbox": "bwrap"},
                  output={"stdout": stdout, "stderr": ""}, seconds=1.0)


# -- when colour is used ---------------------------------------------------------------------------
@pytest.mark.parametrize("stream,env,expected", [
    (Tty(), {}, True),
    (io.StringIO(), {}, False),                              # a pipe or a CI log: none by default
    (io.StringIO(), {"FORCE_COLOR": "1"}, True),             # forced into a pipe
    (Tty(), {"NO_COLOR": "1"}, False),                       # any non-empty value
    (Tty(), {"NO_COLOR": ""}, True),                         # an empty one counts as unset
    (Tty(), {"NO_COLOR": "1", "FORCE_COLOR": "1"}, False),   # NO_COLOR wins
    (io.StringIO(), {"FORCE_COLOR": ""}, False),
    (Tty(), {"TERM": "dumb"}, False),
    (None, {"FORCE_COLOR": "1"}, False),                     # --output FILE: never
])
def test_color_wanted(stream, env, expected):
    assert text.color_wanted(stream, env) is expected


def test_colour_marks_the_verdict_kind_and_hint_and_nothing_else_changes():
    rep = report([case("batch")])
    plain, coloured = text.render(rep), text.render(rep, color=True)
    assert SGR.sub("", coloured) == plain
    assert coloured.startswith("\x1b[1;31mFAIL\x1b[0m tied_lm_head")
    assert "\x1b[31mtolerance\x1b[0m: 48 / 48" in coloured and "\x1b[36mhint\x1b[0m: looks like" in coloured
    passing = report([], passed=True)
    assert text.render(passing, color=True).startswith("\x1b[1;32mPASS\x1b[0m")


def test_learner_controls_stay_visible_escapes_with_colour_and_wrapping():
    """ESC, CR, C1 and bidi characters from the learner (message, output, file name) are escaped
    before colour is added: the only SGR sequences are the report's own."""
    evil = "\x1b[2J\x1b]0;owned\x07\rgot \u202e\x9b31m"
    rep = report([case("batch", message=f"ValueError: {evil}", hint=None)], stdout=f"print {evil}\n")
    rep.submission = f"sub{evil}.py"
    out = text.render(rep, audience="instructor", color=True, width=50, verbosity=text.VERBOSE)
    without_ours = SGR.sub("", out)
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", without_ours)
    assert "\\x1b[2J" in without_ours and "\\u202e" in without_ours and "\\r" in without_ours
    assert set(re.findall(r"\x1b\[([0-9;]*)m", out)) <= {"0", "1", "1;31", "31", "36", "2", "33", "1;32"}


# -- width -----------------------------------------------------------------------------------------
def test_prose_is_wrapped_to_the_width_and_commands_are_never_broken():
    rep = report([case("batch", trace=TRACE)])
    out = text.render(rep, width=60)
    lines = out.splitlines()
    long_lines = [line for line in lines if len(line) > 60]
    # only what must stay whole is longer: the replay command and the traceback's last line
    assert all(line.strip().startswith(("replay: ", "ValueError: boom")) for line in long_lines), long_lines
    assert f"    replay: {REPLAY}" in lines
    hint = [i for i, line in enumerate(lines) if line.startswith("    hint: ")]
    assert hint and lines[hint[0] + 1].startswith(" " * 10) and not lines[hint[0] + 1].startswith(" " * 11)
    # the wrapped hint is the same words
    joined = " ".join(line.strip() for line in lines[hint[0]:hint[0] + 4])
    assert "hint: " + LONG_HINT in joined
    assert text.render(rep, width=None) == text.render(rep)  # not a terminal: lines as they are


def test_the_submissions_output_is_cut_to_the_width():
    rep = report([case("batch")], stdout="y" * 300 + "\n")
    line = next(x for x in text.render(rep, audience="instructor", width=50).splitlines() if x.startswith("  | "))
    assert len(line) == 50 and line.endswith("...")


def test_terminal_width_only_for_a_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "71")
    assert text.terminal_width(Tty()) == 71 and text.terminal_width(io.StringIO()) is None
    assert text.terminal_width(None) is None
    monkeypatch.setenv("COLUMNS", "10")
    assert text.terminal_width(Tty()) == text.MIN_WIDTH


# -- -q and -v -------------------------------------------------------------------------------------
def test_quiet_is_the_verdict_and_the_failing_case_names():
    cases = [case(f"c{i}", dtype=dt) for i in range(7) for dt in ("float16", "float32")]
    out = text.render(report(cases), verbosity=text.QUIET)
    lines = out.splitlines()
    assert lines[0].startswith("FAIL tied_lm_head: score 0 / 10") and len(lines) == 2
    assert lines[1] == "failing: " + ", ".join(f"c{i}[float16, float32]" for i in range(7))
    assert "hint" not in out and "replay" not in out


def test_verbose_shows_every_failing_case_and_the_whole_traceback():
    cases = [case(f"c{i}", trace=TRACE) for i in range(8)]
    normal, verbose = text.render(report(cases)), text.render(report(cases), verbosity=text.VERBOSE)
    assert sum(line.startswith("x ") for line in normal.splitlines()) == text.MAX_CASES
    assert sum(line.startswith("x ") for line in verbose.splitlines()) == 8
    assert "line 29, in f29" not in normal and "(the same traceback as" in normal
    assert verbose.count("line 29, in f29") == 8 and "(the same traceback as" not in verbose


# -- through the CLI, in process -------------------------------------------------------------------
FAST = ["--max-examples", "2", "--no-shrink"]
WRONG = str(SUBMISSIONS / "wrong_tolerance_softmax.py")


def run_cli(monkeypatch, argv, *, tty=True, env=None):
    for name in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)
    for name, value in (env or {}).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("COLUMNS", "72")
    out = Tty() if tty else io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    code = cli.main(argv)
    return code, out.getvalue()


def test_check_on_a_terminal_is_coloured_and_fitted(monkeypatch, tmp_path):
    # In a deep folder, so the path is longer than the width wherever the suite is checked out
    # (CI's checkout, /check/work/main, once made the path alone 74 columns wide).
    deep = tmp_path / "course-2026" / "week-03-tied-embeddings" / "submissions"
    deep.mkdir(parents=True)
    wrong = deep / "wrong_tolerance_softmax.py"
    wrong.write_text((SUBMISSIONS / "wrong_tolerance_softmax.py").read_text())
    code, out = run_cli(monkeypatch, ["check", str(wrong), *FAST])
    assert code == 1 and out.startswith("\x1b[1;31mFAIL\x1b[0m tied_lm_head")
    lines = SGR.sub("", out).splitlines()
    for line in lines:
        # Over the width only: replay commands and values (never broken), and a single word no break
        # can shorten, such as the submission's path.
        assert len(line) <= 72 or len(line.split()) == 1 or line.lstrip().startswith(
            ("replay: ", "hidden = ", "embedding_matrix = ", "expected = ", "got = ")), line
    assert len(str(wrong)) > 72 and any(line.strip() == str(wrong) for line in lines[:2])  # whole, on its own line


@pytest.mark.parametrize("env,tty,coloured", [({}, False, False), ({"NO_COLOR": "1"}, True, False),
                                              ({"FORCE_COLOR": "1"}, False, True)])
def test_check_colour_follows_the_environment(monkeypatch, env, tty, coloured):
    code, out = run_cli(monkeypatch, ["check", WRONG, "-q", *FAST], tty=tty, env=env)
    assert code == 1 and bool(SGR.search(out)) is coloured
    plain = SGR.sub("", out)  # -q: the verdict and the failing names (wrapped on a terminal)
    assert plain.startswith("FAIL tied_lm_head: score ") and "\nfailing: worked_example[" in plain
    assert "hint" not in plain and "replay" not in plain


def test_machine_output_and_files_never_get_colour(monkeypatch, tmp_path):
    code, out = run_cli(monkeypatch, ["check", WRONG, "--format", "json", "-v", *FAST], env={"FORCE_COLOR": "1"})
    assert code == 1 and "\x1b" not in out and json.loads(out)["passed"] is False
    target = tmp_path / "report.txt"
    code, out = run_cli(monkeypatch, ["check", WRONG, "--output", str(target), *FAST], env={"FORCE_COLOR": "1"})
    assert code == 1 and out == "" and "\x1b" not in target.read_text()
    assert target.read_text().startswith("FAIL tied_lm_head")


def test_quiet_and_verbose_together_is_a_usage_error(monkeypatch, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["check", WRONG, "-q", "-v"])
    assert exc.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


def test_grade_quiet_and_verbose(tmp_path):
    """grade -q: no progress lines on stderr (notes and errors only), the tally on stdout; grade -v:
    each learner's verdict and failing cases after the tally. Never colour into a pipe."""
    from .conftest import run_grader

    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "bob.py").write_text((SUBMISSIONS / "wrong_tolerance_softmax.py").read_text())
    quiet = run_grader("grade", "class", "--problem", "tied_lm_head", "--out", "q", "-q", *FAST, cwd=tmp_path)
    assert quiet.code == 1 and quiet.stderr == "", quiet.stderr
    assert quiet.stdout.startswith("graded 1 submission:") and len(quiet.stdout.splitlines()) == 1
    loud = run_grader("grade", "class", "--problem", "tied_lm_head", "--out", "v", "-v", *FAST, cwd=tmp_path)
    assert loud.code == 1 and "[1/1] class: failed tolerance" in loud.stderr  # a folder of one file is one learner
    lines = loud.stdout.splitlines()
    assert lines[0].startswith("graded 1 submission:") and lines[1].startswith("FAIL tied_lm_head: score 0 / 10")
    assert lines[2].startswith("failing: worked_example[") and "\x1b" not in loud.stdout
