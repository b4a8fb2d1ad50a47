"""On-disk caches that make a repeated check cheap: the case set with its expected values, and
JAX's persistent compilation caches.

Where: ``$GRADER_CACHE_DIR``, else ``$XDG_CACHE_HOME/grader``, else ``~/.cache/grader`` (the XDG
Base Directory Specification). ``GRADER_NO_CACHE=1`` (or ``--no-cache``) turns every cache off.

``cases-<key>.bin`` holds the cases of one (problem spec, reference source, seed, generated
count, dtypes, versions) combination, with the reference's exact outputs and condition scales,
so that a warm check imports neither hypothesis nor JAX in the grader's process. The key is a
SHA-256 over everything the values depend on, so a changed spec or reference (the "stale
expected values" failure of graders in the field) can never be served from the cache. The file
is one JSON header (each case's fields, each array's dtype, shape and place, and the set's
:func:`grader.cases.cases_digest`) and one block of the arrays' bytes, read with one ``read``
into one buffer that the arrays view. Format 3 was an ``.npz`` (a zip member, a CRC and an
``ast``-parsed header per array: tied_lm_head's 93 cases, 33 MB in 361 arrays, took 90-180 ms
to read, and hashing them again for the report's digest 30-60 ms more, in every check). The
header's digest is taken as written: whoever can write this folder can change the expected
values themselves, which no digest of the inputs would show (the folder is the grader's; no
sandboxed child can reach it: docs/security.md).

A set's key is its family's (everything but the count) and ``-n<count>``: a check whose set is
missing takes the values of the cases it shares with another set of its family (the fixed cases
and the first generated ones; a replay of a published case), computes only the others, and
stores its own set (:func:`donated_values`).

Case sets of a run seeded from the instructor's secret (``--seed-secret``) are never written
here, nor read: they are the answers, and this folder is readable by whoever runs the grader
(``grader.check``; docs/security.md, class 6). Such a run reads, in a private folder only
(:func:`grader.cachedir.private_root`), which fixed cases the seed does not choose
(:func:`load_seed_independent`) and those cases' values from the published seed's sets.

``jax-submissions-<version>/<hash of the submission's source>/`` holds the warm compilations of
one submission *source* (its bytes, the function and the framework): a child process never
writes there. It gets a private cache folder in its own working folder, seeded from a
read-only view of this one, and the grader copies new entries back after the run, checked by
:func:`store_jax_entries`, and only from a process that ran no hidden case. Keyed by content,
not path: two learners graded at one path (the Gradescope layout) share nothing, and only
byte-identical source, which could do whatever its entries do by itself, reads them.
``jax-reference-<version>/`` is that of the grader's own reference runs, which no submission
can reach (docs/security.md).
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import os
import re
import shutil
import stat
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any, Callable

import numpy as np

from . import memo
from .version import __version__
from .cachedir import cache_root  # noqa: F401 - re-exported: grader.cache.cache_root
from .cachedir import private, private_root
from .cases import Case
from .dtypes import FLOAT_NAMES, dtype_of
from .spec import Problem, problem_digest

FORMAT = 4   # 2: a case keeps its "raises" (format 1 dropped it and the check patched it back); 3: its call layout;
             # 4: one file of a JSON header and the arrays' bytes (``cases-<key>.bin``), with the set's digest
#: the first bytes of a case file; then the header's length (8 bytes, little-endian) and the header
MAGIC = b"grader-cases\0\0\0\x04"
#: each array of a case file starts at a multiple of this many bytes of its data block
_ALIGN = 64
JAX_ENTRY_BYTES = 16 << 20       # largest JAX cache entry taken back from a submission's process
JAX_EXPORT_BYTES = 64 << 20      # most bytes taken back from one process
JAX_STORE_FILES = 4096           # most entries kept for one source
JAX_STORE_BYTES = 64 << 20       # most bytes kept for one source, over all its checks
#: most bytes of all sources' stores together; past it the stores least recently written go first
JAX_STORES_BYTES = 1 << 30
#: a JAX cache entry's name (``jit_f-<sha256>-cache``, ``...-atime``): no dots first, no slashes
JAX_ENTRY_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+=-]{0,199}-(cache|atime)\Z")


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "none"


def jax_cache_dir(kind: str, owner: str | None = None) -> str | None:
    """The persistent JAX compilation cache for ``kind`` (``"submissions"`` or ``"reference"``).

    ``owner`` (a key such as :func:`submission_key`) gives a sub-folder of its own. Only the
    grader writes in these folders; see :func:`jax_submission_store` for the submissions'.
    """
    root = cache_root()
    if root is None:
        return None
    path = root / f"jax-{kind}-{_version('jax')}-{_version('jaxlib')}"
    if owner is not None:
        path = path / hashlib.sha256(owner.encode()).hexdigest()[:32]
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return None
    return str(path)


def submission_key(source: bytes, function: str, framework: str,
                   siblings: Any = (), scope: str | None = None) -> str:
    """SHA-256 hex of a submission's exact source with the function and framework it is run as,
    and the sibling modules taken along with it (``(file name, bytes)`` pairs, from
    ``grader.siblings``): another ``helper.py`` is another key. Without siblings the key is
    what it was before siblings existed (warm stores stay warm).

    With ``scope`` (``CheckOptions.jax_scope``: one learner's kernel or page) the key is the
    scope's, whatever the source: that learner's edited functions share one store."""
    h = hashlib.sha256()
    if scope is not None:
        for part in (f"scope={scope}", f"function={function}", f"framework={framework}"):
            h.update(part.encode("utf-8", "surrogateescape") + b"\0")
        return h.hexdigest()
    for part in (f"function={function}", f"framework={framework}"):
        h.update(part.encode() + b"\0")
    h.update(source)
    for name, data in sorted(siblings):
        h.update(b"\0sibling\0" + name.encode("utf-8", "surrogateescape") + b"\0"
                 + hashlib.sha256(data).digest())
    return h.hexdigest()


#: the environment variable that moves the submissions' JAX stores (empty: turns them off);
#: read once, into ``CheckOptions.jax_cache``, never written by the grader
JAX_CACHE_ENV = "GRADER_JAX_CACHE"


def jax_cache_setting() -> str | None:
    """The submissions' JAX store folder asked for in the environment (:data:`JAX_CACHE_ENV`):
    a folder, ``""`` (off) or None (not set: the default under :func:`cache_root`). The default
    of ``CheckOptions.jax_cache``, read when the options are made."""
    return os.environ.get(JAX_CACHE_ENV)


def jax_submission_store(key: str, folder: str | None = None) -> str | None:
    """The folder of warm JAX compilations for the submission source ``key``, or None (off).

    ``folder`` (``CheckOptions.jax_cache``) moves the submissions' stores to another folder (one
    sub-folder per key there too), and ``""`` turns them off; None keeps them under
    :func:`cache_root`. Nothing here reads or writes the process environment.
    """
    if folder == "":
        return None
    if folder is None:
        return jax_cache_dir("submissions", owner=key)
    path = Path(folder) / f"{_version('jax')}-{_version('jaxlib')}" / hashlib.sha256(key.encode()).hexdigest()[:32]
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return None
    return str(path)


def store_jax_entries(store: str, files: dict[str, np.ndarray]) -> int:
    """Keep the JAX cache entries that a submission's process handed back; return how many were new.

    Everything in ``files`` (name -> uint8 bytes) is untrusted. An entry is kept only if its
    name matches :data:`JAX_ENTRY_NAME`, it is a 1-d uint8 array of at most
    :data:`JAX_ENTRY_BYTES`, the store holds fewer than :data:`JAX_STORE_FILES` entries and no
    entry of that name yet, and the store stays within :data:`JAX_STORE_BYTES` (a submission
    that hands back 64 MiB of new names each check grew one store by that much a check, round
    nine of issue 32). Each is written by the grader as a new regular file, mode 0644,
    through a temporary file renamed into place; whatever is already in ``store`` under another
    kind of file (a link, a FIFO) is never followed or replaced. Failures store nothing. Then
    all sources' stores beside ``store`` are kept within :data:`JAX_STORES_BYTES`
    (:func:`trim_stores`).
    """
    try:
        existing = set(os.listdir(store))
    except OSError:
        return 0
    used = _bytes_in(store)
    stored = 0
    for name, data in files.items():
        if len(existing) >= JAX_STORE_FILES:
            break
        if not isinstance(name, str) or not JAX_ENTRY_NAME.match(name) or name in existing:
            continue
        if not isinstance(data, np.ndarray) or data.dtype != np.uint8 or data.ndim != 1 \
                or not 0 < data.size <= JAX_ENTRY_BYTES or used + data.size > JAX_STORE_BYTES:
            continue
        try:
            fd, tmp = tempfile.mkstemp(prefix=".entry-", dir=store)
            try:
                os.fchmod(fd, 0o644)
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data.tobytes())
                if not stat.S_ISREG(os.lstat(tmp).st_mode):
                    raise OSError("not a regular file")
                os.rename(tmp, os.path.join(store, name))
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
        except OSError:
            continue
        existing.add(name)
        used += data.size
        stored += 1
    if stored:
        trim_stores(os.path.dirname(os.path.abspath(store)), keep=os.path.basename(store))
    return stored


def _bytes_in(folder: str) -> int:
    """Bytes of the regular files directly in ``folder`` (nothing followed); 0 if unreadable."""
    total = 0
    try:
        with os.scandir(folder) as it:
            for entry in it:
                if entry.is_file(follow_symlinks=False):
                    total += entry.stat(follow_symlinks=False).st_size
    except OSError:
        pass
    return total


def trim_stores(parent: str, keep: str = "", limit: int | None = None) -> int:
    """Delete whole submission stores (the folders of ``parent``) least recently written first,
    never ``keep``, until all of them hold at most ``limit`` bytes (:data:`JAX_STORES_BYTES`).
    Returns how many were deleted. A store is only a cache: a deleted one costs its source a
    colder next check. Links and other kinds of file are left alone; failures delete nothing more.
    """
    limit = JAX_STORES_BYTES if limit is None else limit
    stores = []
    try:
        with os.scandir(parent) as it:
            for entry in it:
                if entry.is_dir(follow_symlinks=False):
                    stores.append((entry.stat(follow_symlinks=False).st_mtime, entry.name, _bytes_in(entry.path)))
    except OSError:
        return 0
    total = sum(size for _, _, size in stores)
    deleted = 0
    for _, name, size in sorted(stores):
        if total <= limit:
            break
        if name == keep:
            continue
        shutil.rmtree(os.path.join(parent, name), ignore_errors=True)
        total -= size
        deleted += 1
    return deleted


@functools.lru_cache(maxsize=1)
def grader_source_digest() -> str:
    """SHA-256 hex of the grader package's own source files (``*.py`` and ``*.json``, by relative path).

    Part of the case-cache key: a changed case generator, tolerance or reference runner must
    never be served values made by the old one, even when the version number did not change
    (an editable install being edited).
    """
    h = hashlib.sha256()
    package = Path(__file__).resolve().parent
    for path in sorted(p for p in package.rglob("*") if p.suffix in (".py", ".json") and p.is_file()):
        h.update(path.relative_to(package).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def case_key(problem: Problem, seed: int, count: int, dtypes: tuple[str, ...]) -> str:
    """The key of one case set and its expected values: :func:`family_key` (everything but the
    generated count) and ``-n<count>``. Sets of one family differ only in how many generated
    cases they hold, so one's values serve another's cases (:func:`donated_values`)."""
    return f"{family_key(problem, seed, dtypes)}-n{int(count)}"


def family_key(problem: Problem, seed: int, dtypes: tuple[str, ...]) -> str:
    """SHA-256 hex of everything a case set and its expected values depend on but the count.

    The cases depend on the spec, the seed, the dtypes and the grader's source
    (``grader.cases`` uses no other library's random stream); the expected values also on the
    reference and on the JAX, NumPy and ml_dtypes that computed them.
    """
    h = hashlib.sha256()
    for part in (f"format={FORMAT}", f"grader={__version__}", f"source={grader_source_digest()}",
                 f"seed={seed}", f"dtypes={','.join(dtypes)}", f"numpy={np.__version__}",
                 f"jax={_version('jax')}", f"jaxlib={_version('jaxlib')}", f"ml_dtypes={_version('ml_dtypes')}"):
        h.update(part.encode() + b"\0")
    h.update(problem_digest(problem).encode())  # the spec and the reference
    return h.hexdigest()


#: the most sets of a family :func:`donated_values` reads (the largest first)
DONORS = 3


def donated_values(family: str, cases: list[Case], own: str = "",
                   private_only: bool = False) -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
    """Expected values for ``cases`` from the cached sets of ``family`` (:func:`family_key`)
    other than ``own``'s key: case name -> (exact output, scale), for each case of the same
    content as a donor's (:func:`grader.cases.content_key`: dtype, comparison, error to raise,
    inputs; a replay's literal has another name). The sets with the most cases are read first,
    at most :data:`DONORS`.

    A check with ``--max-examples 8`` after a default run (36 generated) computed every fixed
    case and the first eight generated ones again (softmax 1.5 s instead of 0.4 s, conv1d 4.1 s
    instead of 2.2 s): the same inputs, so the same values. Under a secret seed the family is
    the published seed's: the fixed cases the seed does not choose have its inputs.

    ``private_only`` (a secret seed's check, which otherwise reads no case file: a shared cache
    folder must not decide its verdicts): only a private cache folder's own files
    (:func:`grader.cachedir.private`)."""
    from .cases import content_key
    root = private_root() if private_only else cache_root()
    if root is None or not cases:
        return {}
    prefix = f"cases-{family}-n"
    donors = []
    try:
        for entry in os.scandir(root):
            count = entry.name[len(prefix):-len(".bin")] if entry.name.startswith(prefix) else ""
            if not (entry.name.endswith(".bin") and count.isdigit() and f"{family}-n{count}" != own):
                continue
            if private_only and not (entry.is_file(follow_symlinks=False) and private(entry.stat(follow_symlinks=False))):
                continue
            donors.append((int(count), f"{family}-n{count}"))
    except OSError:
        return {}

    def shape_of(case: Case) -> tuple[Any, ...]:   # a cheap filter before hashing a donor's inputs
        return case.dtype, tuple((k, a.dtype.name, a.shape) for k, a in case.inputs.items())

    wanted: dict[str, list[str]] = {}
    for c in cases:
        wanted.setdefault(content_key(c), []).append(c.name)
    shapes = {shape_of(c) for c in cases}
    found: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}
    for _, key in sorted(donors, reverse=True)[:DONORS]:
        for case, ref, scale in load_cases(key) or ():
            if shape_of(case) in shapes:
                for name in wanted.pop(content_key(case), ()):
                    found[name] = (ref, scale)
        if not wanted:
            break
    return found


def _open_regular(path: Path) -> tuple[Any, os.stat_result] | None:
    """``path`` opened for reading in binary, with its ``fstat``, when it is a regular file; None
    when it is missing, a link (never followed), a FIFO or a device, or cannot be opened."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    fh = os.fdopen(fd, "rb")
    try:
        st = os.fstat(fh.fileno())
    except OSError:
        fh.close()
        return None
    if not stat.S_ISREG(st.st_mode):
        fh.close()
        return None
    return fh, st


def _write_atomically(path: Path, write: Callable[[Any], None]) -> None:
    """Call ``write`` with a new binary file beside ``path`` and rename it into place, so that a
    reader sees the old file or the whole new one; a failure removes the temporary file and
    raises ``OSError``."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _case_file(key: str) -> Path | None:
    root = cache_root()
    return None if root is None else root / f"cases-{key}.bin"


def load_cases(key: str) -> list[tuple[Case, np.ndarray, np.ndarray | None]] | None:
    """The cached cases with their exact outputs and scales, or None on a miss or a bad file
    (a file of another format, cut short, or whose header places an array outside its data).

    The arrays are writable views of one buffer per read: each read gives arrays of its own (in
    a fork server, where :mod:`grader.memo` keeps one read, each check has its own
    copy-on-write copy).
    """
    path = _case_file(key)
    if path is None:
        return None
    mark = memo.stamp(path) if memo.ENABLED else None
    return memo.remembered("cases", key, mark, lambda: _read(path, True))


def case_set_digest(key: str, cases: list[Case]) -> str:
    """:func:`grader.cases.cases_digest` of ``cases``, the whole set read from the case cache
    under ``key``: the digest its file's header holds, written with the arrays it hashes
    (hashing every input again was 30-60 ms of a NumPy check of tied_lm_head), else computed."""
    from .cases import cases_digest
    path = _case_file(key)
    if path is not None:
        mark = memo.stamp(path) if memo.ENABLED else None
        header = memo.remembered("cases-header", key, mark, lambda: _read(path, False))
        if isinstance(header, dict) and isinstance(header.get("digest"), str):
            return header["digest"]
    return cases_digest(cases)


def _read(path: Path, arrays: bool) -> Any:
    """The case file at ``path``: its cases (``arrays``), or only its header; None if it is
    missing or bad: not a regular file (a FIFO, a device or a link is never opened through), of
    another format, with a header over :data:`_HEADER_BYTES` or that is not a case set's (a
    field of another type, an array outside the data or overlapping another), or cut short.

    Read, not mapped: a mapping of a file that someone truncates afterwards kills the process
    with SIGBUS, and pages not yet touched would show later writes (attack round 33). One
    ``readinto`` of the data block (tied_lm_head: 33 MB, 15-40 ms).
    """
    opened = _open_regular(path)
    if opened is None:
        return None
    fh, st = opened
    try:
        with fh:
            head = fh.read(len(MAGIC) + 8)
            if len(head) != len(MAGIC) + 8 or head[:len(MAGIC)] != MAGIC:
                return None
            length = int.from_bytes(head[len(MAGIC):], "little")
            if length > min(st.st_size, _HEADER_BYTES):
                return None
            header = json.loads(fh.read(length).decode())
            end = _data_end(header)
            if end is None or not arrays:
                return None if end is None else header
            start = _aligned(len(MAGIC) + 8 + length)
            if not end <= st.st_size - start <= _aligned(end):
                return None     # cut short, or bytes past the last array: no file store_cases writes
            fh.seek(start)
            data = bytearray(st.st_size - start)
            if fh.readinto(data) != len(data):
                return None
        return _cases_of(header, memoryview(data))
    except (OSError, KeyError, ValueError, TypeError, AttributeError, IndexError, RecursionError, MemoryError,
            OverflowError):
        return None


#: the largest header a case file may have (tied_lm_head's 93 cases: 60 kB)
_HEADER_BYTES = 16 << 20
_TEXT_FIELDS = ("name", "group")
_LIST_FIELDS = ("inputs", "raises", "keywords", "scalars")
#: the values a case's other fields may take (``grader.cases.Case``)
_CHOICES = {"dtype": FLOAT_NAMES, "compare": ("tolerance", "exact"),
            "origin": ("fixed", "generated", "shrunk", "replay"), "visibility": ("visible", "hidden")}


def _array_dtype(name: Any) -> np.dtype | None:
    """The dtype of an array named ``name`` in a header: bfloat16 or a plain NumPy boolean,
    integer, float or complex dtype by its canonical name; None for anything else (``object``,
    ``V8``, ``datetime64[ns]``, ``U5``, ``>f8``, ``(2,)f8``, ``f8,i4``...)."""
    if not isinstance(name, str):
        return None
    if name == "bfloat16":
        return dtype_of(name)
    try:
        dtype = np.dtype(name)
    except TypeError:
        return None
    return dtype if dtype.kind in "biufc" and dtype.name == name and dtype.isnative else None


def _data_end(header: Any) -> int | None:
    """Where the last array of ``header`` ends in the data block, if it is a case file's header
    (each case's fields of their types and values, every array's place a (dtype name, shape,
    offset) triple of a plain dtype and a shape of fewer than 2**40 elements, no two arrays
    overlapping), else None (attack round 33)."""
    if not isinstance(header, dict) or not isinstance(header.get("cases"), list) or \
            not isinstance(header.get("digest", ""), str):
        return None
    spans = []
    for m in header["cases"]:
        if not isinstance(m, dict) or not all(isinstance(m.get(k), str) for k in _TEXT_FIELDS) or \
                not all(m.get(k) in values for k, values in _CHOICES.items()) or \
                not all(isinstance(m.get(k), list) and all(isinstance(x, str) for x in m[k]) for k in _LIST_FIELDS) or \
                not isinstance(m.get("sizes"), dict) or not isinstance(m.get("arrays"), dict) or \
                not isinstance(m["arrays"].get("in"), dict) or set(m["arrays"]["in"]) != set(m["inputs"]):
            return None
        for v in m["sizes"].values():
            if not (type(v) is int or (isinstance(v, list) and all(type(n) is int for n in v))):
                return None
        arrays = m["arrays"]
        for place in [*arrays["in"].values(), *(arrays[k] for k in ("ref", "scale", "literal") if k in arrays)]:
            if not (isinstance(place, list) and len(place) == 3 and isinstance(place[1], list) and
                    all(type(n) is int and 0 <= n < 1 << 40 for n in place[1]) and
                    type(place[2]) is int and 0 <= place[2] < 1 << 62):
                return None
            dtype = _array_dtype(place[0])
            count = math.prod(place[1])
            if dtype is None or count >= 1 << 40:
                return None
            spans.append((place[2], place[2] + count * dtype.itemsize))
    spans.sort()
    if any(end > start for (_, end), (start, _) in zip(spans, spans[1:])):
        return None       # two arrays share bytes: no file store_cases writes
    return spans[-1][1] if spans else 0


def _aligned(n: int) -> int:
    return -(-n // _ALIGN) * _ALIGN


def _array(data: memoryview, place: list[Any]) -> np.ndarray:
    """The array that ``place`` (dtype name, shape, offset: checked by :func:`_data_end`, and
    ``data`` as long as it says) names in ``data``: a view of it."""
    name, shape, offset = place
    return np.frombuffer(data, dtype=_array_dtype(name), count=math.prod(shape), offset=offset).reshape(shape)


def _cases_of(header: dict[str, Any], data: memoryview) -> list[tuple[Case, np.ndarray, np.ndarray | None]]:
    out = []
    for m in header["cases"]:
        arrays = m["arrays"]
        inputs = {name: _array(data, arrays["in"][name]) for name in m["inputs"]}
        scale = _array(data, arrays["scale"]) if "scale" in arrays else None
        literal = _array(data, arrays["literal"]) if "literal" in arrays else None
        sizes = {k: tuple(v) if isinstance(v, list) else v for k, v in m["sizes"].items()}
        case = Case(name=m["name"], group=m["group"], dtype=m["dtype"], inputs=inputs, sizes=sizes,
                    compare=m["compare"], expected_literal=literal, origin=m["origin"],
                    visibility=m["visibility"], raises=tuple(m.get("raises", ())),
                    keywords=tuple(m.get("keywords", ())), scalars=tuple(m.get("scalars", ())))
        out.append((case, _array(data, arrays["ref"]), scale))
    return out


def _seed_file(key: str) -> Path | None:
    root = private_root()
    return None if root is None else root / f"seed-independent-{key}.json"


#: the largest seed-independence file read (a name list: tied_lm_head's is under 2 kB)
_SEED_FILE_BYTES = 1 << 20


def load_seed_independent(key: str) -> frozenset[str] | None:
    """The names of the fixed cases that are the same under every seed
    (:func:`grader.plan.seed_independent`) of the case set keyed ``key``
    (:func:`case_key` with seed 0 and count 0), or None on a miss or a file not to be trusted.

    Under a secret seed these names are the fixed cases whose expected values a learner is
    shown, and a secret run reads no case file: so, as the sandbox probe's memo, the file is
    read only when it is a regular file (no link followed), this user's, not writable by
    others, in a cache folder that is this user's and nobody else may write
    (:func:`grader.cachedir.private_root`: a shared folder gives none; attack round 36), and a
    list of names of at most :data:`_SEED_FILE_BYTES`."""
    path = _seed_file(key)
    if path is None:
        return None
    mark = memo.stamp(path) if memo.ENABLED else None
    return memo.remembered("seed-independent", key, mark, lambda: _read_names(path))


def _read_names(path: Path) -> frozenset[str] | None:
    opened = _open_regular(path)
    if opened is None:
        return None
    fh, st = opened
    try:
        with fh:
            if not private(st) or st.st_size > _SEED_FILE_BYTES:
                return None
            data = json.loads(fh.read(_SEED_FILE_BYTES).decode())
    except (OSError, ValueError, RecursionError):
        return None
    names = data.get("independent") if isinstance(data, dict) and data.get("format") == 1 else None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return None
    return frozenset(names)


def store_seed_independent(key: str, names: frozenset[str]) -> None:
    """Write :func:`load_seed_independent`'s file atomically, in a private cache folder only
    (:func:`grader.cachedir.private_root`); failures are ignored."""
    root = cache_root()
    try:
        if root is not None:
            root.mkdir(parents=True, exist_ok=True)
    except OSError:
        return
    path = _seed_file(key)
    if path is None:
        return
    data = json.dumps({"format": 1, "independent": sorted(names)}).encode()
    try:
        _write_atomically(path, lambda fh: fh.write(data))
    except OSError:
        pass


def store_cases(key: str, items: list[tuple[Case, np.ndarray, np.ndarray | None]]) -> None:
    """Write the case set atomically (a temp file renamed into place); failures are ignored."""
    from .cases import cases_digest

    path = _case_file(key)
    if path is None:
        return
    blocks: list[np.ndarray] = []
    at = 0

    def place(arr: Any) -> list[Any]:
        nonlocal at
        a = np.asarray(arr)
        a = a if a.flags.c_contiguous else a.copy(order="C")   # (ascontiguousarray makes a 0-d array 1-d)
        offset = _aligned(at)
        blocks.append(np.zeros(offset - at, dtype=np.uint8))
        blocks.append(a.reshape(-1).view(np.uint8))
        at = offset + a.nbytes
        return [a.dtype.name, list(a.shape), offset]

    meta = []
    for case, ref, scale in items:
        arrays: dict[str, Any] = {"in": {name: place(arr) for name, arr in case.inputs.items()}, "ref": place(ref)}
        if scale is not None:
            arrays["scale"] = place(scale)
        if case.expected_literal is not None:
            arrays["literal"] = place(case.expected_literal)
        meta.append({"name": case.name, "group": case.group, "dtype": case.dtype, "inputs": list(case.inputs),
                     "sizes": {k: list(v) if isinstance(v, tuple) else v for k, v in case.sizes.items()},
                     "compare": case.compare, "origin": case.origin, "visibility": case.visibility,
                     "raises": list(case.raises), "keywords": list(case.keywords), "scalars": list(case.scalars),
                     "arrays": arrays})
    header = json.dumps({"cases": meta, "digest": cases_digest([c for c, _, _ in items])}).encode()
    head = MAGIC + len(header).to_bytes(8, "little") + header

    def write(fh: Any) -> None:
        fh.write(head + b"\0" * (_aligned(len(head)) - len(head)))
        for block in blocks:
            fh.write(memoryview(block))

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_atomically(path, write)
    except OSError:
        pass
