"""Multi-file submissions (issue 11, item 4): a main file that imports a sibling module works in
``grader check``, ``grader grade`` and the notebook ``check(fn)``; what the sandbox shows is the
grader's private copy of the main file and the siblings it imports, nothing else; a link is never
followed; a sibling named like a module of the standard library, the frameworks or the grader is
never taken (so it cannot shadow one); a changed helper is a new JAX cache key.

In process: the sibling finder, the sandbox view and the cache key (milliseconds). Through the
CLI: a few checks with one generated case and no shrinking (seconds each).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from grader import cache, sandbox
from grader.check import CheckOptions, PrivateCopy, check_submission, load_submission
from grader.reports.view import build
from grader.siblings import MAX_FILES, find_siblings
from grader.spec import find_problem, load_problem

from .conftest import SUBMISSIONS, Run, run_grader

#: run_grader runs grader.cli.main in this process (tests/conftest.py): these tests read the
#: CLI's findings, exit codes and reports; each submission still runs in its sandboxed child
pytestmark = pytest.mark.cli_in_process

FAST = ["--max-examples", "1", "--no-shrink"]
PROBLEM = load_problem(find_problem("tied_lm_head"))
SOLUTION = (SUBMISSIONS / "multifile" / "solution.py").read_text()
HELPER = (SUBMISSIONS / "multifile" / "helper.py").read_text()
WRONG_HELPER = HELPER.replace("np.matmul(vectors, table.T)", "2 * np.matmul(vectors, table.T)")


def learner(folder: Path, **files: str) -> Path:
    """A learner's folder holding ``files`` (name without .py -> source); the main file's path."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / f"{name}.py").write_text(textwrap.dedent(text))
    return folder / "solution.py"


# -- in process ------------------------------------------------------------------------------
def test_only_the_imported_siblings_are_taken_transitively(tmp_path):
    main = learner(tmp_path, solution="import helper\nfrom helper import f\n",
                   helper="import deeper\ndef f(): pass\n", deeper="X = 1\n",
                   unrelated="SECRET = 1\n", test_solution="import helper\n")
    (tmp_path / "data.json").write_text("{}")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    found = find_siblings(str(tmp_path), load_submission(main).tree, "solution.py")
    assert found.names() == ["helper.py", "deeper.py"]
    assert found.skipped == []
    # a package folder is not taken (no subfolders): its import is the learner's failure
    pkg = find_siblings(str(tmp_path), load_submission(learner(tmp_path, solution="import pkg\n")).tree,
                        "solution.py")
    assert pkg.names() == []


