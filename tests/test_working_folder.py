"""The grader reads no configuration from its working folder or a learner's folder (security
issue round three, class 7): matplotlib's ``matplotlibrc`` (and ``$MATPLOTLIBRC``,
``$MPLCONFIGDIR``), hypothesis's ``.hypothesis/``; the checks ``grader grade`` starts run from a
neutral folder; and a class view that fails costs only summary.html.

Subprocess runs only where the behaviour is at a process's start (matplotlib reads its
configuration when it is first imported); the rest is in process.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from grader import isolation
from grader.batch import gradebook, outputs

from .conftest import SUBMISSIONS, run_grader
from .test_classview import _small_class, _write_class, parse

#: run_grader runs grader.cli.main in this process (tests/conftest.py): these tests read the
#: CLI's findings, exit codes and reports; each submission still runs in its sandboxed child
pytestmark = pytest.mark.cli_in_process

HOSTILE_RC = ("text.usetex: True\nbackend: no_such_backend\nfont.family: NoSuchFontAtAll\n"
              "savefig.format: pdf\nfigure.dpi: 3\naxes.prop_cycle: cycler('color', ['zz'])\n")


def hostile_folder(root: Path) -> dict[str, str]:
    """A folder holding a ``matplotlibrc`` (TeX on, a bogus backend and font) and the environment
    variables matplotlib reads pointing at more of the same; the variables, to run with."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "matplotlibrc").write_text(HOSTILE_RC)
    (root / "rc-file").write_text(HOSTILE_RC)
    (root / "config").mkdir()
    (root / "config" / "matplotlibrc").write_text(HOSTILE_RC)
    return {"MATPLOTLIBRC": str(root / "rc-file"), "MPLCONFIGDIR": str(root / "config")}


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.subprocess  # matplotlib's first import in a grader: this process imported it long ago
def test_summary_html_reads_no_matplotlibrc_of_the_working_folder_or_environment(tmp_path):
    """``grader merge`` (which writes summary.html as grade does) run in a class folder holding a
    ``matplotlibrc`` with ``text.usetex: True`` and a bogus backend, with ``MATPLOTLIBRC`` and
    ``MPLCONFIGDIR`` naming more: the page is drawn with matplotlib's defaults, every output is
    written, the exit code is the grades', and nothing is read or written in those folders.
    (Before: TeX was asked for, which is not installed here: exit 2 after the gradebook, no
    feedback/.)"""
    graded = tmp_path / "graded"
    _write_class(graded, _small_class())
    klass = tmp_path / "class"
    env = hostile_folder(klass)
    before = snapshot(klass)
    out = tmp_path / "merged"
    run = run_grader("merge", str(graded), "--out", str(out), cwd=klass, env=env)
    assert run.code == 1, run.stderr  # the small class has failures: the grades' code
    assert "matplotlibrc" not in run.stderr and "not written" not in run.stderr, run.stderr
    page = parse((out / "summary.html").read_text())
    assert len(page.images) >= 3 and all(i["src"].startswith("data:image/png;base64,") for i in page.images)
    assert len(list((out / "feedback").glob("*.txt"))) == 3
    assert snapshot(klass) == before  # no font cache or anything else written into the class folder


FONTS = ("import json, sys\nfrom grader.isolation import import_matplotlib\nimport_matplotlib()\n"
         "from matplotlib import font_manager\n"
         "print(json.dumps(sorted({f.name for f in font_manager.fontManager.ttflist})))\n")


@pytest.mark.subprocess  # matplotlib's first import: one per process
def test_matplotlibs_font_list_is_kept_in_the_graders_cache_and_read_from_there(tmp_path):
    """matplotlib builds its font list (scanning the system's fonts, 0.5-1.3 CPU-s) where none
    is in its cache folder, a new private one in each grader process: the list is kept in the
    grader's cache folder and the next process reads it from there (a list edited there is the
    one it sees), never through a link."""
    import subprocess
    cache = tmp_path / "cache"
    env = {**os.environ, "GRADER_CACHE_DIR": str(cache)}

    def fonts() -> list[str]:
        run = subprocess.run([sys.executable, "-I", "-c", FONTS], capture_output=True, text=True, env=env,
                             cwd=tmp_path, timeout=120)
        assert run.returncode == 0, run.stderr[-2000:]
        return json.loads(run.stdout)

    first = fonts()
    kept = list((cache / "matplotlib").glob("fontlist-v*.json"))
    assert len(kept) == 1 and "DejaVu Sans" in first
    listed = json.loads(kept[0].read_text())
    for font in listed["ttflist"]:
        font["name"] = "Kept " + font["name"]
    kept[0].write_text(json.dumps(listed))
    assert "Kept DejaVu Sans" in fonts()           # read from the kept list, not built again
    elsewhere = tmp_path / "elsewhere.json"
    kept[0].rename(elsewhere)
    kept[0].symlink_to(elsewhere)                  # a link is not followed: the list is built
    assert fonts() == first


