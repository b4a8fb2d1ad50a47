"""Round eight (issue 32): what ``grader grade`` reads of a learner's folder before any sandbox.

A learner's ``submission_metadata.json`` that is deeply nested, or whose time has no UTC
offset while the instructor gives ``--deadline``, ended the whole batch with exit 2; a ``.git``
whose HEAD commit declares a size of gigabytes (a 1.3 MB pack) made the batch inflate it."""
from __future__ import annotations

import hashlib
from pathlib import Path
import struct
import zlib
from datetime import datetime, timezone

import pytest

from grader.batch import times

ROOT = Path(__file__).resolve().parent.parent
#: an embedding lookup that checks its ids as embedding_lookup's must-raise cases ask (the body
#: up to its return)
CHECKED_LOOKUP = ("import numpy as np\n\n\ndef embedding_lookup(token_ids, embedding_matrix):\n"
                  "    ids = np.asarray(token_ids)\n"
                  "    if ids.dtype.kind not in 'iu' or (ids.size and (ids.min() < 0 or ids.max() >= len(embedding_matrix))):\n"
                  "        raise IndexError('bad id')\n")


def _graded(folder: Path, name: str, source: str, problem: str, *args: str) -> tuple[int, dict]:
    """``source`` written to ``folder/name`` and graded in this process (``grade_function_in_process``,
    no shrinking): the exit code and the JSON report."""
    from tests.conftest import grade_function_in_process
    path = folder / name
    path.write_text(source)
    return grade_function_in_process(path, "--problem", problem, "--no-shrink", *args)

HEAD = b"tree " + b"1" * 40 + b"\nauthor a <a> 1 +0000\ncommitter a <a> 1700000000 +0000\n\nm\n"


def _git(folder, sha_hex: str) -> None:
    git = folder / ".git"
    for sub in ("objects/pack", "refs/heads"):
        (git / sub).mkdir(parents=True, exist_ok=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "refs" / "heads" / "main").write_text(sha_hex + "\n")
    (git / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tbare = false\n")


def _loose(folder, declared: int) -> None:
    """HEAD a loose commit whose header declares ``declared`` bytes (the body filled to it)."""
    body = HEAD + b"a" * max(0, declared - len(HEAD))
    raw = b"commit %d\0" % declared + body
    sha = hashlib.sha1(raw).hexdigest()
    _git(folder, sha)
    obj = folder / ".git" / "objects" / sha[:2]
    obj.mkdir()
    (obj / sha[2:]).write_bytes(zlib.compress(raw, 9))


def _packed(folder, declared: int) -> None:
    """HEAD a commit stored in a pack whose object header declares ``declared`` bytes."""
    content = HEAD + b"a" * max(0, declared - len(HEAD))
    data = zlib.compress(content, 9)
    size, first, hdr = declared, (1 << 4) | (declared & 0x0F), bytearray()
    size >>= 4
    while True:
        if size:
            hdr.append(first | 0x80)
            first, size = size & 0x7F, size >> 7
        else:
            hdr.append(first)
            break
    body = b"PACK" + struct.pack(">II", 2, 1) + bytes(hdr) + data
    sha = hashlib.sha1(b"commit %d\0" % len(content) + content).digest()
    fan = b"".join(struct.pack(">I", 1 if i >= sha[0] else 0) for i in range(256))
    idx = (b"\377tOc" + struct.pack(">I", 2) + fan + sha + struct.pack(">I", zlib.crc32(bytes(hdr) + data))
           + struct.pack(">I", 12) + hashlib.sha1(body).digest())
    idx += hashlib.sha1(idx).digest()
    _git(folder, sha.hex())
    name = hashlib.sha1(body).hexdigest()
    (folder / ".git" / "objects" / "pack" / f"pack-{name}.pack").write_bytes(body + hashlib.sha1(body).digest())
    (folder / ".git" / "objects" / "pack" / f"pack-{name}.idx").write_bytes(idx)


def test_a_commit_declaring_more_than_a_commit_is_never_inflated(tmp_path):
    when = datetime.fromtimestamp(1700000000, tz=timezone.utc)
    for store in (_loose, _packed):
        small, big = tmp_path / f"{store.__name__}-small", tmp_path / f"{store.__name__}-big"
        small.mkdir()
        big.mkdir()
        store(small, len(HEAD))
        store(big, 8 * times.COMMIT_BYTES)   # 8 MiB here; the attack declared 1.25 GiB
        assert times._git_time(small) == when, store.__name__
        assert times._git_time(big) is None, store.__name__


def test_metadata_that_is_nested_deeply_or_has_no_offset_is_read_or_skipped(tmp_path):
    (tmp_path / times.METADATA).write_text("[" * 200_000)
    assert times._gradescope_time(tmp_path) is None            # RecursionError: skipped, never raised
    (tmp_path / times.METADATA).write_text('{"created_at": "2026-01-01T00:00:00"}')
    got = times._gradescope_time(tmp_path)
    assert got == datetime(2026, 1, 1, tzinfo=timezone.utc)   # no offset: UTC, as --deadline
    assert got > times.parse_deadline("2025-12-31T23:00")     # comparable with a deadline


def test_a_time_that_leaves_datetimes_range_in_utc_is_no_time(tmp_path):
    """Round nine: ``created_at: 0001-01-01T00:00:00+05:00`` (valid, but before year 1 in UTC)
    and a file time of 1e15 s (year 31,690,708: tmpfs keeps it, a tar carries it) ended
    ``grader grade`` after grading everyone (OverflowError, ValueError; exit 2, no junit.xml).
    Each is now a learner without a submission time, and ``record`` writes the others'."""
    import os
    from types import SimpleNamespace
    learners = []
    for name, meta in (("early", "0001-01-01T00:00:00+05:00"), ("late", "9999-12-31T23:59:59-05:00"),
                       ("fine", "2026-01-01T00:00:00+00:00")):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "solution.py").write_text("x = 1\n")
        (folder / times.METADATA).write_text(f'{{"created_at": "{meta}"}}')
        learners.append(SimpleNamespace(learner=name, path=folder / "solution.py", siblings=["solution.py"],
                                        folder=str(folder)))
    import tempfile
    shm = tempfile.mkdtemp(dir="/dev/shm") if os.path.isdir("/dev/shm") else str(tmp_path)  # tmpfs keeps 1e15
    far = Path(shm) / "far.py"
    far.write_text("x = 1\n")
    try:
        os.utime(far, (1e15, 1e15), follow_symlinks=False)
    except (OSError, OverflowError, ValueError):
        pass                                   # a filesystem that caps times: nothing to read beyond
    learners.append(SimpleNamespace(learner="far", path=far, siblings=[], folder=None))
    out = tmp_path / "out"
    out.mkdir()
    try:
        got = times.record(out, learners, times.parse_deadline("2026-06-01T00:00"))
    finally:
        if shm != str(tmp_path):
            import shutil
            shutil.rmtree(shm)
    assert got["fine"] == times.Submitted(at="2026-01-01T00:00:00+00:00", source="gradescope",
                                          late_seconds=-151 * 86400.0)
    assert got["early"].source == got["late"].source == "mtime"    # the file's own time instead
    assert "far" not in got or got["far"].at < "9999"               # beyond range: no time
    assert times.read(out)[1] == got


