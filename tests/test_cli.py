"""The CLI as learners and CI use it: exit codes, one-line errors, every failure kind, the JSON contract."""
from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor

import pytest

from .conftest import ROOT, SUBMISSIONS, run_grader

#: run_grader runs grader.cli.main in this process (its findings, exit codes and reports); the tests
#: of a real process (fd 1, python -m grader) are marked subprocess
pytestmark = pytest.mark.cli_in_process

FAST = ["--max-examples", "4", "--timeout", "3", "--no-shrink"]


# -- the grader could not run: exit 2 and one line on stderr, nothing on stdout ------------------
def _bad_calls(tmp_path):
    (tmp_path / "notutf8.py").write_bytes(b"\xff\xfe def f(:\n")
    (tmp_path / "adir").mkdir()
    probs = tmp_path / "problems"
    probs.mkdir()
    shutil.copytree(ROOT / "reference", tmp_path / "reference")
    (probs / "tied_lm_head.yaml").write_text(
        (ROOT / "problems" / "tied_lm_head.yaml").read_text().replace("model: sum_of_products", "model: ulp"))
    ok = str(SUBMISSIONS / "correct_numpy.py")
    return [
        (["check", "missing.py"], "submission 'missing.py' does not exist"),
        (["check", str(tmp_path / "adir")], "is a directory"),
        (["check", ok, "--problem", "nosuch"], "unknown problem 'nosuch'"),
        (["check", ok, "--problems-dir", str(probs)], "tolerance.model: 'ulp' is not one of"),
        (["check", ok, "--format", "xml"], "invalid choice: 'xml'"),
        (["check", ok, "--timeout", "0"], "must be greater than 0"),
        (["check", ok, "--seed", "-1"], "must be 0 or more"),
        (["check", ok, "--case", "nosuch[float32]"], "--case: no case named nosuch[float32]"),
        # a newcomer's: a typo gets the likeliest name, a dtype not graded says so (not --max-examples)
        (["check", ok, "--case", "bach"], "--case: no case named bach; did you mean batch?"),
        (["check", ok, "--case", "batch[bfloat16]"], "bfloat16 is not graded for this submission"),
        (["check", ok, "--replay", "{not json"], "--replay is not JSON"),
        (["check", ok, "--replay", '{"dtype": "bfloat16", "hidden": [1], "embedding_matrix": [[1]]}'],
         "dtype bfloat16 is not graded for numpy"),
        (["check", ok, "--output", "/proc/nope/report.json"], "cannot write --output"),
        (["check"], "the following arguments are required: SUBMISSION"),
        (["bogus"], "invalid choice: 'bogus'"),
    ]


def test_bad_input_exits_2_with_one_line(tmp_path):
    calls = _bad_calls(tmp_path)
    with ThreadPoolExecutor(4) as pool:
        runs = list(pool.map(lambda c: run_grader(*c[0]), calls))
    for (args, words), run in zip(calls, runs):
        assert run.code == 2, (args, run.code, run.stderr)
        errors = [line for line in run.stderr.splitlines() if line.startswith("grader: error:")]
        assert len(errors) == 1, (args, run.stderr)
        assert words in errors[0], (args, errors[0])
        assert "Traceback" not in run.stderr
        assert run.stdout == "", (args, run.stdout)


# -- every failure kind, through the CLI, from the example submissions ---------------------------
KINDS = {
    "correct_numpy.py": None,
    "correct_jax.py": None,
    "wrong_tolerance_softmax.py": "tolerance",
    "wrong_shape_atleast_2d.py": "shape",
    "wrong_dtype_float32.py": "dtype",
    "wrong_type_list.py": "type",
    "wrong_non_finite_log.py": "non_finite",
    "wrong_mutation.py": "mutation",
    "wrong_exception_stub.py": "exception",
    "wrong_timeout_loop.py": "timeout",
    "wrong_crash_abort.py": "crash",
    "wrong_memory_hog.py": "memory",
    "wrong_import_syntax.py": "import",
    "wrong_import_missing_function.py": "import",
}


