"""The sandbox probe's outcome is remembered on disk per machine state (grader.sandbox._remembered_probe):
a tier that worked is not probed again by the next grader process in the same state; a failure,
another state or a file that is no probe's outcome is probed again."""
from __future__ import annotations

import json
import shutil

import pytest

from grader import sandbox


@pytest.fixture
def probes(tmp_path, monkeypatch):
    """The probe's child replaced by a scripted outcome; each call recorded (the candidate's
    extra flags and --size) as a new grader process would make it (the in-process memo empty)."""
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("GRADER_NO_CACHE", raising=False)
    if shutil.which("bwrap") is None:
        monkeypatch.setattr(sandbox.shutil, "which", lambda name: "/bin/sh" if name == "bwrap" else None)
    calls: list[tuple] = []
    outcome = {"ok": True, "strongest fails": False}
    strongest = sandbox._strongest("bwrap")

    def run_probe(candidate):
        calls.append((candidate.bwrap_extra, candidate.bwrap_sized))
        if outcome["strongest fails"] and (candidate.bwrap_extra, candidate.bwrap_sized) == \
                (strongest.bwrap_extra, strongest.bwrap_sized):
            return False, "the probe took longer than 20 s"
        return (True, "") if outcome["ok"] else (False, "no user namespaces")

    monkeypatch.setattr(sandbox, "_run_probe", run_probe)

    def probe_in_a_new_process():
        sandbox._probed.clear()
        return sandbox.probe("bwrap"), sandbox._make("bwrap")

    yield calls, outcome, probe_in_a_new_process, tmp_path
    sandbox._probed.clear()


def test_a_tier_that_worked_is_not_probed_again_in_the_same_state(probes):
    calls, _, probe, folder = probes
    (ok, _), first = probe()
    assert ok and len(calls) == 1
    (ok, _), again = probe()
    assert ok and len(calls) == 1, "probed again"
    assert (again.bwrap_extra, again.bwrap_sized) == (first.bwrap_extra, first.bwrap_sized)
    assert len(list(folder.glob("sandbox-probe-*.json"))) == 1


def test_a_failed_probe_is_probed_again_by_the_next_process(probes):
    calls, outcome, probe, folder = probes
    outcome["ok"] = False
    (ok, why), _ = probe()
    assert not ok and why == "no user namespaces"
    n = len(calls)
    (ok, _), _ = probe()
    assert not ok and len(calls) == 2 * n and not list(folder.glob("sandbox-probe-*.json"))


def test_another_state_is_probed_again(probes, monkeypatch):
    calls, _, probe, _ = probes
    probe()
    monkeypatch.setenv("GRADER_SECCOMP", "0")      # the child's policy reads it
    probe()
    assert len(calls) == 2
    real = sandbox.Path.read_text
    monkeypatch.setattr(sandbox.Path, "read_text",
                        lambda self, *a, **k: "another boot\n" if str(self).endswith("boot_id") else real(self, *a, **k))
    probe()
    assert len(calls) == 3


@pytest.mark.parametrize("record", [
    {"ok": True, "bwrap_extra": ["--bind", "/", "/"], "bwrap_sized": True},
    {"ok": "yes", "bwrap_extra": [], "bwrap_sized": True},
    {"ok": True, "bwrap_extra": "--disable-userns", "bwrap_sized": True},
    {"ok": True, "bwrap_extra": [], "bwrap_sized": 1},
    {"ok": True, "bwrap_extra": [], "bwrap_sized": False},       # a weaker variant than the probe's
    "not a record",
])
def test_a_file_that_is_no_probes_outcome_is_probed_again(probes, record):
    calls, _, probe, folder = probes
    probe()
    (path,) = folder.glob("sandbox-probe-*.json")
    path.write_text(json.dumps(record))
    (ok, _), found = probe()
    assert ok and len(calls) == 2
    assert "--bind" not in found.bwrap_extra and found.bwrap_sized is True
    assert json.loads(path.read_text())["ok"] is True      # written again


def test_no_cache_folder_no_memo(probes, monkeypatch):
    calls, _, probe, folder = probes
    monkeypatch.setenv("GRADER_NO_CACHE", "1")
    probe()
    probe()
    assert len(calls) == 2 and not list(folder.glob("sandbox-probe-*.json"))


def test_a_weaker_variant_that_passed_is_not_remembered(probes):
    """Round 33: the strongest variant timed out once on a loaded machine, bubblewrap without
    --size passed, and every later check ran without size caps until the next boot."""
    calls, outcome, probe, folder = probes
    outcome["strongest fails"] = True
    (ok, _), found = probe()
    assert ok and found.bwrap_sized is False
    assert not list(folder.glob("sandbox-probe-*.json"))
    outcome["strongest fails"] = False
    n = len(calls)
    (ok, _), found = probe()
    assert ok and found.bwrap_sized is True and len(calls) == n + 1


def test_a_memo_others_may_write_an_old_one_or_a_link_is_not_trusted(probes):
    import os
    import time
    calls, _, probe, folder = probes
    probe()
    (path,) = folder.glob("sandbox-probe-*.json")
    record = path.read_text()
    os.chmod(path, 0o666)                                    # anyone may write it
    probe()
    assert len(calls) == 2
    os.chmod(path, 0o600)
    old = time.time() - sandbox.PROBE_MEMO_SECONDS - 60      # older than a memo stands
    os.utime(path, (old, old))
    probe()
    assert len(calls) == 3
    path.unlink()
    (folder / "elsewhere.json").write_text(record)
    path.symlink_to(folder / "elsewhere.json")
    probe()
    assert len(calls) == 4
    path.unlink()
    os.chmod(folder, 0o777)                                  # a folder anyone may write: no memo
    try:
        probe()
        probe()
        assert len(calls) == 6 and not path.exists()
    finally:
        os.chmod(folder, 0o700)
