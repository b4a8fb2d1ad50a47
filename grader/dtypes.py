"""Floating dtypes the grader knows, and their unit roundoff.

bfloat16 is not a NumPy dtype; it comes from ``ml_dtypes`` (the same type JAX uses), and
``np.finfo`` rejects it, so its limits come from ``ml_dtypes.finfo``.

Unit roundoff ``u = 2**-p`` for a format with ``p`` significand bits (Higham, *Accuracy and
Stability of Numerical Algorithms*, 2nd ed., section 2.1; IEEE 754-2019 table 3.5):

=========  ====  ==========
dtype      p     u
=========  ====  ==========
bfloat16   8     2**-8
float16    11    2**-11
float32    24    2**-24
float64    53    2**-53
=========  ====  ==========
"""
from __future__ import annotations

import numpy as np

#: The graded floating dtypes' names. bfloat16's dtype is made only when first asked for
#: (:func:`dtype_of`): importing ml_dtypes takes about 0.65 s with ml_dtypes 0.7 (8 ms with 0.4),
#: which a NumPy check, graded in float16/32/64 only, need not pay in the grader or in the
#: submission's process.
FLOAT_NAMES = ("bfloat16", "float16", "float32", "float64")
_NUMPY_FLOATS = {"float16": np.dtype(np.float16), "float32": np.dtype(np.float32), "float64": np.dtype(np.float64)}


def _bfloat16() -> np.dtype:
    import ml_dtypes
    return np.dtype(ml_dtypes.bfloat16)


def _finfo(dt: np.dtype) -> "np.finfo":
    """``finfo`` of a floating dtype: NumPy's for NumPy's own types, else ml_dtypes' (bfloat16,
    which ``np.finfo`` rejects; an array of it exists, so ml_dtypes is imported already)."""
    if dt.kind == "f" and dt.type in (np.float16, np.float32, np.float64, np.longdouble):
        return np.finfo(dt)
    import ml_dtypes
    return ml_dtypes.finfo(dt)


#: Half-precision types: products may legitimately be rounded to them before summation.
HALF_DTYPES = frozenset({"bfloat16", "float16"})


def dtype_of(name: str) -> np.dtype:
    """The NumPy dtype for a dtype name (``"float32"``, ``"bfloat16"``, ``"int32"``...).

    Raises:
        ValueError: the name is not a dtype NumPy or ml_dtypes knows.
    """
    if name in _NUMPY_FLOATS:
        return _NUMPY_FLOATS[name]
    if name == "bfloat16":
        return _bfloat16()
    try:
        return np.dtype(name)
    except TypeError as exc:
        raise ValueError(f"unknown dtype {name!r}") from exc


def dtype_name(dtype: np.dtype) -> str:
    """The canonical name of a dtype (``np.dtype(ml_dtypes.bfloat16)`` -> ``"bfloat16"``)."""
    return np.dtype(dtype).name


def unit_roundoff(dtype: np.dtype | str) -> float:
    """Unit roundoff ``u = eps / 2`` of a floating dtype (float16: 2**-11).

    Raises:
        ValueError: the dtype is not floating.
    """
    dt = dtype_of(dtype) if isinstance(dtype, str) else np.dtype(dtype)
    try:
        return float(_finfo(dt).eps) / 2.0
    except (ValueError, TypeError) as exc:
        raise ValueError(f"dtype {dt} is not a floating dtype") from exc


def smallest_subnormal(dtype: np.dtype | str) -> float:
    """The smallest positive subnormal number of a floating dtype (float16: 2**-24)."""
    dt = dtype_of(dtype) if isinstance(dtype, str) else np.dtype(dtype)
    return float(_finfo(dt).smallest_subnormal)


def smallest_normal(dtype: np.dtype | str) -> float:
    """The smallest positive normal number of a floating dtype (float16: 2**-14, float32: 2**-126).

    Below it, machines that flush subnormals to zero (XLA on the CPU, GPUs, fast-math BLAS)
    return 0 where IEEE 754 gradual underflow would give a subnormal (docs/tolerance.md).
    """
    dt = dtype_of(dtype) if isinstance(dtype, str) else np.dtype(dtype)
    return float(_finfo(dt).smallest_normal)


def max_finite(dtype: np.dtype | str) -> float:
    """The largest finite value of a floating dtype (float16: 65504)."""
    dt = dtype_of(dtype) if isinstance(dtype, str) else np.dtype(dtype)
    return float(_finfo(dt).max)