def test_a_link_is_never_followed_and_special_files_never_read(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET-77 = 1\n")
    folder = tmp_path / "learner"
    main = learner(folder, solution="import helper\nimport other\nimport pipe\n")
    (folder / "helper.py").symlink_to(secret)
    (folder / "other.py").symlink_to(folder / "solution.py")
    os.mkfifo(folder / "pipe.py")
    found = find_siblings(str(folder), load_submission(main).tree, "solution.py")
    assert found.files == []
    assert found.skipped == ["helper.py: a symbolic link (not followed)",
                             "other.py: a symbolic link (not followed)",
                             "pipe.py: not a regular file"]


def test_a_hard_link_is_never_taken(tmp_path):
    """A sibling that is another name of a file outside the learner's folder (``ln secret
    helper.py``; a learner's tar unpacked without a filter makes one) passes ``O_NOFOLLOW`` and
    is a regular file: it is skipped, reported with its count of names, and nothing of it is read.
    A hard link between two files of the folder is skipped too (the rule is one line)."""
    secret = tmp_path / "seed-secret.txt"
    secret.write_text("HARDLINK_SECRET_4242\n")
    folder = tmp_path / "learner"
    main = learner(folder, solution="import helper\nimport twin\nimport plain\n", plain="X = 1\n")
    os.link(secret, folder / "helper.py")
    os.link(folder / "plain.py", folder / "twin.py")
    found = find_siblings(str(folder), load_submission(main).tree, "solution.py")
    assert found.names() == []
    assert found.skipped == ["helper.py: a hard link (2 names; copy the file)",
                             "plain.py: a hard link (2 names; copy the file)",
                             "twin.py: a hard link (2 names; copy the file)"]
    assert "HARDLINK_SECRET" not in repr(found.report())


@pytest.mark.parametrize("name", ["json", "numpy", "grader", "_child", "protocol", "submission", "random",
                                  "jax", "site", "ml_dtypes"])
def test_a_sibling_named_like_a_module_the_grader_provides_is_never_taken(tmp_path, name):
    main = learner(tmp_path, solution=f"import {name}\n", **{name: "FORGED = True\n"})
    found = find_siblings(str(tmp_path), load_submission(main).tree, "solution.py")
    assert found.files == []
    assert len(found.skipped) == 1 and found.skipped[0].startswith(f"{name}.py: shadows") \
        and found.skipped[0].endswith("rename it")


def test_the_counts_and_sizes_are_capped(tmp_path):
    names = [f"m{i:02d}" for i in range(MAX_FILES + 3)]
    main = learner(tmp_path, solution="".join(f"import {n}\n" for n in names), **{n: "" for n in names})
    (tmp_path / "big.py").write_bytes(b"#" * ((1 << 20) + 1))
    (tmp_path / "solution.py").write_text((tmp_path / "solution.py").read_text() + "import big\n")
    found = find_siblings(str(tmp_path), load_submission(main).tree, "solution.py")
    assert len(found.files) == MAX_FILES
    assert "big.py: larger than 1 MiB" in found.skipped
    assert sum("over the limit" in s for s in found.skipped) == 3


def test_the_sandbox_shows_the_private_folder_not_the_learners(tmp_path):
    main = learner(tmp_path / "learner", solution=SOLUTION, helper=HELPER, notes="SECRET = 1\n")
    loaded = load_submission(main)
    found = find_siblings(str(main.parent), loaded.tree, "solution.py")
    with PrivateCopy(loaded, found.files) as copy:
        assert sorted(os.listdir(copy.folder)) == ["helper.py", "solution.py"]
        steps = sandbox.view(copy.path, str(tmp_path / "work"), folder=copy.folder)
        ro = [m.source for m in steps if m.kind == "ro"]
        assert os.path.realpath(copy.folder) in ro
        original = os.path.realpath(tmp_path / "learner")
        assert not any(src == original or src.startswith(original + os.sep) for src in ro)
        assert not any(m.kind == "rw" for m in steps)
        pol = sandbox.Sandbox("rlimits").policy(copy.path, str(tmp_path / "work"), folder=copy.folder)
        assert os.path.realpath(copy.folder) in pol["landlock"]["ro"]
        assert copy.folder not in pol["landlock"]["rw"]


def test_the_jax_cache_key_holds_the_siblings_content():
    base = cache.submission_key(b"src", "f", "jax")
    assert cache.submission_key(b"src", "f", "jax", []) == base           # one file: the key as before
    one = cache.submission_key(b"src", "f", "jax", [("helper.py", b"a = 1\n")])
    two = cache.submission_key(b"src", "f", "jax", [("helper.py", b"a = 2\n")])
    assert len({base, one, two}) == 3
    assert cache.submission_key(b"src", "f", "jax", [("h.py", b"x"), ("g.py", b"y")]) == \
        cache.submission_key(b"src", "f", "jax", [("g.py", b"y"), ("h.py", b"x")])


def test_a_changed_helper_is_graded_afresh_with_a_new_jax_store(tmp_path):
    folder = tmp_path / "learner"
    main = learner(folder, solution=SOLUTION.replace("helper", "jhelper"),
                   jhelper="import jax.numpy as jnp\ndef project_onto_rows(v, t):\n    return jnp.matmul(v, t.T)\n")
    store = tmp_path / "store"
    opts = CheckOptions(max_examples=1, shrink=False, framework="jax", jax_cache=str(store))
    first = check_submission(main, PROBLEM, opts)
    assert first.passed, first.failure
    assert first.environment["siblings"] == {"taken": ["jhelper.py"], "skipped": []}
    stores = {p.parent for p in store.rglob("*-cache")}
    (folder / "jhelper.py").write_text("import jax.numpy as jnp\ndef project_onto_rows(v, t):\n"
                                       "    return 2 * jnp.matmul(v, t.T)\n")
    second = check_submission(main, PROBLEM, opts)
    assert not second.passed and any(c.failure and c.failure.kind == "tolerance" for c in second.cases)
    if not stores:  # JAX 0.4.30 writes no CPU persistent-cache entries: nothing is handed back to store
        import jax
        assert tuple(int(x) for x in jax.__version__.split(".")[:2]) < (0, 5), "JAX wrote no cache entries"
        return
    assert {p.parent for p in store.rglob("*-cache")} - stores, "the changed helper got a store of its own"


# -- through the CLI -------------------------------------------------------------------------
def test_check_passes_a_multi_file_submission():
    run = run_grader("check", str(SUBMISSIONS / "multifile" / "solution.py"), "--format", "json", *FAST)
    assert run.code == 0, run.stderr
    assert run.json()["environment"]["siblings"] == {"taken": ["helper.py"], "skipped": []}


def test_a_changed_helper_changes_the_verdict(tmp_path):
    main = learner(tmp_path / "l", solution=SOLUTION, helper=WRONG_HELPER)
    run = run_grader("check", str(main), "--format", "json", *FAST)
    assert run.code == 1, run.stderr
    assert "tolerance" in {c["failure"]["kind"] for c in run.json()["cases"] if c.get("failure")}


def test_a_linked_helper_is_reported_and_its_target_never_read(tmp_path):
    secret = tmp_path / "secret.py"
    secret.write_text("TOPSECRET_5150 = 1\ndef project_onto_rows(v, t):\n    return v @ t.T\n")
    main = learner(tmp_path / "l", solution=SOLUTION)
    (tmp_path / "l" / "helper.py").symlink_to(secret)
    run = run_grader("check", str(main), "--format", "json", *FAST)
    assert run.code == 1, run.stderr                                 # the submission's fault, a report
    report = run.json()
    assert report["failure"]["kind"] == "import"
    assert "No module named 'helper'" in report["failure"]["message"]
    assert "symbolic link" in report["failure"]["hint"]
    assert report["environment"]["siblings"]["skipped"] == ["helper.py: a symbolic link (not followed)"]
    assert "TOPSECRET" not in run.stdout + run.stderr


#: a main file that reads its helper.py by path, prints it and puts it in every exception message
HARDLINK_READER = """
import os
folder = os.path.dirname(os.path.abspath(__file__))
try:
    import helper
except ImportError:
    pass
try:
    SEEN = open(os.path.join(folder, "helper.py")).read()
except OSError as exc:
    SEEN = type(exc).__name__
print("SEEN", SEEN)


def tied_lm_head(hidden, embedding_matrix):
    raise ValueError("SEEN " + SEEN)
"""


@pytest.mark.parametrize("audience", ["learner", "instructor"])
def test_a_hard_linked_helper_leaks_nothing_into_any_report(tmp_path, audience):
    """The attack that worked: helper.py a hard link to a file outside the learner's folder (the
    instructor's seed secret, /etc/shadow) was copied into the sandbox, and the main file's
    output and exception messages carried it into the report. Now it is skipped and reported;
    its content is in no format and no audience."""
    secret = tmp_path / "instructor" / "seed-secret"
    secret.parent.mkdir()
    secret.write_text("HARDLINK_SECRET_9731\n")
    main = learner(tmp_path / "l", solution=HARDLINK_READER)
    os.link(secret, tmp_path / "l" / "helper.py")
    runs = [run_grader("check", str(main), "--audience", audience, *fmt, *FAST)
            for fmt in (["--format", "json"], ["--format", "text", "-v"])]
    for run in runs:
        assert run.code == 1, run.stderr                                # the submission's fault, a report
        assert "HARDLINK_SECRET" not in run.stdout + run.stderr
    report = runs[0].json()
    assert report["environment"]["siblings"] == {
        "taken": [], "skipped": ["helper.py: a hard link (2 names; copy the file)"]}
    assert "not taken: helper.py: a hard link (2 names; copy the file)" in runs[1].stdout


def test_grade_refuses_hard_linked_main_files_and_helpers_and_leaks_nothing(tmp_path):
    """``grader grade`` of a class where mallory's solution.py and helper.py are hard links to
    the instructor's secret (as ``tarfile.extractall`` without a filter leaves them): mallory's
    row is an ``import`` failure saying to copy the file, eve's helper is skipped, alice is
    graded as usual, and the secret is in no file the batch writes."""
    secret = tmp_path / "instructor" / "seed-secret"
    secret.parent.mkdir()
    secret.write_text("HARDLINK_SECRET_5566 = ((\n")   # a syntax error, which a report would quote
    klass = tmp_path / "class"
    learner(klass / "alice", solution=SOLUTION, helper=HELPER)
    (klass / "mallory").mkdir()
    os.link(secret, klass / "mallory" / "solution.py")
    learner(klass / "eve", solution=HARDLINK_READER)
    os.link(secret, klass / "eve" / "helper.py")
    out = tmp_path / "out"
    run = run_grader("grade", str(klass), "--out", str(out), "--jobs", "2", *FAST, timeout=400)
    assert run.code == 1, run.stderr                                     # failed rows, not an abort
    assert "HARDLINK_SECRET" not in run.stdout + run.stderr
    rows = {r["learner"]: r for r in __import__("csv").DictReader((out / "gradebook.csv").open())}
    assert rows["alice"]["passed"] == "true"
    assert rows["mallory"]["passed"] == "false" and rows["mallory"]["kinds"] == "import"
    assert "hard link" in rows["mallory"]["message"] and "copy the file" in rows["mallory"]["message"]
    assert rows["eve"]["passed"] == "false"
    eve = json.loads(next((out / "reports").glob("eve*.json")).read_text())
    assert eve["environment"]["siblings"]["skipped"] == ["helper.py: a hard link (3 names; copy the file)"]
    written = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.parent.name == "feedback" for p in written)
    for path in written:
        assert b"HARDLINK_SECRET" not in path.read_bytes(), path


