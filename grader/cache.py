"""On-disk caches that make a repeated check cheap: the case set with its expected values, and
JAX's persistent compilation caches.

Where: ``$GRADER_CACHE_DIR``, else ``$XDG_CACHE_HOME/grader``, else ``~/.cache/grader`` (the XDG
Base Directory Specification). ``GRADER_NO_CACHE=1`` (or ``--no-cache``) turns every cache off.

``cases-<key>.npz`` holds the cases of one (problem spec, reference source, seed, generated
count, dtypes, versions) combination, with the reference's exact outputs and condition scales,
so that a warm check imports neither hypothesis nor JAX in the grader's process. The key is a
SHA-256 over everything the values depend on, so a changed spec or reference (the "stale
expected values" failure of graders in the field) can never be served from the cache.

Case sets of a run seeded from the instructor's secret (``--seed-secret``) are never written
here, nor read: they are the answers, and this folder is readable by whoever runs the grader
(``grader.check``; docs/security.md, class 6).

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

import functools
import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from . import memo, parsing
from .version import __version__
from .cachedir import cache_root  # noqa: F401 - re-exported: grader.cache.cache_root
from .cases import Case
from .dtypes import dtype_of
from .spec import Problem, problem_digest

FORMAT = 3   # 2: a case keeps its "raises" (format 1 dropped it and the check patched it back); 3: its call layout
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
    """SHA-256 hex of everything a case set and its expected values depend on.

    The cases depend on the spec, the seed, the count, the dtypes and the grader's source
    (``grader.cases`` uses no other library's random stream); the expected values also on the
    reference and on the JAX, NumPy and ml_dtypes that computed them.
    """
    h = hashlib.sha256()
    for part in (f"format={FORMAT}", f"grader={__version__}", f"source={grader_source_digest()}",
                 f"seed={seed}", f"count={count}", f"dtypes={','.join(dtypes)}", f"numpy={np.__version__}",
                 f"jax={_version('jax')}", f"jaxlib={_version('jaxlib')}", f"ml_dtypes={_version('ml_dtypes')}"):
        h.update(part.encode() + b"\0")
    h.update(problem_digest(problem).encode())  # the spec and the reference
    return h.hexdigest()


def load_cases(key: str) -> list[tuple[Case, np.ndarray, np.ndarray | None]] | None:
    """The cached cases with their exact outputs and scales, or None on a miss or a bad file.

    NumPy parses each array's ``.npy`` header with ``ast.literal_eval``, so the read holds
    :data:`grader.parsing.AST_LOCK` and is tried again on CPython 3.11's interleaving error
    (gh-106905: threads of ``grader validate`` read the cache at once).
    """
    root = cache_root()
    mark = memo.stamp(root / f"cases-{key}.npz") if root is not None and memo.ENABLED else None
    for attempt in range(parsing.RETRIES + 1):
        try:
            with parsing.AST_LOCK:
                return memo.remembered("cases", key, mark, lambda: _read_cases(key))
        except SystemError as exc:
            if not parsing.is_interleaving_error(exc) or attempt == parsing.RETRIES:
                raise
    return None


def case_set_digest(key: str, cases: list[Case]) -> str:
    """:func:`grader.cases.cases_digest` of ``cases``, the whole set read from the case cache
    under ``key``: remembered (``grader.memo``) while that file is unchanged, so a fork server's
    checks do not hash every input again (0.1-0.2 s of a NumPy check of tied_lm_head)."""
    from .cases import cases_digest
    root = cache_root()
    mark = memo.stamp(root / f"cases-{key}.npz") if root is not None and memo.ENABLED else None
    return memo.remembered("cases-digest", key, mark, lambda: cases_digest(cases))


def _read_cases(key: str) -> list[tuple[Case, np.ndarray, np.ndarray | None]] | None:
    root = cache_root()
    if root is None:
        return None
    path = root / f"cases-{key}.npz"
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(bytes(data["meta"]).decode())
            out = []
            for i, m in enumerate(meta):
                inputs = {name: data[f"{i}:in:{name}"].view(dtype_of(m["input_dtypes"][name]))
                          for name in m["inputs"]}
                ref = data[f"{i}:ref"]
                scale = data[f"{i}:scale"] if m["has_scale"] else None
                literal = data[f"{i}:literal"] if m["has_literal"] else None
                sizes = {k: tuple(v) if isinstance(v, list) else v for k, v in m["sizes"].items()}
                case = Case(name=m["name"], group=m["group"], dtype=m["dtype"], inputs=inputs, sizes=sizes,
                            compare=m["compare"], expected_literal=literal, origin=m["origin"],
                            visibility=m["visibility"], raises=tuple(m.get("raises", ())),
                            keywords=tuple(m.get("keywords", ())), scalars=tuple(m.get("scalars", ())))
                out.append((case, ref, scale))
            return out
    except (OSError, KeyError, ValueError, TypeError):
        return None


def store_cases(key: str, items: list[tuple[Case, np.ndarray, np.ndarray | None]]) -> None:
    """Write the case set atomically (a temp file renamed into place); failures are ignored."""
    root = cache_root()
    if root is None:
        return
    arrays: dict[str, Any] = {}
    meta = []
    for i, (case, ref, scale) in enumerate(items):
        for name, arr in case.inputs.items():
            # bfloat16 is stored as its uint16 bit pattern (npz cannot name ml_dtypes types)
            arrays[f"{i}:in:{name}"] = arr.view(f"u{arr.dtype.itemsize}") if arr.dtype.name == "bfloat16" else arr
        arrays[f"{i}:ref"] = ref
        if scale is not None:
            arrays[f"{i}:scale"] = scale
        if case.expected_literal is not None:
            arrays[f"{i}:literal"] = case.expected_literal
        meta.append({"name": case.name, "group": case.group, "dtype": case.dtype,
                     "inputs": list(case.inputs), "input_dtypes": {k: v.dtype.name for k, v in case.inputs.items()},
                     "sizes": {k: list(v) if isinstance(v, tuple) else v for k, v in case.sizes.items()},
                     "compare": case.compare, "origin": case.origin, "visibility": case.visibility,
                     "raises": list(case.raises), "keywords": list(case.keywords), "scalars": list(case.scalars),
                     "has_scale": scale is not None, "has_literal": case.expected_literal is not None})
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    try:
        root.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".cases-", suffix=".npz", dir=root)
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **arrays)
        os.replace(tmp, root / f"cases-{key}.npz")
    except OSError:
        pass