@pytest.fixture(scope="module")
def kind_runs():
    # the correct examples get the run a learner gets (default seed and case count, shrinking on):
    # a shortened run once hid that every correct JAX file failed on a fresh install
    with ThreadPoolExecutor(3) as pool:
        runs = dict(zip(KINDS, pool.map(
            lambda name: run_grader("check", str(SUBMISSIONS / name), "--problem", "tied_lm_head", "--format", "json",
                                    *(() if KINDS[name] is None else FAST)), KINDS)))
    return runs


@pytest.mark.parametrize("name", list(KINDS))
def test_failure_kind_through_cli(kind_runs, name):
    run = kind_runs[name]
    want = KINDS[name]
    report = run.json()  # stdout is exactly one JSON document
    assert run.code == (0 if want is None else 1), run.stderr
    assert report["passed"] is (want is None)
    kinds = [report["failure"]["kind"]] if report["failure"] else []
    kinds += [c["failure"]["kind"] for c in report["cases"] if c["failure"]]
    if want is None:
        assert kinds == []
        assert report["score"] == report["max_score"] > 0
        env = report["environment"]
        assert env["seed"] == 0 and env["max_examples"] == 36 and not env.get("partial")
        assert len(report["cases"]) == 17 * len(env["dtypes"]) + 2 * len(env["dtypes"]) + 36
    else:
        assert kinds and kinds[0] == want, kinds
        assert report["score"] < report["max_score"]


def test_import_failures_name_the_line_and_the_function(kind_runs):
    syntax = kind_runs["wrong_import_syntax.py"].json()["failure"]
    assert syntax["kind"] == "import"
    assert syntax["message"].startswith("SyntaxError: expected ':'")
    assert "wrong_import_syntax.py:5" in syntax["message"]
    missing = kind_runs["wrong_import_missing_function.py"].json()["failure"]
    assert missing["message"] == "the submission defines no function 'tied_lm_head' (it defines: lm_head)"


def test_exception_shows_the_learners_traceback_only(kind_runs):
    case = next(c for c in kind_runs["wrong_exception_stub.py"].json()["cases"] if c["failure"])
    assert case["failure"]["message"] == "NotImplementedError: write your solution here"
    trace = case["failure"]["traceback"]
    assert 'File "' in trace and "wrong_exception_stub.py" in trace and "_child.py" not in trace
    assert {f["ref"] for f in case["failure"]["frames"]} == {"submission"}


def test_timeout_stops_the_run_and_skips_the_rest(kind_runs):
    cases = kind_runs["wrong_timeout_loop.py"].json()["cases"]
    assert cases[0]["status"] == "timeout"
    assert cases[0]["failure"]["message"] == "the call used more than 3 s of CPU time and was stopped"
    assert {c["status"] for c in cases[1:]} == {"skipped"}


# -- the JSON contract -------------------------------------------------------------------------
def test_json_contract_of_a_failing_report(kind_runs):
    report = kind_runs["wrong_tolerance_softmax.py"].json()
    for key in ("problem", "submission", "passed", "score", "max_score", "failure", "cases", "environment"):
        assert key in report
    assert report["problem"] == "tied_lm_head"
    assert report["submission"].endswith("wrong_tolerance_softmax.py")
    assert report["failure"] is None
    env = report["environment"]
    for key in ("seed", "framework", "python", "numpy", "jax", "grader", "sandbox", "dtypes"):
        assert key in env
    assert env["framework"] == "numpy" and env["seed"] == 0
    assert env["dtypes"] == ["float16", "float32", "float64"]
    case = next(c for c in report["cases"] if c["status"] == "failed")
    assert set(case) >= {"name", "group", "status", "inputs", "failure"}
    assert set(case["inputs"]) == {"hidden", "embedding_matrix"}
    assert set(case["inputs"]["hidden"]) == {"shape", "dtype"}
    assert set(case["failure"]) >= {"kind", "message", "hint"}
    assert {c["status"] for c in report["cases"]} <= {"passed", "failed", "error", "timeout", "skipped"}


def test_default_run_has_50_cases_every_dtype_and_ranks_1_to_3():
    run = run_grader("check", str(SUBMISSIONS / "correct_numpy.py"), "--format", "json")
    report = run.json()
    assert run.code == 0 and report["passed"]
    cases = report["cases"]
    assert len(cases) >= 50
    assert {c["dtype"] for c in cases} == {"float16", "float32", "float64"}
    assert {1, 2, 3} <= {c["rank"] for c in cases}
    groups = {c["group"] for c in cases}
    assert "generated" in groups and "examples" in groups