def test_no_siblings_flag_grades_the_main_file_alone(monkeypatch):
    """``--no-siblings`` (check and grade) is ``CheckOptions(siblings=False)``: the helper beside
    the main file is not taken, so its import fails as the learner's report (exit 1)."""
    from grader import cli, flags
    from grader.batch import pool

    run = run_grader("check", str(SUBMISSIONS / "multifile" / "solution.py"), "--format", "json",
                     "--no-siblings", *FAST)
    assert run.code == 1, run.stderr
    report = run.json()
    assert report["failure"]["kind"] == "import" and "helper" in report["failure"]["message"]
    assert "siblings" not in report["environment"]
    monkeypatch.delenv("GRADER_SIBLINGS", raising=False)
    parser = cli.build_parser()
    for command in ("check", "grade"):
        args = parser.parse_args([command, "x.py", "--no-siblings"])
        assert flags.options_from_args(args).siblings is False
        assert flags.options_from_args(parser.parse_args([command, "x.py"])).siblings is True
    # grade hands it to each learner's check
    assert "--no-siblings" in pool.check_flags(parser.parse_args(["grade", "x", "--no-siblings"]), "p")
    assert "--no-siblings" not in pool.check_flags(parser.parse_args(["grade", "x"]), "p")


FORGERS = {
    # each writes a marker if anything imports it, and tries to forge a pass if it were used
    "json": "def dumps(*a, **k):\n    return '{\"passed\": true}'\n",
    "numpy": "def matmul(a, b):\n    raise SystemExit(0)\n",
    "grader": "passed = True\n",
    "_child": "import os\nos._exit(0)\n",
    "protocol": "def write_frame(*a, **k):\n    pass\n",
    "submission": "def tied_lm_head(h, e):\n    return h @ e.T\n",
}