def test_the_charts_use_matplotlibs_defaults_whatever_was_configured_before(tmp_path, monkeypatch):
    """matplotlib imported earlier by someone else, with TeX turned on (as a matplotlibrc read
    then would): the charts are still drawn with the built-in defaults, and the caller's
    settings are as they were afterwards."""
    import matplotlib
    monkeypatch.setitem(matplotlib.rcParams, "text.usetex", True)
    monkeypatch.setitem(matplotlib.rcParams, "font.family", ["NoSuchFontAtAll"])
    _write_class(tmp_path, _small_class())  # writes summary.html (raises no more: see below)
    page = parse((tmp_path / "summary.html").read_text())
    assert len(page.images) >= 3
    assert matplotlib.rcParams["text.usetex"] is True and matplotlib.rcParams["font.family"] == ["NoSuchFontAtAll"]


def test_a_failing_class_view_costs_only_summary_html(tmp_path, monkeypatch, capsys):
    """Anything summary.html's rendering raises: feedback/, gradebook.csv, junit.xml and
    summary.md are written, an older summary.html is removed, and one note line says why."""
    from grader.reports import classview
    reports = _small_class()
    _write_class(tmp_path, reports)
    assert (tmp_path / "summary.html").is_file()
    for name in ("gradebook.csv", "junit.xml", "summary.md"):
        (tmp_path / name).unlink()
    for path in (tmp_path / "feedback").iterdir():
        path.unlink()

    def broken(*args, **kwargs):
        raise RuntimeError("latex was not found\nsecond line")

    monkeypatch.setattr(classview, "render", broken)
    rows = [gradebook.Row.of_report(name, rep, rep.seconds) for name, rep in reports.items()]
    outputs.write_outputs(tmp_path, rows, "instructor")
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("grader: note: summary.html not written: RuntimeError: latex"), err
    assert not (tmp_path / "summary.html").exists()
    assert all((tmp_path / name).is_file() for name in ("gradebook.csv", "junit.xml", "summary.md"))
    assert len(list((tmp_path / "feedback").glob("*.txt"))) == 3 and (tmp_path / "feedback" / "index.csv").is_file()


# -- hypothesis: the shrink search keeps nothing in ./.hypothesis --------------------------------

SEARCH_SCRIPT = r'''
import json, os, sys
touched = []
here = os.getcwd()

def hook(event, args):
    if event in ("open", "os.mkdir", "os.listdir", "os.scandir", "os.rename", "os.replace", "os.remove"):
        path = args[0] if args else None
        if event in ("os.mkdir", "os.remove") and len(args) > 1 and args[-1] not in (None, -1):
            return  # relative to a folder descriptor (shutil.rmtree of a temporary folder), not to here
        if isinstance(path, (str, bytes, os.PathLike)):
            path = os.fsdecode(path)
            if path.startswith("<") and path.endswith(">"):  # a pseudo-file name ("<unknown>": a parse)
                return
            if os.path.abspath(path).startswith(here + os.sep) or os.path.abspath(path) == here:
                touched.append((event, path))

sys.path.insert(0, sys.argv[1])
import numpy as np
from tests.test_shrink import PROBLEM, failing_generated
from grader import shrink
from grader.grading import judge
from grader.results import CallOutcome

class NonZeroOffset:  # as in test_working_folder
    def call(self, case, timeout=None):
        h = case.inputs["hidden"].astype(np.float64)
        e = case.inputs["embedding_matrix"].astype(np.float64)
        return CallOutcome(status="ok", result=(h @ e.T + (0.5 if h.any() else 0.0)).astype(case.dtype), seconds=0.0)

cases, results = failing_generated("float32")
sys.addaudithook(hook)
found = shrink.shrink_failures(PROBLEM, cases, results, NonZeroOffset(), judge, dtypes=("float32",))
print(json.dumps({"found": len(found), "touched": touched}))
'''


class NonZeroOffset:
    """A submission that is right on all-zero inputs (hypothesis's first example) and adds 0.5
    to every logit otherwise, so the search generates examples at random before it fails, which
    is when hypothesis reaches for its constants cache."""

    def __init__(self) -> None:
        self.storage: list[Path] = []

    def call(self, case, timeout=None):
        import numpy as np
        from grader.results import CallOutcome
        self.storage.append(isolation.hypothesis_storage_folder())
        h = case.inputs["hidden"].astype(np.float64)
        e = case.inputs["embedding_matrix"].astype(np.float64)
        return CallOutcome(status="ok", result=(h @ e.T + (0.5 if h.any() else 0.0)).astype(case.dtype), seconds=0.0)


