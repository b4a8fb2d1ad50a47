"""Several outputs' values packed in one float64 vector, as the case cache and ``grader validate`` keep one output's.

A leaf (NumPy only): :mod:`grader.cases` packs a fixed case's literal ``expected`` of several
outputs with it, and :mod:`grader.expected` the reference values and scales of each output
(``grader.expected`` re-exports both names).
"""
from __future__ import annotations

import numpy as np

from .errors import GraderError


def pack_outputs(arrays: list[np.ndarray | None]) -> np.ndarray:
    """Several outputs' arrays (or Nones) as one float64 vector that the case cache and
    ``grader validate`` keep as they keep one output's: ``[k, (present, ndim, *shape) per
    output, the values raveled in order...]``. Integer values above 2**53 are not exact in it.
    :func:`unpack_outputs` reverses it."""
    head: list[float] = [float(len(arrays))]
    body = []
    for a in arrays:
        if a is None:
            head += [0.0, 0.0]
            continue
        a = np.asarray(a)
        head += [1.0, float(a.ndim), *map(float, a.shape)]
        body.append(np.asarray(a, dtype=np.float64).ravel())
    return np.concatenate([np.asarray(head, dtype=np.float64), *body])


def unpack_outputs(packed: np.ndarray | None, count: int) -> list[np.ndarray | None]:
    """The arrays :func:`pack_outputs` packed (float64, their shapes), ``count`` Nones for None.

    Raises:
        GraderError: ``packed`` does not hold ``count`` outputs (a stale cache entry).
    """
    if packed is None:
        return [None] * count
    flat = np.asarray(packed, dtype=np.float64).ravel()
    try:
        if int(flat[0]) != count:
            raise ValueError
        pos, shapes = 1, []
        for _ in range(count):
            present, ndim = int(flat[pos]), int(flat[pos + 1])
            shapes.append(tuple(int(x) for x in flat[pos + 2:pos + 2 + ndim]) if present else None)
            pos += 2 + ndim
        out: list[np.ndarray | None] = []
        for shape in shapes:
            if shape is None:
                out.append(None)
                continue
            n = int(np.prod(shape, dtype=np.int64))
            out.append(flat[pos:pos + n].reshape(shape))
            pos += n
        if pos != flat.size:
            raise ValueError
    except (ValueError, IndexError):
        raise GraderError(f"stored reference values do not hold {count} outputs; clear the case cache") from None
    return out