def test_a_function_that_only_raises_earns_no_must_raise_points(tmp_path):
    """Rounds nine and ten: ``raise IndexError`` as the whole body (or after one ``None``, or
    after ``0`` for empty ids) passed embedding_lookup's invalid_ids group (3 of 10 points) with
    no computation. Raising counts only beside a function that passes at least half of the
    cases that must return; a right lookup that never checks its ids earns the rest."""
    code, report = _graded(tmp_path, "stub.py", "def embedding_lookup(token_ids, embedding_matrix):\n"
                                                "    raise IndexError('nope')\n", "embedding_lookup")
    assert code == 1 and report["score"] == 0, report["score"]
    raised = [c for c in report["cases"] if c["group"] == "invalid_ids"]
    assert raised and all(c["status"] == "failed" and c["failure"]["kind"] == "unearned"
                          and c["failure"]["data"]["others_passed"] == 0 for c in raised)
    # round ten: None from the first call, or 0 for empty ids only, then raising: still nothing
    for body in ("    global calls\n    calls += 1\n    if calls == 1:\n        return None\n    raise IndexError('x')\n",
                 "    if token_ids.size == 0:\n        return 0\n    raise IndexError('x')\n"):
        code, report = _graded(tmp_path, "once.py", "calls = 0\n\n\ndef embedding_lookup(token_ids, embedding_matrix):\n"
                               + body, "embedding_lookup")
        assert code == 1 and report["score"] == 0, (body, report["score"])

    code, report = _graded(tmp_path, "checks.py", CHECKED_LOOKUP + "    return embedding_matrix[ids]\n", "embedding_lookup")
    assert code == 0 and report["score"] == 10, report["score"]
    code, report = _graded(tmp_path, "checks.py", CHECKED_LOOKUP + "    return embedding_matrix[ids] * 2\n",
                           "embedding_lookup")
    invalid = next(g for g in report["groups"] if g["group"] == "invalid_ids")
    assert invalid["passed"] == 0 and invalid["earned"] == 0, invalid    # checks alone: no points


def test_a_repository_that_points_elsewhere_or_blocks_is_not_read(tmp_path, monkeypatch):
    """Round ten: ``.git/commondir`` naming ``../cd``, a folder of the learner's own whose
    ``refs/heads/master`` is a FIFO, hung ``grader grade`` for good after grading everyone
    (``.git`` itself held only folders and regular files). A repository that sends git to another
    folder is not read; and whatever else blocks, the read gives up after GIT_SECONDS."""
    import os
    when = datetime.fromtimestamp(1700000000, tz=timezone.utc)
    for name in times.GIT_REDIRECTS:
        folder = tmp_path / name.replace("/", "_")
        folder.mkdir()
        _loose(folder, len(HEAD))
        assert times._git_time(folder) == when
        (folder / ".git" / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / ".git" / name).write_text("../cd\n")
        os.makedirs(folder / "cd" / "refs" / "heads")
        os.mkfifo(folder / "cd" / "refs" / "heads" / "main")
        assert times._git_time(folder) is None, name

    slow = tmp_path / "slow"
    slow.mkdir()
    _loose(slow, len(HEAD))
    monkeypatch.setattr(times, "GIT_SECONDS", 0.2)
    monkeypatch.setattr(times, "_head_sha", lambda git: __import__("time").sleep(5))
    assert times._git_time(slow) is None          # the daemon thread is left asleep