@pytest.mark.parametrize("tier", ["auto", "none"])
def test_siblings_shadowing_the_graders_modules_forge_nothing(tmp_path, tier):
    """A wrong main file beside json.py, numpy.py, grader.py, _child.py, protocol.py and
    submission.py that it imports: none is taken along or imported by any process (markers), the
    wrong result fails on its merits (exit 1, a report), and the report names each file."""
    markers = tmp_path / "markers"
    markers.mkdir()
    folder = tmp_path / "l"
    files = {n: f"open({str(markers / n)!r}, 'w').close()\n" + body for n, body in FORGERS.items()}
    imports = "".join(f"try:\n    import {n}\nexcept ImportError:\n    pass\n" for n in FORGERS)
    imports += "assert not hasattr(json, 'dumps') or json.dumps(1) == '1'\n"   # the real json
    main = learner(folder, solution=imports + "import numpy as np\n\n\ndef tied_lm_head(hidden, embedding_matrix):\n"
                   "    return 2 * np.matmul(hidden, embedding_matrix.T)\n", **files)
    # from the learner's folder, as ``python -I`` (the console script and every process the
    # grader starts are isolated: neither the working folder nor the script's is on sys.path)
    proc = subprocess.run([sys.executable, "-I", "-m", "grader", "check", str(main), "--format", "json",
                           "--sandbox", tier, *FAST], cwd=folder, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    run = Run(proc.returncode, proc.stdout, proc.stderr)
    assert run.code == 1, run.stderr
    report = run.json()
    assert not report["passed"] and report["failure"] is None
    assert "tolerance" in {c["failure"]["kind"] for c in report["cases"] if c.get("failure")}
    skipped = report["environment"]["siblings"]["skipped"]
    assert sorted(s.split(":")[0] for s in skipped) == sorted(f"{n}.py" for n in FORGERS)
    assert report["environment"]["siblings"]["taken"] == []
    assert sorted(p.name for p in markers.iterdir()) == [], "a learner's shadowing file was imported"


def test_a_main_file_needing_its_shadowing_sibling_fails_with_a_hint(tmp_path):
    main = learner(tmp_path / "l", solution="from json import project_onto_rows\n\n\n"
                   "def tied_lm_head(hidden, embedding_matrix):\n    return project_onto_rows(hidden, embedding_matrix)\n",
                   json=HELPER)
    run = run_grader("check", str(main), "--format", "json", *FAST)
    assert run.code == 1, run.stderr
    failure = run.json()["failure"]
    assert failure["kind"] == "import" and "project_onto_rows" in failure["message"]
    assert "json.py: shadows the standard-library module json; rename it" in failure["hint"]


def test_grade_takes_siblings_for_a_learners_folder_only(tmp_path):
    """alice's folder holds solution.py and helper.py; carol.py, a file among other learners'
    files, imports dave.py (another learner): carol gets nothing of dave's."""
    klass = tmp_path / "class"
    learner(klass / "alice", solution=SOLUTION, helper=HELPER)
    learner(klass / "bob", solution=(SUBMISSIONS / "correct_numpy.py").read_text())
    (klass / "carol.py").write_text("from dave import tied_lm_head\n")
    (klass / "dave.py").write_text((SUBMISSIONS / "correct_numpy.py").read_text())
    out = tmp_path / "out"
    run = run_grader("grade", str(klass), "--out", str(out), "--jobs", "2", *FAST, timeout=400)
    assert run.code == 1, run.stderr
    rows = {r["learner"]: r for r in __import__("csv").DictReader((out / "gradebook.csv").open())}
    assert rows["alice"]["passed"] == "true" and rows["alice"]["score"] == "10"
    assert rows["bob"]["passed"] == "true"
    assert rows["carol"]["passed"] == "false" and rows["carol"]["kinds"] == "import"
    assert "No module named 'dave'" in rows["carol"]["message"]
    assert rows["dave"]["passed"] == "true"
    alice = json.loads(next((out / "reports").glob("alice*.json")).read_text())
    assert alice["environment"]["siblings"]["taken"] == ["helper.py"]


def test_notebook_check_takes_the_notebooks_own_modules(tmp_path, monkeypatch):
    """check(fn) for a function that uses ``from nb_helper import project_onto_rows`` (a module of
    the notebook's folder): the module goes along; a link beside it does not."""
    from grader.notebook_check import check, take_siblings

    (tmp_path / "nb_helper.py").write_text(HELPER)
    (tmp_path / "nb_main.py").write_text("from nb_helper import project_onto_rows\n\n\n"
                                         "def tied_lm_head(hidden, embedding_matrix):\n"
                                         "    return project_onto_rows(hidden, embedding_matrix)\n")
    (tmp_path / "linked.py").symlink_to(tmp_path / "nb_helper.py")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("nb_main", "nb_helper"):
        sys.modules.pop(name, None)
    import nb_main  # noqa: E402 - the notebook's cell, imported from its folder

    os.link(tmp_path / "nb_main.py", tmp_path / "hard.py")
    assert [n for n, _ in take_siblings("import nb_helper\nimport linked\nimport hard\n", "x.py")] == ["nb_helper.py"]
    result = check(nb_main.tied_lm_head, max_examples=1)
    assert result.passed, result.text()
    assert result.report["environment"]["siblings"]["taken"] == ["nb_helper.py"]


def test_notebook_check_names_the_kernels_files_by_name_not_its_temporary_folder(tmp_path, monkeypatch):
    """check(fn) whose kernel module raises: the traceback names ``nb_broken.py`` and the
    function's own file by name, as ``--shown`` gives them, never the temporary folder
    check(fn) wrote them to (a regular expression over the JSON text used to cut it out)."""
    from grader.notebook_check import check

    (tmp_path / "nb_broken.py").write_text("def project(h, e):\n    return h @ e.T[10]\n")
    (tmp_path / "nb_cell.py").write_text("from nb_broken import project\n\n\n"
                                         "def tied_lm_head(hidden, embedding_matrix):\n"
                                         "    return project(hidden, embedding_matrix)\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("nb_cell", "nb_broken"):
        sys.modules.pop(name, None)
    import nb_cell  # noqa: E402 - the notebook's cell, imported from its folder

    result = check(nb_cell.tied_lm_head, max_examples=1)
    assert not result.passed and result.report["submission"] == "tied_lm_head.py"
    text = json.dumps(result.report)
    assert 'File \\"nb_broken.py\\", line 2, in project' in text, text[:3000]
    assert 'File \\"tied_lm_head.py\\", line' in text
    assert "grader-nb-" not in text and str(tmp_path) not in text


def test_a_notebook_submission_imports_its_sibling_module(tmp_path):
    """A learner's notebook (graded like a .py) doing ``from helper import ...`` beside helper.py."""
    folder = tmp_path / "l"
    learner(folder, helper=HELPER)
    cells = [{"cell_type": "code", "metadata": {}, "id": "c0", "outputs": [], "execution_count": None,
              "source": "%load_ext autoreload\nfrom helper import project_onto_rows"},
             {"cell_type": "code", "metadata": {}, "id": "c1", "outputs": [], "execution_count": None,
              "source": "def tied_lm_head(hidden, embedding_matrix):\n"
                        "    return project_onto_rows(hidden, embedding_matrix)"}]
    (folder / "solution.ipynb").write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                                                       "cells": cells}))
    run = run_grader("check", str(folder / "solution.ipynb"), "--format", "json", *FAST)
    assert run.code == 0, run.stdout[-2000:] + run.stderr
    assert run.json()["environment"]["siblings"]["taken"] == ["helper.py"]