@pytest.mark.subprocess  # the child's prints against the grader's file descriptor 1
def test_learner_prints_never_reach_stdout(tmp_path):
    noisy = tmp_path / "noisy.py"
    noisy.write_text('import numpy as np\nprint("{\\"passed\\": true}")\n\n'
                     'def tied_lm_head(h, e):\n    print("hello from the learner")\n    return h @ e.T\n')
    run = run_grader("check", str(noisy), "--format", "json", *FAST)
    report = run.json()
    assert run.code == 0
    assert "hello from the learner" in report["output"]["stdout"]
    assert "hello" not in run.stderr


@pytest.mark.subprocess  # python -m grader
def test_output_file_and_python_dash_m(tmp_path):
    out = tmp_path / "deep" / "report.json"
    run = run_grader("check", str(SUBMISSIONS / "wrong_dtype_float32.py"), "--format", "json",
                     "--output", str(out), *FAST)
    assert run.code == 1 and run.stdout == ""
    assert json.loads(out.read_text())["passed"] is False


def test_text_report_explains_a_failure(kind_runs):
    run = run_grader("check", str(SUBMISSIONS / "wrong_shape_atleast_2d.py"), *FAST)
    assert run.code == 1
    text = run.stdout
    assert text.startswith("FAIL tied_lm_head: score ")
    assert "shape (1, 3) != expected (3,)" in text
    assert "hint: a leading axis of size 1 was added" in text
    assert "replay: grader check" in text


def test_replay_command_reproduces_the_case():
    run = run_grader("check", str(SUBMISSIONS / "wrong_tolerance_softmax.py"), "--format", "json", *FAST)
    case = next(c for c in run.json()["cases"] if c["status"] == "failed")
    argv = case["replay"].split()
    assert argv[:2] == ["grader", "check"]
    import shlex
    again = run_grader(*shlex.split(case["replay"])[1:], "--format", "json")
    assert again.code == 1
    cases = again.json()["cases"]
    assert [c["name"] for c in cases] == [case["name"]]
    assert cases[0]["failure"]["kind"] == case["failure"]["kind"]


def test_problem_is_detected_from_the_function_defined(tmp_path):
    run = run_grader("check", str(SUBMISSIONS / "correct_numpy.py"), "--format", "json", *FAST)
    assert run.json()["problem"] == "tied_lm_head"
    # with two problems known, a file defining neither function cannot be placed
    probs = tmp_path / "problems"
    probs.mkdir()
    shutil.copytree(ROOT / "reference", tmp_path / "reference")
    spec = (ROOT / "problems" / "tied_lm_head.yaml").read_text()
    (probs / "tied_lm_head.yaml").write_text(spec)
    (probs / "other.yaml").write_text(spec.replace("id: tied_lm_head", "id: other")
                                      .replace("  name: tied_lm_head", "  name: other_fn"))
    none = run_grader("check", str(SUBMISSIONS / "wrong_import_missing_function.py"), "--problems-dir", str(probs))
    assert none.code == 2
    # --problems-dir adds to the bundled problems; its tied_lm_head replaces the bundled one (said once)
    from grader.spec import available_problems
    known = sorted([*(pid for pid in available_problems() if pid != "tied_lm_head"), "other_fn (problem other)",
                    "tied_lm_head"], key=lambda n: n.split(" ")[0] if "(" not in n else "other")
    stderr_last = none.stderr.splitlines()[-1]
    assert stderr_last.startswith("grader: error: the submission defines no function of a known problem (")
    assert stderr_last.endswith("); pass --problem ID")
    listed = stderr_last.split("(known: ", 1)[1].rsplit("); pass", 1)[0]
    assert sorted(listed.split(", ")) == sorted(known)
    assert sum("replaces the bundled one" in line for line in none.stderr.splitlines()) == 1


