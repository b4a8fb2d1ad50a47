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

from grader import batch, isolation

from .conftest import SUBMISSIONS, run_grader
from .test_classview import _small_class, _write_class, parse

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
    rows = [batch.Row.of_report(name, rep, rep.seconds) for name, rep in reports.items()]
    batch.write_outputs(tmp_path, rows, "instructor")
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("grader: note: summary.html not written: RuntimeError: latex"), err
    assert not (tmp_path / "summary.html").exists()
    assert all((tmp_path / name).is_file() for name in ("gradebook.csv", "junit.xml", "summary.md"))
    assert len(list((tmp_path / "feedback").glob("*.txt"))) == 3 and (tmp_path / "feedback" / "index.csv").is_file()
