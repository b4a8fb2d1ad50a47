"""On-disk caches that make a repeated check cheap: the case set with its expected values, and
JAX's persistent compilation caches.

Where: ``$GRADER_CACHE_DIR``, else ``$XDG_CACHE_HOME/grader``, else ``~/.cache/grader`` (the XDG
Base Directory Specification). ``GRADER_NO_CACHE=1`` (or ``--no-cache``) turns every cache off.

``cases-<key>.npz`` holds the cases of one (problem spec, reference source, seed, generated
count, dtypes, versions) combination, with the reference's exact outputs and condition scales,
so that a warm check imports neither hypothesis nor JAX in the grader's process. The key is a
SHA-256 over everything the values depend on, so a changed spec or reference (the "stale
expected values" failure of graders in the field) can never be served from the cache.

``jax-submissions-<version>/<hash of the submission's path>/`` is the compilation cache of one
submission's processes (one per submission, so that none can poison another's), and
``jax-reference-<version>/`` that of the grader's own reference runs, kept apart so that no
submission can write into what the reference loads (docs/security.md).
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from . import __version__
from .cases import Case
from .dtypes import dtype_of
from .spec import Problem

FORMAT = 1


def cache_root() -> Path | None:
    """The cache folder, or None when caching is off (``GRADER_NO_CACHE`` set)."""
    if os.environ.get("GRADER_NO_CACHE"):
        return None
    if os.environ.get("GRADER_CACHE_DIR"):
        return Path(os.environ["GRADER_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "grader"


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "none"


def jax_cache_dir(kind: str, owner: str | None = None) -> str | None:
    """The persistent JAX compilation cache for ``kind`` (``"submissions"`` or ``"reference"``).

    ``owner`` (a submission's path) gives that submission a folder of its own: the folder is
    writable by the submission's process, so sharing it across learners would let one poison
    another's compilations (docs/security.md). A learner's repeated checks stay warm.
    """
    root = cache_root()
    if root is None:
        return None
    path = root / f"jax-{kind}-{_version('jax')}-{_version('jaxlib')}"
    if owner is not None:
        path = path / hashlib.sha256(os.path.realpath(owner).encode()).hexdigest()[:24]
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return str(path)


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
    h.update(problem.path.read_bytes() + b"\0")
    h.update(problem.reference_path.read_bytes())
    return h.hexdigest()


def load_cases(key: str) -> list[tuple[Case, np.ndarray, np.ndarray | None]] | None:
    """The cached cases with their exact outputs and scales, or None on a miss or a bad file."""
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
                case = Case(m["name"], m["group"], m["dtype"], inputs, sizes, m["compare"], literal,
                            m["origin"], m["visibility"])
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