def test_a_git_file_or_a_config_include_sends_no_read_out_of_the_folder(tmp_path):
    """Round fourteen: dulwich's Repo followed a ``.git`` *file* (``gitdir: gd``, with
    ``gd/commondir`` a link to /dev/zero) and the repository's ``config`` (``[include] path =
    /dev/zero``, no link at all): the batch grew past 5 GB and the reading thread went on after
    its 5 s. Only HEAD, its ref and its commit are read now, by the grader: the config is never
    read, a ``.git`` file is no repository, and a ref name cannot leave the folder."""
    when = datetime.fromtimestamp(1700000000, tz=timezone.utc)
    plain = tmp_path / "include"
    plain.mkdir()
    _loose(plain, len(HEAD))
    with open(plain / ".git" / "config", "a") as fh:
        fh.write("[include]\n\tpath = /dev/zero\n")
    assert times._git_time(plain) == when               # read, and the include never followed
    gitfile = tmp_path / "gitfile"
    (gitfile / "gd").mkdir(parents=True)
    _loose(gitfile / "gd", len(HEAD))
    (gitfile / "gd" / ".git").rename(gitfile / "real")
    (gitfile / ".git").write_text("gitdir: real\n")
    (gitfile / "real" / "commondir").symlink_to("/dev/zero")
    assert times._git_time(gitfile) is None              # a .git file is not followed
    for head in ("ref: refs/heads/../../../../etc/passwd\n", "ref: /dev/zero\n", "ref: refs//x\n"):
        escape = tmp_path / f"escape{len(head)}"
        escape.mkdir()
        _loose(escape, len(HEAD))
        (escape / ".git" / "HEAD").write_text(head)
        assert times._git_time(escape) is None, head
    packed = tmp_path / "packed"     # a ref kept only in packed-refs is found there
    packed.mkdir()
    _loose(packed, len(HEAD))
    ref = packed / ".git" / "refs" / "heads" / "main"
    (packed / ".git" / "packed-refs").write_text("# pack-refs with: peeled\n" + ref.read_text().strip()
                                                  + " refs/heads/main\n")
    ref.unlink()
    assert times._git_time(packed) == when


def test_right_values_in_another_dtype_keep_the_must_raise_points(tmp_path):
    """Round twelve: a lookup that checks its ids correctly but always returns float32 passed 19
    of 57 value cases (the float32 ones) and lost the whole invalid_ids group (3 points). Right
    values off only in dtype count as answered: it keeps them."""
    code, report = _graded(tmp_path, "f32.py", CHECKED_LOOKUP + "    return embedding_matrix[ids].astype(np.float32)\n",
                           "embedding_lookup")
    invalid = next(g for g in report["groups"] if g["group"] == "invalid_ids")
    assert code == 1 and invalid["passed"] == invalid["total"] and invalid["earned"] == invalid["points"], invalid


#: stubs that compute nothing but know the output's shape (round eleven): zeros, a constant, the
#: first input of the output's shape
_STUBS = {
    "zeros": "    return np.zeros_like(np.asarray(out))\n",
    "ones": "    return np.ones_like(np.asarray(out))\n",
    "input": "    return next((np.asarray(a).astype(np.asarray(out).dtype) for a in args\n"
             "                 if np.shape(a) == np.shape(out)), np.zeros_like(np.asarray(out)))\n",
    # round twenty: an input broadcast to the output's shape (attention over one key is v)
    "broadcast": "    for a in args[::-1]:\n"
                 "        try:\n"
                 "            return np.broadcast_to(np.asarray(a), np.shape(out)).astype(np.asarray(out).dtype)\n"
                 "        except ValueError:\n"
                 "            pass\n"
                 "    return np.zeros_like(np.asarray(out))\n",
}


@pytest.mark.parametrize("problem,solution", [
    ("scaled_dot_product_attention", "problems/alternatives/scaled_dot_product_attention/np_d2l.py"),
    ("masked_mean_pool", "submissions/masked_mean_pool/correct_numpy.py"),
    ("dropout_with_mask", "problems/alternatives/dropout_with_mask/np_cs231n.py"),
    ("greedy_next_token", "problems/alternatives/greedy_next_token/np_picogpt.py"),
    ("kl_divergence", "problems/alternatives/kl_divergence/np_scipy_style.py"),
])
def test_a_stub_that_returns_zeros_a_constant_or_its_input_earns_nothing(tmp_path, problem, solution):
    """Round eleven: stubs returning zeros, a constant or the input took 0.25-1.73 of 10 points
    (empty batches, zero inputs, all-False masks, one class, p = q); a constant index took 0.25
    of greedy_next_token under a secret. Such cases count only beside a submission that answers
    half of the others: each stub (given the output's shape by the correct function, the
    strongest do-nothing) scores 0, with and without a secret seed, and its feedback is about
    its values, not the uncredited cases."""
    from tests.conftest import grade_function_in_process
    right = ROOT / solution
    for kind, body in _STUBS.items():
        stub = tmp_path / f"{kind}.py"
        stub.write_text(right.read_text() + "\n\nimport numpy as np\n_right = " + problem + "\n\n\n"
                        f"def {problem}(*args, **kwargs):\n    out = _right(*args, **kwargs)\n" + body)
        secret = tmp_path / "secret"
        secret.write_text("s3cret")
        # a secret run's cases are made afresh (no cache): one stub under a secret is enough
        for extra in ((), ("--seed-secret", str(secret))) if kind in ("ones", "broadcast") else ((),):
            code, report = grade_function_in_process(stub, "--problem", problem, "--no-shrink",
                                                     "--max-examples", "8", *extra)
            assert code == 1 and report["score"] == 0, (kind, extra, report["score"])
            assert report["summary"][0]["kind"] != "unearned", (kind, report["summary"])
    # the right function keeps every point
    code, report = grade_function_in_process(right, "--problem", problem, "--no-shrink", "--max-examples", "8")
    assert code == 0 and report["score"] == report["max_score"]