def test_output_to_a_fifo_or_device_writes_into_it(tmp_path):
    """--output /dev/null must never replace the device with a regular file (atomic rename)."""
    import os
    import stat
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    run = run_grader("check", str(SUBMISSIONS / "correct_numpy.py"), "--format", "json",
                     "--output", str(fifo), *FAST)
    reader.join(timeout=60)
    assert run.code == 0, run.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode), "the FIFO was replaced"
    assert json.loads(got[0])["passed"] is True
    run = run_grader("check", str(SUBMISSIONS / "correct_numpy.py"), "--output", os.devnull, *FAST)
    assert run.code == 0
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_replay_command_keeps_the_problems_dir(tmp_path):
    shutil.copytree(ROOT / "problems", tmp_path / "problems")
    shutil.copytree(ROOT / "reference", tmp_path / "reference")
    run = run_grader("check", str(SUBMISSIONS / "wrong_dtype_float32.py"), "--format", "json",
                     "--problems-dir", str(tmp_path / "problems"), *FAST)
    case = next(c for c in run.json()["cases"] if c["failure"])
    assert f"--problems-dir {tmp_path / 'problems'}" in case["replay"]


def test_a_submission_with_another_extension_is_graded(tmp_path):
    txt = tmp_path / "solution.txt"
    txt.write_text((SUBMISSIONS / "correct_numpy.py").read_text())
    run = run_grader("check", str(txt), "--format", "json", *FAST)
    assert run.code == 0, run.stdout[-500:]
    assert run.json()["passed"] is True


def test_a_partial_run_shows_no_grade():
    run = run_grader("check", str(SUBMISSIONS / "wrong_shape_atleast_2d.py"), "--case", "worked_example[float16]")
    assert run.code == 1
    first, second = run.stdout.splitlines()[:2]
    assert first.startswith("FAIL tied_lm_head: 0 of 1 selected case passed (a partial run: no score)")
    assert "graded in float16;" in second
    assert "Points:" not in run.stdout


# -- which problem a file is graded as, when it does not parse -------------------------------------

def _resolve(tmp_path, source: str, **flags):
    """:func:`grader.flags.resolve_problem` of ``source`` as ``grader check`` calls it (in process)."""
    import argparse

    from grader.check import read_submission
    from grader.flags import resolve_problem

    path = tmp_path / "sub.py"
    path.write_text(source)
    text, tree, syntax_error = read_submission(path)
    args = argparse.Namespace(problem=None, problems_dir=None, **flags)
    return resolve_problem(args, tree, text, syntax_error)


def test_tolerant_scan_finds_the_functions_of_a_file_that_does_not_parse():
    from grader.check import scanned_functions

    source = ("import numpy as np\n\ndef tied_lm_head(hidden, embedding_matrix)\n    return hidden\n"
              "class A:\n    def method (self):\n        pass\nasync def later():\n    pass\n# def not_me(x):\n")
    assert scanned_functions(source) == {"tied_lm_head", "method", "later"}


def test_a_syntax_error_is_graded_as_the_problem_whose_function_it_defines(tmp_path):
    source = (SUBMISSIONS / "wrong_import_syntax.py").read_text()
    assert _resolve(tmp_path, source).id == "tied_lm_head"


def test_a_syntax_error_naming_no_problem_says_the_file_does_not_parse(tmp_path):
    from grader.errors import GraderError

    with pytest.raises(GraderError) as info:
        _resolve(tmp_path, "import numpy as np\n\nx = (\n")
    message = str(info.value)
    assert message.startswith("the submission does not parse: '(' was never closed (line 3)")
    for function in ("embedding_lookup", "masked_mean_pool", "tied_lm_head"):
        assert function in message
    assert "pass --problem ID" in message and "--problems-dir DIR" in message
    assert "\n" not in message


def test_a_parsed_file_of_no_known_function_lists_the_known_ones(tmp_path):
    from grader.errors import GraderError

    with pytest.raises(GraderError) as info:
        _resolve(tmp_path, "def my_function(x):\n    return x\n")
    message = str(info.value)
    from grader.spec import available_problems
    assert message.startswith(f"the submission defines no function of a known problem (it defines my_function) "
                              f"(known: {', '.join(sorted(available_problems()))}); pass --problem ID")
    assert "does not parse" not in message
    # a name close to a problem's function is suggested (a newcomer's lm_head got only the list)
    with pytest.raises(GraderError) as info:
        _resolve(tmp_path, "import numpy as np\n\n\ndef lm_head(hidden, embedding_matrix):\n    return hidden\n")
    assert "(it defines lm_head; did you mean tied_lm_head?)" in str(info.value)