def test_a_worker_shows_only_a_folder_that_holds_its_submission(tmp_path):
    from grader.runner import Worker

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "s.py").write_text("")
    with pytest.raises(ValueError):
        Worker(tmp_path / "a" / "s.py", "f", "numpy", folder=str(tmp_path))


def test_inside_the_sandbox_only_the_taken_siblings_are_there(tmp_path):
    """The submission lists its own folder and tries the learner's original folder: it finds
    the main file and the imported helper only, and (in a namespace tier) cannot read the rest."""
    folder = tmp_path / "l"
    learner(folder, helper=HELPER, notes="TOKEN_8812 = 1\n", solution=f"""
        import os
        import helper
        seen = sorted(os.listdir(os.path.dirname(os.path.abspath(__file__))))
        try:
            secret = open({str(folder / "notes.py")!r}).read()
        except OSError as exc:
            secret = type(exc).__name__
        raise RuntimeError(f"SEEN {{seen}} NOTES {{secret!r}}")
        """)
    run = run_grader("check", str(folder / "solution.py"), "--problem", "tied_lm_head", "--format", "json", *FAST)
    assert run.code == 1, run.stderr
    report = run.json()
    message = report["failure"]["message"]
    assert "SEEN ['helper.py', 'solution.py']" in message, message
    if report["environment"]["sandbox"] in sandbox.NAMESPACE_TIERS:
        assert "TOKEN_8812" not in message, message