def test_a_table_of_the_literal_cases_earns_nothing_under_a_secret_seed(tmp_path):
    """Round twelve: a table of the spec's literal cases (the same under every seed; a failing
    report shows their expected values) scored 4.0 of 10 on sinusoidal_positional_encoding and
    1.0 on most problems with --seed-secret. Under a secret such cases count beside a submission
    that answers half of the seeded ones; a genuine partial solution keeps them."""
    import numpy as np
    from grader.check import grade_plan
    from grader.options import CheckOptions
    from grader.plan import make_plan
    from grader.run.inprocess import InProcessExecutor, for_file
    from grader.spec import find_problem, load_problem
    def graded(pid, right_file, fn, secret):
        problem = load_problem(find_problem(pid))
        right = for_file(right_file, problem.function, "numpy").fn
        opts = CheckOptions(max_examples=8, shrink=False, sandbox="none", seed_secret=secret, framework="numpy")
        plan = make_plan(right_file, problem, opts, lambda request: ("none", None))
        literal = {tuple(np.asarray(v).tobytes() for v in c.inputs.values())
                   for c in plan.cases if c.name not in plan.seeded and not c.raises}
        return literal, grade_plan(plan, InProcessExecutor(lambda *a: fn(right, literal, *a)))

    def table(right, literal, *a):
        out = right(*a)
        return out if tuple(np.asarray(v).tobytes() for v in a) in literal else np.zeros_like(out)

    sinusoidal = ROOT / "problems" / "alternatives" / "sinusoidal_positional_encoding" / "np_hf_distilbert.py"
    literal, report = graded("sinusoidal_positional_encoding", sinusoidal, table, b"s3cret")
    assert literal and report.score == 0
    assert {c.failure.kind for c in report.cases if c.failure} == {"tolerance", "unearned"}
    assert report.summary[0]["kind"] == "tolerance"
    literal, report = graded("sinusoidal_positional_encoding", sinusoidal, table, None)
    assert report.score > 0    # without a secret every case is the published seed's: no rule can help

    def float16_off(right, literal, *a):   # right in float32 and float64: two thirds of the cases answered
        out = right(*a)
        return out * 1.5 if out.dtype == np.float16 else out
    literal, report = graded("tied_lm_head", ROOT / "submissions" / "correct_numpy.py", float16_off, b"s3cret")
    assert literal and 0 < report.score < 10
    assert not any(c.failure and c.failure.kind == "unearned" for c in report.cases)


def test_a_one_row_mixed_mask_is_not_always_empty():
    """Round twelve: ``rows: mixed`` began every mask with an all-False row, so a generated mask of
    one row was all False (and the expected output zeros): a third of dropout_with_mask's and
    masked_mean_pool's generated cases tested nothing. The first row's structure is drawn when
    there are fewer rows than structures; five or more rows keep the order."""
    import numpy as np
    from grader.cases import Stream, mask_array
    firsts = {int(mask_array(Stream(s, "t"), (1, 6), {"rows": "mixed"}).sum()) for s in range(40)}
    assert 0 in firsts and 6 in firsts and 1 in firsts       # none, all and one each start a one-row mask
    five = mask_array(Stream(3, "t"), (5, 6), {"rows": "mixed"}).sum(axis=-1)
    assert list(five[:3]) == [0, 1, 6]
    empty = sum(not mask_array(Stream(s, "t"), (2, 4), {"rows": "mixed"}).any() for s in range(200))
    assert empty < 200 * 0.15, empty


def test_complex_zeros_do_not_answer_a_case(tmp_path):
    """Round thirteen: a complex result was a dtype failure whose values were never compared,
    and a dtype-only failure counts as answered: complex zeros on every case a stub could not
    answer took back the must-raise and empty cases (3.25 of 10 on embedding_lookup, 4.0 with
    a literal table on sinusoidal_positional_encoding under a secret). A complex result is now
    judged by its values (a nonzero imaginary part is wrong); a complex copy of the right values
    is still right in value, off in dtype."""
    code, report = _graded(tmp_path, "complex_zeros.py", CHECKED_LOOKUP
                           + "    return np.zeros(ids.shape + embedding_matrix.shape[1:], np.complex128)\n", "embedding_lookup")
    assert code == 1 and report["score"] == 0, report["score"]
    dtype_failures = [c["failure"] for c in report["cases"] if c["failure"] and c["failure"]["kind"] == "dtype"]
    # the values are compared now: zeros where the rows are not zero are off in value too
    assert dtype_failures and any(a["kind"] == "tolerance" for f in dtype_failures for a in f["data"].get("also", []))
    code, report = _graded(tmp_path, "complex_right.py", CHECKED_LOOKUP
                           + "    return embedding_matrix[ids].astype(np.complex128)\n", "embedding_lookup")
    invalid = next(g for g in report["groups"] if g["group"] == "invalid_ids")
    assert code == 1 and invalid["earned"] == invalid["points"] > 0, invalid   # right values: answered
    code, report = _graded(tmp_path, "complex_i.py", CHECKED_LOOKUP + "    return embedding_matrix[ids] * (1 + 1e-30j)\n",
                           "embedding_lookup")
    assert code == 1 and report["score"] == 0
    assert any("nonzero imaginary part" in a["message"] for c in report["cases"] if c["failure"]
               for a in c["failure"]["data"].get("also", []))


def test_the_unearned_count_is_of_visible_cases_only():
    """Round thirteen: the unearned message counted answered cases hidden ones included, so a
    submission that answered each hidden case one way or another by its input learnt how many
    hidden inputs were of each sort. The visible cases decide, and the count names only them;
    when every other case is hidden no count is printed."""
    from grader.grading import unearned
    from grader.results import CaseResult, Failure

    def case(name, status, visibility="visible"):
        failure = None if status == "passed" else Failure(kind="tolerance", message="off")
        return CaseResult(name=name, group="g", dtype="float32", status=status, rank=1, inputs={},
                          failure=failure, visibility=visibility)

    results = [case("free", "passed"), case("v1", "failed"), case("v2", "failed"),
               case("h1", "passed", "hidden"), case("h2", "passed", "hidden"), case("h3", "passed", "hidden")]
    unearned(results, {"free": "zeros"})
    free = results[0]
    assert free.status == "failed" and free.failure.kind == "unearned"   # 0 of 2 visible, whatever the hidden
    assert "only 0 of the 2 other cases" in free.failure.message and free.failure.data["other_cases"] == 2
    results = [case("free", "passed"), case("v1", "passed"), case("h1", "failed", "hidden"),
               case("h2", "failed", "hidden"), case("h3", "failed", "hidden")]
    unearned(results, {"free": "zeros"})
    assert results[0].status == "passed"                                 # 1 of 1 visible answered
    results = [case("free", "passed"), case("h1", "failed", "hidden"), case("h2", "passed", "hidden"),
               case("h3", "failed", "hidden")]
    unearned(results, {"free": "zeros"})
    assert results[0].failure.kind == "unearned" and "fewer than half" in results[0].failure.message
    assert "other_cases" not in results[0].failure.data