def test_a_syntax_error_without_problem_is_a_failed_report_not_exit_2():
    """The learner sees the SyntaxError as a failed check (exit 1), as with --problem."""
    run = run_grader("check", str(SUBMISSIONS / "wrong_import_syntax.py"), "--format", "json", *FAST)
    assert run.code == 1, run.stderr
    report = run.json()
    assert report["problem"] == "tied_lm_head"
    assert report["failure"]["kind"] == "import" and "SyntaxError" in report["failure"]["message"]


def test_a_reader_that_goes_away_ends_the_output_quietly():
    """`grader problems ID | head` ended with 'grader: internal error: BrokenPipeError'."""
    import os
    import subprocess
    import sys
    proc = subprocess.Popen([sys.executable, "-m", "grader", "problems", "tied_lm_head"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    proc.stdout.read(10)
    proc.stdout.close()           # as head does after its lines
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "internal error" not in err and "Traceback" not in err, err


def test_a_check_imports_no_batch_export_or_zygote_module(tmp_path):
    """``grader check`` builds only its own parser and imports only its own handler (5c0b6ab):
    the batch, gradebook, summary, export and fork-server modules cost 30-60 ms of every check."""
    import subprocess
    import sys
    code = ("import sys\nfrom grader.cli import main\n"
            f"code = main(['check', {str(SUBMISSIONS / 'correct_numpy.py')!r}, '--max-examples', '2', '--no-shrink',"
            f" '--output', {str(tmp_path / 'r.txt')!r}])\n"
            "heavy = sorted(m for m in sys.modules if m.startswith(('grader.batch', 'grader.export', 'grader.web',"
            " 'grader.summary_md', 'grader.reports.summary_md')) or m == 'grader.forkserver')\n"
            "print(code, heavy)\n")
    proc = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert proc.stdout.strip() == "0 []", proc.stdout + proc.stderr


def test_an_empty_file_is_said_to_be_empty_and_list_and_show_name_the_problems(tmp_path):
    """A newcomer's empty file got the list of all 21 problems (no --problem) or "defines no
    function" after a child's start (--problem, or a class's empty file in grader grade); and
    ``grader list`` / ``grader show ID`` got argparse's "invalid choice"."""
    empty = tmp_path / "empty.py"
    empty.write_text("\n# to do\n")
    run = run_grader("check", str(empty))
    assert run.code == 2 and "the submission is empty" in run.stderr and run.stderr.count("\n") == 1
    run = run_grader("check", str(empty), "--problem", "softmax", "--format", "json")
    report = run.json()
    assert run.code == 1 and report["failure"]["kind"] == "import"
    assert report["failure"]["message"] == "the submission is empty: the file holds no code"
    assert "sandbox_layers" not in report["environment"]     # nothing was started for it
    listed = run_grader("list")
    assert listed.code == 0 and listed.stdout == run_grader("problems").stdout and "softmax" in listed.stdout
    shown = run_grader("show", "softmax")
    assert shown.code == 0 and shown.stdout == run_grader("problems", "softmax").stdout


def test_a_case_named_without_its_dtype_runs_in_every_graded_dtype():
    """``--case batch`` (a newcomer's first try) was "no case named batch"; it now runs batch in
    each dtype the submission is graded in."""
    run = run_grader("check", str(SUBMISSIONS / "correct_numpy.py"), "--case", "batch", "--format", "json")
    assert run.code == 0, run.stderr
    assert sorted(c["name"] for c in run.json()["cases"]) == ["batch[float16]", "batch[float32]", "batch[float64]"]


@pytest.mark.subprocess
def test_the_grader_process_starts_no_blas_threads(tmp_path):
    """Attack round 58: OpenBLAS started one thread per core when the grader imported NumPy, and
    where another learner's threads had spent the user's processes it could not, and sent the
    grader SIGINT (exit 130, "interrupted"). The CLI sets one BLAS thread before NumPy's import,
    as the submission's child has it; a value the user set stands."""
    import os
    import subprocess
    import sys
    code = "import os; from grader import cli; cli.main(['problems']); print(os.environ['OPENBLAS_NUM_THREADS'])"
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert out.returncode == 0 and out.stdout.splitlines()[-1] == "1", out.stderr
    env["OPENBLAS_NUM_THREADS"] = "3"
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert out.stdout.splitlines()[-1] == "3"