def test_the_shrink_search_reads_and_writes_nothing_in_the_working_folder(tmp_path):
    """A search run with a learner's ``.hypothesis/`` planted in the working folder: no file
    there is opened, listed or made (audit hook), and no ``.hypothesis`` is left behind. (Before:
    hypothesis read and wrote ``./.hypothesis/constants/``.)"""
    root = Path(__file__).resolve().parent.parent
    planted = tmp_path / "class" / ".hypothesis"
    (planted / "constants").mkdir(parents=True)
    (planted / "constants" / "0123456789abcdef").write_text("[1e308]\n")
    (planted / "examples").mkdir()
    before = snapshot(tmp_path / "class")
    import subprocess
    proc = subprocess.run([sys.executable, "-I", "-c", SEARCH_SCRIPT, str(root)], cwd=tmp_path / "class",
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
                          env={**os.environ, "HYPOTHESIS_STORAGE_DIRECTORY": ""})
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["found"] == 1, result  # the search ran and found the offset
    assert result["touched"] == [], result["touched"][:10]
    assert snapshot(tmp_path / "class") == before
    assert sorted(p.name for p in (tmp_path / "class").iterdir()) == [".hypothesis"]


def test_the_search_uses_a_private_storage_folder_and_gives_the_callers_back():
    from hypothesis import configuration
    from grader import shrink
    from grader.grading import judge

    from .test_shrink import PROBLEM, failing_generated
    mine = Path(isolation.private_folder()).parent / "callers-own-hypothesis-home"
    configuration.set_hypothesis_home_dir(mine)
    try:
        cases, results = failing_generated("float32")
        sub = NonZeroOffset()
        shrink.shrink_failures(PROBLEM, cases, results, sub, judge, dtypes=("float32",))
        assert sub.storage, "the search called the submission"
        private = Path(isolation.private_folder())
        assert all(p.is_relative_to(private) for p in sub.storage), sub.storage[:3]
        assert isolation.hypothesis_storage_folder() == mine  # the caller's setting, as it was
    finally:
        configuration.set_hypothesis_home_dir(None)


def test_validate_leaves_nothing_in_the_working_folder(tmp_path):
    """``grader validate`` run in a folder: nothing is written there (no ``.hypothesis``, no
    cache). It grades its mistakes without shrinking, so this held before the fix too; it guards
    the rule for any later use of hypothesis or a cache."""
    from .test_validate import write_problem
    spec = write_problem(tmp_path / "authoring")
    here = tmp_path / "here"
    here.mkdir()
    run = run_grader("validate", str(spec), "--jobs", "1", cwd=here)
    assert run.code == 0, run.stdout + run.stderr
    assert list(here.iterdir()) == []


# -- the checks grader grade starts run from a neutral folder ------------------------------------

def test_grade_starts_each_check_in_a_neutral_folder_and_shows_paths_as_found(tmp_path, monkeypatch):
    """``grader grade class`` run from the folder holding the class (relative paths): every
    check process starts in an empty folder of the grader's (never the instructor's working
    folder, which may be the class folder), given the file's absolute path; the gradebook,
    the report and its replay commands name the file as it was found (``class/bob.py``)."""
    import subprocess
    from grader import cli
    from .test_batch import CORRECT, FAST, SOFTMAX, write
    write(tmp_path / "class" / "alice.py", CORRECT)
    write(tmp_path / "class" / "bob.py", SOFTMAX)
    write(tmp_path / "class" / "dave" / "solution.py", "from helper import f\n" + CORRECT)
    write(tmp_path / "class" / "dave" / "helper.py", "def f():\n    return 1\n")
    (tmp_path / "class" / "matplotlibrc").write_text(HOSTILE_RC)  # not a learner: no .py
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GRADER_FORKSERVER", "0")   # a process per check (tests/test_serve.py: the forked path)
    started = []
    real = subprocess.Popen

    def spy(argv, *args, **kwargs):
        started.append((list(argv), kwargs.get("cwd")))
        return real(argv, *args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", spy)
    code = cli.main(["grade", "class", "--out", "out", "--problem", "tied_lm_head", "--jobs", "2", *FAST])
    monkeypatch.setattr(subprocess, "Popen", real)
    assert code == 1
    checks = [(argv, cwd) for argv, cwd in started if "check" in argv]
    assert len(checks) == 3
    for argv, cwd in checks:
        assert cwd is not None and os.path.isdir(cwd) and os.listdir(cwd) == []
        assert not Path(cwd).resolve().is_relative_to(tmp_path.resolve())
        file = argv[argv.index("check") + 1]
        assert os.path.isabs(file) and Path(file).is_file(), argv
        assert Path(argv[argv.index("--output") + 1]).is_absolute()
    rows = {r.learner: r for r in gradebook.read_gradebook(tmp_path / "out" / "gradebook.csv")}
    assert {k: r.submission for k, r in rows.items()} == {
        "alice": "class/alice.py", "bob": "class/bob.py", "dave": "class/dave/solution.py"}
    assert rows["alice"].passed and rows["dave"].passed and not rows["bob"].passed  # dave's helper was taken
    bob = json.loads(gradebook.report_path(tmp_path / "out", "bob").read_text())
    assert bob["submission"] == "class/bob.py"
    replays = [c["replay"] for c in bob["cases"] if c.get("replay")]
    assert replays and all(r.startswith("grader check class/bob.py ") for r in replays), replays[:2]