def test_a_commit_object_is_read_within_its_bounds_whatever_its_file_holds(tmp_path):
    """Round fifteen: dulwich's object store read a loose object whole (a sparse 3 GiB file
    behind a valid small commit: 2.1 GB in the batch process), inflated a zlib bomb declaring 180
    bytes up to its own 512 MiB (1.6 GB), and took a pack's 2 GiB blob under the id of a small
    loose commit (4.3 GB). The grader reads the one commit itself: a loose file of at most
    COMPRESSED_BYTES (a larger one is no commit), inflated to at most the declared size."""
    import tracemalloc
    when = datetime.fromtimestamp(1700000000, tz=timezone.utc)
    raw = b"commit %d\0" % len(HEAD) + HEAD
    sha = hashlib.sha1(raw).hexdigest()

    def repo(name: str, data: bytes, length: int | None = None):
        folder = tmp_path / name
        folder.mkdir()
        _git(folder, sha)
        obj = folder / ".git" / "objects" / sha[:2]
        obj.mkdir()
        with open(obj / sha[2:], "wb") as fh:
            fh.write(data)
            if length is not None:
                fh.truncate(length)          # sparse: a few KB on disk
        return folder

    sparse = repo("sparse", zlib.compress(raw), 1 << 30)
    bomb_stream = zlib.compressobj(9)
    bomb = repo("bomb", bomb_stream.compress(raw) + bomb_stream.compress(b"\0" * (64 << 20)) + bomb_stream.flush())
    for folder, read in ((sparse, None), (bomb, when)):
        tracemalloc.start()
        try:
            assert times._git_time(folder) == read, folder.name
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 3 * times.COMPRESSED_BYTES, (folder.name, peak)


def test_an_index_without_its_pack_leaves_the_next_index_to_answer(tmp_path):
    """Round sixteen's side note: an .idx without its .pack, first in name order, ended the
    search (the file's time was used where the next index held the commit)."""
    import shutil
    when = datetime.fromtimestamp(1700000000, tz=timezone.utc)
    _packed(tmp_path, len(HEAD))
    packs = tmp_path / ".git" / "objects" / "pack"
    real = next(packs.glob("*.idx"))
    shutil.copy(real, packs / "pack-0000000000000000000000000000000000000000.idx")   # no pack beside it
    assert times._git_time(tmp_path) == when


def test_a_later_output_of_garbage_in_a_wrong_dtype_does_not_answer_a_case(tmp_path):
    """Round nineteen: with several outputs, a later failing output was kept in the case's
    ``also`` by kind only, so ``v`` of garbage returned as complex128 read as a dtype failure and
    the case as answered: 1.0 of 10 on adam_step (its must-raise cases credited), where the same
    garbage in the right dtype scored 0. Every output must have its values right; the details
    say what else is wrong with an output."""
    body = ("import numpy as np\n\n\ndef adam_step(param, grad, m, v, t, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):\n"
            "    if t < 1:\n        raise ValueError('t >= 1')\n"
            "    m_new = beta1 * m + (1 - beta1) * grad\n"
            "    v_new = beta2 * v + (1 - beta2) * grad * grad\n"
            "    p = param - lr * (m_new / (1 - beta1 ** t)) / (np.sqrt(v_new / (1 - beta2 ** t)) + eps)\n")
    code, report = _graded(tmp_path, "garbage.py", body + "    return p.astype(param.dtype), m_new.astype(np.complex128), "
                           "np.zeros(v.shape, np.complex128) + 7\n", "adam_step")
    assert code == 1 and report["score"] == 0, report["score"]
    failed = [c["failure"] for c in report["cases"] if c["failure"] and c["failure"]["kind"] == "dtype"]
    assert failed and all(not f["data"]["outputs"]["v"]["values_right"] for f in failed)
    assert any("v is off: dtype complex128" in d and "(also tolerance)" in d for f in failed for d in f["details"])
    code, report = _graded(tmp_path, "right_complex.py", body + "    return p.astype(param.dtype), "
                           "m_new.astype(np.complex128), v_new.astype(np.complex128)\n", "adam_step")
    raising = [c for c in report["cases"] if c["failure"] is None or c["failure"]["kind"] != "dtype"]
    assert code == 1 and report["score"] > 0 and raising and all(c["status"] == "passed" for c in raising)


def test_a_softmax_of_one_element_is_a_constant_a_stub_does_not_earn(tmp_path):
    """Round twenty-one: softmax over a one-element axis is 1.0 whatever the logits, so
    ``np.ones_like`` answered the six such cases seed 1 draws (0.5 of 10; 2.5% of secret
    seeds draw them). One float that is a whole number or a half is a constant a guess hits."""
    import numpy as np
    from grader.grading import _trivial
    from tests.conftest import grade_function_in_process
    assert _trivial(np.array([1.0]), {"logits": np.array([3.5])}) == "one round number, which a guess hits"
    assert _trivial(np.array([0.5], np.float16), {}) == "one round number, which a guess hits"
    assert _trivial(np.array([2.0, 2.0]), {}) == "a constant"
    assert _trivial(np.array([0.7310586]), {"x": np.array([1.0])}) is None     # sigmoid(1): computed
    stub = tmp_path / "ones.py"
    stub.write_text("import numpy as np\n\n\ndef softmax(logits, axis=-1):\n    return np.ones_like(logits)\n")
    code, report = grade_function_in_process(stub, "--problem", "softmax", "--seed", "1", "--no-shrink")
    assert code == 1 and report["score"] == 0, report["summary"]
    assert any(c["inputs"]["logits"]["shape"] in ([1], (1,)) for c in report["cases"]), "seed 1 draws none"