def test_tracebacks_name_the_learners_files_not_the_private_copy(tmp_path):
    """A traceback through the main file and a sibling names both as the learner knows them (the
    path given to the grader; the sibling in the folder that path names), never the grader's /tmp/grader-sub-...
    copy, which does not exist after the check and tells a learner where the instructor works."""
    (tmp_path / "helper.py").write_text("def boom(x):\n    raise ValueError('from the helper')\n")
    main = tmp_path / "solution.py"
    main.write_text("from helper import boom\n\n\ndef tied_lm_head(hidden, embedding_matrix):\n"
                    "    print('printed from', __file__)\n    return boom(hidden)\n")
    report = check_submission(main, PROBLEM, CheckOptions(max_examples=1, shrink=False, submission_shown="solution.py"))
    failed = next(c.failure for c in report.cases if c.failure)
    assert [(f.ref, f.file, f.line, f.function) for f in failed.frames] == [
        ("submission", "solution.py", 6, "tied_lm_head"), ("sibling", "helper.py", 2, "boom")]
    details = "\n".join(c.failure.traceback for c in build(report, "instructor").report.cases if c.failure)
    assert 'File "solution.py", line 6, in tied_lm_head' in details
    assert 'File "helper.py", line 2, in boom' in details   # round 4: not the machine's folder
    assert "grader-sub-" not in json.dumps(report.to_json())
    assert "printed from solution.py" in report.output["stdout"]


def test_unprivate_rewrites_only_the_copys_paths(tmp_path):
    loaded = load_submission(SUBMISSIONS / "correct_numpy.py")
    with PrivateCopy(loaded) as copy:
        text = f'File "{copy.path}", line 3\nFile "{copy.folder}/helper.py"\n/tmp/other/grader-sub-x/y.py'
        out = copy.unprivate(text, "correct_numpy.py")
        assert out.splitlines() == ['File "correct_numpy.py", line 3',
                                    f'File "{os.path.abspath(SUBMISSIONS)}/helper.py"', "/tmp/other/grader-sub-x/y.py"]