def test_an_input_transposed_and_broadcast_is_a_stub_not_an_answer(tmp_path):
    """Round twenty-two: with d_model 1 and hidden all ones, tied_lm_head's answer is the table
    transposed and broadcast; ``np.broadcast_to(E.T[:1], ...)`` took 0.2 of 10 under a secret
    (those cases are seeded, so only a free case is held back). An input permuted, squeezed or
    cut to its first or last entry along an axis before a broadcast or reshape is a stub too."""
    import numpy as np
    from grader.grading import _trivial
    E = np.arange(5.0).reshape(5, 1)
    assert _trivial(np.ones((3, 1)) @ E.T, {"hidden": np.ones((3, 1)), "embedding_matrix": E}) == \
        "one of its inputs broadcast"
    x = np.arange(6.0).reshape(2, 3, 1)
    assert _trivial(np.broadcast_to(x[-1], (5, 3, 1)).copy(), {"x": x}) == "one of its inputs broadcast"
    rng = np.random.default_rng(0)
    h, E = rng.normal(size=(3, 4)), rng.normal(size=(6, 4))
    assert _trivial(h @ E.T, {"hidden": h, "embedding_matrix": E}) is None        # computed: not free
    assert _trivial(np.sort(h, axis=-1)[:, ::-1], {"hidden": h}) is None          # h's values, moved
    code, report = _under_secret(tmp_path, "tied_lm_head",
                                 "def tied_lm_head(hidden, embedding_matrix):\n"
                                 "    shape = np.shape(hidden)[:-1] + (np.shape(embedding_matrix)[0],)\n"
                                 "    return np.broadcast_to(np.asarray(embedding_matrix).T[:1], shape).copy()\n")
    assert code == 1 and report["score"] == 0, [g for g in report["groups"] if g["earned"]]


def _under_secret(tmp_path, problem: str, body: str, audience: str = "learner") -> tuple[int, dict]:
    """(exit code, JSON report) of ``body`` (after ``import numpy as np``) graded in process as
    ``problem`` under a secret seed, without the shrink search."""
    from tests.conftest import grade_function_in_process
    stub = tmp_path / f"{problem}.py"
    stub.write_text("import numpy as np\n\n\n" + body)
    secret = tmp_path / "secret"
    secret.write_text("a secret of the instructor's")
    return grade_function_in_process(stub, "--problem", problem, "--no-shrink", "--seed-secret", str(secret),
                                     "--audience", audience)


def _secret_learner_report(tmp_path, problem: str, body: str) -> tuple[dict, dict]:
    """The learner's and the instructor's JSON of one function under a secret seed."""
    out = []
    for audience in ("learner", "instructor"):
        code, report = _under_secret(tmp_path, problem, body, audience)
        assert code == 1
        out.append(report)
    return out[0], out[1]


def test_a_seeded_cases_margins_allowance_and_scale_are_withheld_from_learners(tmp_path):
    """Round twenty-two: under a secret a seeded case's expected value is withheld, but the
    learner JSON kept each output's margin (error over allowance) beside ``got`` and ``allowed``
    (adam_step: expected = got +- margin x allowed, 30 of 30 exactly), and the scale S (the
    reference on |inputs|: masked_mean_pool's all-positive rows gave the expected mean). None of
    the three reaches a learner for a seeded case; the instructor still has them."""
    import json
    learner, instructor = _secret_learner_report(
        tmp_path, "adam_step", "def adam_step(param, grad, m, v, t, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):\n"
                               "    return np.asarray(param), np.asarray(m), np.zeros_like(np.asarray(v))\n")
    seeded = [c for c in learner["cases"] if c.get("failure") and c["failure"]["data"].get("outputs")
              and "withheld" in json.dumps(c)]
    assert seeded, "no seeded several-output failure to look at"
    for case in seeded:
        data = case["failure"]["data"]
        assert "allowed" not in data and "scale" not in data and "expected" not in data
        assert all("margin" not in o for o in data["outputs"].values()), data["outputs"]
        assert not any("of the allowance" in d for d in case["failure"]["details"]), case["failure"]["details"]
    names = {c["name"] for c in seeded}
    full = [c for c in instructor["cases"] if c["name"] in names and c.get("failure")]
    assert any(any(o.get("margin") is not None for o in c["failure"]["data"]["outputs"].values()) for c in full)
    learner, instructor = _secret_learner_report(
        tmp_path, "masked_mean_pool", "def masked_mean_pool(embeddings, mask):\n"
                                      "    e = np.asarray(embeddings)\n"
                                      "    return np.zeros(e.shape[:-2] + e.shape[-1:], dtype=e.dtype)\n")
    text = json.dumps([c for c in learner["cases"] if "withheld" in json.dumps(c)])
    assert '"scale"' not in text and "scaled by S" not in text and '"allowed"' not in text
    assert "scaled by S" in json.dumps(instructor["cases"])


def test_a_table_of_every_case_the_old_ranges_could_draw_earns_nothing_under_a_secret(tmp_path):
    """Round twenty-three: sinusoidal_positional_encoding's inputs are two ints, drawn from
    seq_len <= 64 and 16 listed d_model: a table of all 1,024 such cases (86 KB, the bundled
    reference's values) took 7 of 10 under any secret with nothing computed. The ranges are now
    too wide to tabulate (seq_len <= 2048, every even d_model <= 256: about 135 MB); such a table
    answers no generated case, so the literal cases it also answers stay uncredited."""
    code, report = _under_secret(
        tmp_path, "sinusoidal_positional_encoding",
        "_OLD = {2, 4, 6, 8, 10, 12, 14, 16, 18, 22, 24, 32, 40, 48, 62, 64}\n\n\n"
        "def _row_table(d):   # stands for a stored table: what the old ranges could draw\n"
        "    p = np.arange(64)[:, None]\n"
        "    angle = p / 10000 ** (np.arange(0, d, 2) / d)\n"
        "    pe = np.empty((64, d), np.float32)\n"
        "    pe[:, 0::2], pe[:, 1::2] = np.sin(angle), np.cos(angle)\n"
        "    return pe\n\n\n"
        "def sinusoidal_positional_encoding(seq_len, d_model):\n"
        "    if seq_len <= 64 and d_model in _OLD:\n"
        "        return _row_table(d_model)[:seq_len]\n"
        "    return np.zeros((seq_len, d_model), np.float32)\n")
    assert code == 1 and report["score"] == 0, [(g["group"], g["earned"]) for g in report["groups"]]


@pytest.mark.parametrize("problem,seed,body", [
    ("masked_mean_pool", 1000050000150, "def masked_mean_pool(embeddings, mask):\n"
                                        "    return np.array(np.asarray(embeddings)[..., 0, :])\n"),
    ("embedding_lookup", 700150997433, "def embedding_lookup(token_ids, embedding_matrix):\n"
                                       "    ids = np.asarray(token_ids)\n"
                                       "    return np.array(np.broadcast_to(embedding_matrix[0], ids.shape + "
                                       "embedding_matrix.shape[1:]))\n"),
    ("top_k_indices", 300137997654, "def top_k_indices(scores, k):\n"
                                    "    s = np.asarray(scores)\n"
                                    "    return np.array(np.broadcast_to(np.arange(int(k), dtype=np.int64), "
                                    "s.shape[:-1] + (int(k),)))\n"),
])
def test_an_input_cut_to_one_entry_or_positions_in_order_is_a_stub(tmp_path, problem, seed, body):
    """Round twenty-four: the first token (masked_mean_pool), row 0 of the table (embedding_lookup)
    and 0..k-1 (top_k_indices) answered 3-4 generated cases at these seeds (0.25-0.33 of 10; on
    13% of secrets for top_k): an input cut to its first or last entry along an axis longer than
    1, then laid out and broadcast, and integer positions in order, are a stub's answers."""
    from tests.conftest import grade_function_in_process
    stub = tmp_path / "stub.py"
    stub.write_text("import numpy as np\n\n\n" + body)
    code, report = grade_function_in_process(stub, "--problem", problem, "--seed", str(seed), "--no-shrink")
    assert code == 1 and report["score"] == 0, [(g["group"], g["earned"]) for g in report["groups"] if g["earned"]]


def test_a_right_permutation_is_work_not_a_stub(tmp_path):
    """Round twenty-four's observation: round twenty-two's rule tried every permutation of an
    input's axes, so merge_heads' right answer (a transpose) made 36 of its 39 cases free and a
    right permutation that failed only the real-size cases scored 0. Only layouts that keep the
    elements' order (squeezes, size-1 axes placed) count now: such a function keeps its points."""
    import numpy as np
    from grader.grading import _trivial
    from tests.conftest import grade_function_in_process
    x = np.random.default_rng(2).normal(size=(2, 3, 5, 4))              # (B, H, T, Dh)
    assert _trivial(x.transpose(0, 2, 1, 3).reshape(2, 5, 12), {"x": x}) is None
    stub = tmp_path / "merge.py"
    stub.write_text("import numpy as np\n\n\ndef merge_heads(x):\n    x = np.asarray(x)\n"
                    "    if x.size > 100_000:   # right, but wrong on the real sizes\n"
                    "        return np.zeros(x.shape[:1] + x.shape[2:3] + (x.shape[1] * x.shape[3],), x.dtype)\n"
                    "    return x.transpose(0, 2, 1, 3).reshape(x.shape[0], x.shape[2], -1)\n")
    code, report = grade_function_in_process(stub, "--problem", "merge_heads", "--no-shrink")
    assert code == 1 and report["score"] >= report["max_score"] / 2, [(g["group"], g["earned"], g["points"])
                                                                       for g in report["groups"]]


def test_the_basis_rows_are_shuffled_so_a_scaled_transpose_is_no_answer(tmp_path):
    """Round twenty-five: tied_lm_head's basis cases had rows c * e_k in order, so hidden was c
    times the identity and c * E.T the answer: the table transposed and scaled by hidden's first
    entry, with no product, passed both basis groups' seeded cases (0.4 of 10 under a secret).
    The rows now select the features in a drawn order that is never the identity, every feature
    still selected (what the cases are for); a product still passes them."""
    import numpy as np

    from grader.cases import Stream, fill_array
    stub = ("def tied_lm_head(hidden, embedding_matrix):\n"
            "    h, e = np.asarray(hidden), np.asarray(embedding_matrix)\n"
            "    if h.ndim == 2 and h.shape[0] == e.shape[1] and h.size:\n"
            "        return (h.flat[0] * e.T).astype(h.dtype)\n"
            "    return np.zeros(h.shape[:-1] + (e.shape[0],), h.dtype)\n")
    code, report = _under_secret(tmp_path, "tied_lm_head", stub)
    assert code == 1 and report["score"] == 0, report["score"]
    for key in range(20):
        rows = fill_array(Stream(key), (4, 4), {"kind": "basis", "scale": 2})
        assert sorted(np.argmax(rows, axis=1).tolist()) == [0, 1, 2, 3] and not np.array_equal(rows, 2 * np.eye(4))
        assert set(np.unique(rows)) == {0.0, 2.0}
    assert _under_secret(tmp_path, "tied_lm_head", "def tied_lm_head(hidden, embedding_matrix):\n"
                         "    return hidden @ embedding_matrix.T\n")[0] == 0


def test_a_learners_own_gradescope_metadata_does_not_override_the_platforms(tmp_path):
    """Round twenty-five: in Gradescope's layout the platform's submission_metadata.json sits
    beside /autograder/submission; a learner who uploads their own (an earlier created_at) had
    theirs read first, and chose their submission time. Round twenty-six: reading the folder
    above first for every learner let one file at a class folder's root set every learner's
    time. The folder above is read, first, only for a learner's folder given to grader grade
    itself; inside a class folder, only the learner's own file is."""
    from grader.batch.discovery import Submission
    learner = tmp_path / "autograder" / "submission"
    learner.mkdir(parents=True)
    (learner / "a.py").write_text("x = 1\n")
    (tmp_path / "autograder" / times.METADATA).write_text('{"created_at": "2026-01-09T14:22:32-07:00"}')
    (learner / times.METADATA).write_text('{"created_at": "2025-12-01T00:00:00+00:00"}')
    assert times._gradescope_time(learner, given=True) == datetime(2026, 1, 9, 21, 22, 32, tzinfo=timezone.utc)
    (tmp_path / "out").mkdir()
    sub = Submission("a", learner / "a.py", siblings=True)
    assert times.record(tmp_path / "out", [sub], None, given=[str(learner)])["a"].at == "2026-01-09T21:22:32+00:00"
    # the same folders graded as a class: the file above every learner's folder is not theirs
    assert times.record(tmp_path / "out", [sub], None, given=[str(tmp_path / "autograder")])["a"].at \
        == "2025-12-01T00:00:00+00:00"
    (learner / times.METADATA).unlink()
    assert times.record(tmp_path / "out", [sub], None, given=[str(tmp_path / "autograder")])["a"].source == "mtime"
    (tmp_path / "autograder" / times.METADATA).unlink()
    (learner / times.METADATA).write_text('{"created_at": "2025-12-01T00:00:00+00:00"}')
    assert times._gradescope_time(learner, given=True) == datetime(2025, 12, 1, tzinfo=timezone.utc)


def test_a_stub_that_only_raises_earns_nothing_where_every_answer_is_an_input_reshaped():
    """An instructor's unfold_patches (split the last axis into patches: every expected output is
    the input reshaped, so every case that returns is "free"): ``raise ValueError`` passed its
    must-raise cases and took 1 of 8 points, since no case was left to say it answered nothing.
    The reshaped cases are then the work: the must-raise ones count beside them, and a right
    answer keeps every case."""
    from grader.grading import unearned
    from grader.results import CaseResult, Failure

    def case(name, status):
        failure = None if status == "passed" else Failure(kind="exception", message="ValueError: todo")
        return CaseResult(name=name, group="g", dtype="float32", status=status, rank=1, inputs={},
                          failure=failure)

    free = {"patch_1": "one of its inputs reshaped", "leading": "one of its inputs reshaped",
            "not_multiple": "an exception"}
    stub = [case("patch_1", "failed"), case("leading", "failed"), case("not_multiple", "passed")]
    unearned(stub, free)
    assert stub[2].status == "failed" and stub[2].failure.kind == "unearned", stub[2]
    assert stub[2].failure.data["other_cases"] == 2 and stub[2].failure.data["others_passed"] == 0
    right = [case("patch_1", "passed"), case("leading", "passed"), case("not_multiple", "passed")]
    unearned(right, free)
    assert all(r.status == "passed" for r in right)
    # a stub returning an input reshaped answers them: it is the right function, and keeps them
    half = [case("patch_1", "passed"), case("leading", "failed"), case("not_multiple", "passed")]
    unearned(half, free)
    assert [r.status for r in half] == ["passed", "failed", "passed"]
    # an attacker's round: a zeros stub took the zeros cases (4 of the 6 returning ones) as work,
    # and then the must-raise one; the reshaped cases alone are the work
    free = {"plain": "one of its inputs reshaped", "plain2": "one of its inputs reshaped",
            "zero_a": "zeros", "zero_b": "zeros", "not_divisor": "an exception"}
    zeros = [case("plain", "failed"), case("plain2", "failed"), case("zero_a", "passed"), case("zero_b", "passed"),
             case("not_divisor", "passed")]
    unearned(zeros, free)
    assert [r.status for r in zeros] == ["failed"] * 5 and all(r.failure.kind == "unearned" for r in zeros[2:])
    assert zeros[2].failure.data["other_cases"] == 2


@pytest.mark.parametrize("why,said,not_said", [
    ("seedless", "its inputs are the same under every seed", "raised as this case requires"),
    ("an exception", "it raised as this case requires", "every seed"),
    ("zeros", "its expected result is zeros", "raised as"),
])
def test_the_unearned_summary_gives_these_cases_reasons_only(why, said, not_said):
    """A learner graded under a secret seed read "(an empty batch, zero inputs, a must-raise)" of
    literal cases that were none of those: the summary names the reasons its cases have."""
    from grader.results import CaseResult, Failure
    from grader.summary import summarise

    cases = [CaseResult(name=f"c{i}[float32]", group="g", dtype="float32", status="failed", rank=1, inputs={},
                        failure=Failure(kind="unearned", message="m", data={"free_because": why})) for i in range(2)]
    entry = next(e for e in summarise(cases, ("float32",)) if e["kind"] == "unearned")
    assert said in entry["text"] and not_said not in entry["text"] and "empty batch" not in entry["text"], entry["text"]
