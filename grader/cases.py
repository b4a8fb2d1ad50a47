"""Test cases: the spec's fixed cases and generated ones, as concrete arrays.

Everything here is read out of the problem spec (sizes, fills, dtypes, groups); nothing is
specific to one problem. A :class:`Case` holds the inputs already rounded to the case's dtype:
those exact arrays go to the submission, and their float64 images go to the reference.

**One seed, one case set, everywhere.** Every graded case, fixed or generated, is a pure
function of (problem spec, seed, grader version): the same on any machine, with any supported
version of NumPy, hypothesis or ml_dtypes, on an editable or a regular install, whatever was
imported first. The mechanism (docs/tolerance.md, "Cases"):

- the only source of randomness is :class:`Stream`: the raw 64-bit output of NumPy's
  ``PCG64`` bit generator seeded through ``SeedSequence``; NumPy guarantees both bit-for-bit
  across versions (NEP 19: the *bit generators* are stable, while ``Generator`` methods such
  as ``standard_normal`` may change their streams, so none of those is used);
- values are made from those integers with exact operations only: uniform numbers are
  ``k * 2**-53``, normal-like numbers the Irwin-Hall sum of twelve 16-bit uniforms (exact
  integers, divided by a power of two; mean 0, variance 1, bounded by 6), then one
  multiply and one add in float64 (IEEE 754 correctly rounded); no transcendental function,
  whose last bit may differ between NumPy builds and CPUs;
- the cast to the case dtype goes through float32 (each step correctly rounded by IEEE 754,
  whatever library does it), and values that would be subnormal in the case dtype are set
  to zero (the tolerance admits machines that flush subnormals, docs/tolerance.md; inputs
  that are subnormal would make "flushed on input" and "exact" two right answers).

hypothesis is kept for what it is best at: searching for and shrinking a small failing input
(``grader.shrink.case_strategy``). What it finds is extra feedback and
never changes the verdict or the points.

:func:`cases_digest` hashes the graded cases' inputs in order; it goes into every report's
``environment`` so that two runs can be compared.
"""
from __future__ import annotations

import contextlib
import hashlib
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable

import numpy as np

from .dtypes import dtype_of, smallest_normal
from .spec import LEAD, Parameter, Problem
from .spec_expr import domain_refs

IRWIN_HALL_TERMS = 12  # twelve uniforms of variance 1/12 each: variance 1
_U16 = 1 << 16


@dataclass(kw_only=True)
class Case:
    """One test case.

    Attributes:
        name: unique in a run, ``"<case>[<dtype>]"`` for fixed cases, ``"gen<i>[<dtype>]"``.
        group: the spec group (points, visibility).
        dtype: the graded floating dtype name.
        inputs: parameter name -> array in call order, already in the case dtype.
        sizes: size symbol -> int, and ``"..."`` -> the leading-axes tuple.
        compare: ``"tolerance"`` or ``"exact"``.
        expected_literal: the spec's literal expected output (float64), or None.
        origin: ``"fixed"``, ``"generated"``, ``"shrunk"`` or ``"replay"``.
        visibility: ``"visible"`` or ``"hidden"``.
        raises: the exception type names of which the call must raise one (a case that must
            raise); empty for a case whose output is compared.
        keywords: the inputs passed by keyword (optional parameters, as the spec says); the
            others are passed by position in the order of ``inputs`` (the spec's order).
        scalars: the inputs that are scalar parameters: held as 0-d arrays (int64, float64,
            bool), passed to the function as Python values (``.item()``).
    """

    name: str
    group: str
    dtype: str
    inputs: dict[str, np.ndarray]
    sizes: dict[str, Any]
    compare: str = "tolerance"
    expected_literal: np.ndarray | None = None
    origin: str = "fixed"
    visibility: str = "visible"
    meta: dict[str, Any] = field(default_factory=dict)
    raises: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    scalars: tuple[str, ...] = ()

    @property
    def positional(self) -> tuple[str, ...]:
        """The inputs passed by position, in call order (the others by keyword)."""
        return tuple(k for k in self.inputs if k not in self.keywords)

    @property
    def rank(self) -> int:
        """Number of axes of the first array input (for grouping failures by rank); 0 without one."""
        return next((int(a.ndim) for k, a in self.inputs.items() if k not in self.scalars), 0)

    @property
    def size(self) -> int:
        """Largest element count of any input (1 without inputs)."""
        return max((int(a.size) for a in self.inputs.values()), default=1)


class Stream:
    """Deterministic random numbers built from PCG64's raw 64-bit output with exact arithmetic.

    The same ``key`` gives the same numbers with every NumPy version and on every machine: the
    raw output of ``PCG64`` seeded through ``SeedSequence`` is the part of ``numpy.random``
    whose stream NumPy keeps stable (NEP 19), and every number below is made from those
    integers with operations that IEEE 754 rounds correctly (no ``log``, ``cos``...).

    Args:
        key: ints (>= 0) and strings; strings are hashed with SHA-256.
    """

    def __init__(self, *key: int | str) -> None:
        words: list[int] = []
        for k in key:
            if isinstance(k, str):
                words.append(int.from_bytes(hashlib.sha256(k.encode("utf-8", "surrogatepass")).digest()[:16], "little"))
            else:
                words.append(int(k))
        self._bits = np.random.PCG64(np.random.SeedSequence(words))

    def raw(self, n: int) -> np.ndarray:
        """``n`` raw 64-bit words (uint64)."""
        return np.asarray(self._bits.random_raw(int(n)), dtype=np.uint64).reshape(-1) if n else np.zeros(0, np.uint64)

    def integers(self, lo: int, hi: int, shape: tuple[int, ...] = ()) -> np.ndarray:
        """Integers in ``[lo, hi]`` (both included), int64, of ``shape``.

        Raises:
            ValueError: ``hi < lo``.
        """
        if hi < lo:
            raise ValueError(f"empty range [{lo}, {hi}]")
        n = int(np.prod(shape, dtype=np.int64))
        span = np.uint64(hi - lo + 1)
        return (self.raw(n) % span).astype(np.int64).reshape(shape) + int(lo)

    def integer(self, lo: int, hi: int) -> int:
        """One integer in ``[lo, hi]``."""
        return int(self.integers(lo, hi, (1,))[0])

    def unit(self, shape: tuple[int, ...]) -> np.ndarray:
        """Uniform float64 in [0, 1): the top 53 bits of each word times 2**-53 (exact)."""
        n = int(np.prod(shape, dtype=np.int64))
        return (self.raw(n) >> np.uint64(11)).astype(np.float64).reshape(shape) * 2.0 ** -53

    def uniform(self, lo: float, hi: float, shape: tuple[int, ...]) -> np.ndarray:
        """Uniform float64 in ``[lo, hi)`` (``lo + (hi - lo) * unit``)."""
        return lo + (hi - lo) * self.unit(shape)

    def signs(self, shape: tuple[int, ...]) -> np.ndarray:
        """Random -1.0 / +1.0 of ``shape`` (the top bit of each word)."""
        n = int(np.prod(shape, dtype=np.int64))
        return np.where((self.raw(n) >> np.uint64(63)) == 1, -1.0, 1.0).reshape(shape)

    def normal(self, shape: tuple[int, ...]) -> np.ndarray:
        """Approximately standard normal float64 values in (-6, 6), exactly reproducible.

        The Irwin-Hall sum of twelve uniform 16-bit integers (three raw words, four 16-bit
        fields each, read through an explicitly little-endian view so the byte order of the
        machine does not matter), centred and divided by 2**16: mean 0, variance 1 - 2**-32,
        bounded by 6.
        """
        n = int(np.prod(shape, dtype=np.int64))
        fields = np.ascontiguousarray(self.raw(3 * n), dtype="<u8").view("<u2").reshape(n, 12)
        # twelve column adds in int32 (at most 12 * 65535): the same integers as a sum over the
        # rows' twelve fields, in 0.4 of its time (a reduction along a short axis is slow)
        total = fields[:, 0].astype(np.int32)
        for j in range(1, 12):
            total += fields[:, j]
        return ((total - 6 * (_U16 - 1)) / float(_U16)).reshape(shape)


def resolve_shape(param: Parameter, sizes: dict[str, Any]) -> tuple[int, ...]:
    """The concrete shape of ``param`` for ``sizes`` (``"..."`` expands to the leading axes)."""
    shape: list[int] = []
    for s in param.shape:
        if s == LEAD:
            shape.extend(int(x) for x in sizes.get(LEAD, ()))
        elif isinstance(s, str):
            shape.append(int(sizes[s]))
        else:
            shape.append(int(s))
    return tuple(shape)


def fill_range(value: Any, default: tuple[float, float]) -> tuple[float, float]:
    if value is None:
        return default
    if isinstance(value, (int, float)):
        return (float(value), float(value))
    return (float(value[0]), float(value[1]))


def fill_array(stream: Stream, shape: tuple[int, ...], fill: dict[str, Any]) -> np.ndarray:
    """float64 values of ``shape`` for a spec fill (``normal``, ``uniform``, ``zeros``, ``basis``, ``integers``).

    ``normal``: each row (last axis) is ``mean + scale * z`` with z from :meth:`Stream.normal`
    and a mean and scale drawn uniformly per row from the ``mean`` / ``scale`` ranges.
    ``uniform``: magnitudes in [low, high), with random signs if ``random_sign``.
    ``zeros``: all 0 (-0.0 if ``negative``). ``basis``: row i is ``scale * e_(p(i) mod d)``, p a
    drawn order of the rows that is never the identity (with two rows or more): rows that selected
    the features in order made ``hidden`` a multiple of the identity, whose product with a table
    is that table transposed and scaled, an answer a stub could give without the product (issue
    32, round twenty-five); the order keeps every feature selected when there are d rows.
    ``integers``: uniform integers in [low, high).
    """
    kind = fill.get("kind", "normal")
    if kind == "zeros":
        return np.full(shape, -0.0 if fill.get("negative") else 0.0)
    if kind == "basis":
        out = np.zeros(shape)
        d = shape[-1] if shape else 1
        flat = out.reshape(-1, d) if out.size else out
        rows = flat.shape[0] if out.size else 0
        for i, j in enumerate(_shuffled_rows(stream, rows)):
            flat[i, j % d] = float(fill.get("scale", 1.0))
        return out
    if kind == "uniform":
        lo, hi = float(fill.get("low", -1.0)), float(fill.get("high", 1.0))
        out = stream.uniform(lo, hi, shape)
        if fill.get("random_sign"):
            out = out * stream.signs(shape)
        if fill.get("neg_inf"):
            out = _plant_neg_inf(stream, out, float(fill["neg_inf"]))
        return out
    if kind == "integers":
        return stream.integers(int(fill.get("low", 0)), int(fill.get("high", 2)) - 1, shape).astype(np.float64)
    lead = shape[:-1] + (1,) if shape else ()
    mlo, mhi = fill_range(fill.get("mean"), (0.0, 0.0))
    slo, shi = fill_range(fill.get("scale"), (1.0, 1.0))
    mean = stream.uniform(mlo, mhi, lead)
    scale = stream.uniform(slo, shi, lead)
    out = mean + scale * stream.normal(shape)
    if fill.get("neg_inf"):
        out = _plant_neg_inf(stream, out, float(fill["neg_inf"]))
    if fill.get("asymmetric") and len(shape) == 2 and shape[0] == shape[1] and shape[0] > 1:
        out[0, 1] = out[1, 0] + 1.0  # never symmetric, whatever the draw
    return out


def _shuffled_rows(stream: Stream, n: int) -> list[int]:
    """A shuffle of ``range(n)`` drawn from ``stream`` (Fisher-Yates with :meth:`Stream.integers`,
    the same on every machine), rolled by one when it came out as the identity (n >= 2)."""
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        j = int(stream.integers(0, i))
        order[i], order[j] = order[j], order[i]
    if n > 1 and order == sorted(order):
        order = order[1:] + order[:1]
    return order


def _plant_neg_inf(stream: Stream, values: np.ndarray, p: float) -> np.ndarray:
    """``values`` with each entry -inf with chance ``p``, one random entry of every row (last
    axis) kept finite (a softmax row with a finite logit, a score row with a finite score)."""
    if values.size == 0:
        return values
    shape = values.shape
    rows = values.reshape(-1, shape[-1] if shape else 1).copy()
    hit = stream.unit(rows.shape) < p
    keep = stream.integers(0, rows.shape[1] - 1, (rows.shape[0],))
    hit[np.arange(rows.shape[0]), keep] = False
    rows[hit] = -np.inf
    return rows.reshape(shape)


def cast_to(values: Any, dtype: str, flush: bool = True) -> np.ndarray:
    """``values`` rounded to ``dtype`` (through float32 for the narrower types).

    With ``flush``, values that are subnormal in ``dtype`` become zeros of their sign, so that
    no graded input depends on whether a machine honours subnormals (module doc).
    """
    dt = dtype_of(dtype)
    x = np.asarray(values, dtype=np.float64)
    with np.errstate(over="ignore"):  # a replay's value beyond the dtype's range: inf, refused by the caller
        if dt != np.float64:
            x = x.astype(np.float32)
        out = x.astype(dt)
    if flush and out.size:
        wide = out.astype(np.float64)
        tiny = (wide != 0) & (np.abs(wide) < smallest_normal(dtype))
        if tiny.any():
            out[tiny] = np.copysign(0.0, wide[tiny]).astype(dt)
    return out


def mask_array(stream: Stream, shape: tuple[int, ...], fill: dict[str, Any]) -> np.ndarray:
    """A bool array of ``shape`` for a ``mask`` fill, row by row along the last axis.

    ``rows``: ``none`` (no True), ``one`` (exactly one True, at a random position), ``all``,
    ``prefix`` (True for a random number 0..L of leading entries: padding at the end),
    ``random`` (each entry True with chance ``p``, default 0.5; made from 53-bit uniforms
    compared with ``p``), ``mixed`` (row i takes the (i mod 5)-th of none, one, all, prefix,
    random, so that every structure appears once there are 5 rows or more; with fewer rows the
    first row's place in that order is drawn), ``nonempty``
    (random rows, and one random entry set where a row came out empty), ``causal`` (row q of
    the second-to-last axis, of Tq, is True up to position q + Tk - Tq: a query sees itself and
    what comes before it, aligned to the end when Tk > Tq). Exact and
    library-version independent (:class:`Stream` only).
    """
    shape = tuple(int(s) for s in shape)
    length = shape[-1] if shape else 1
    n_rows = int(np.prod(shape[:-1], dtype=np.int64)) if shape else 1
    out = np.zeros((n_rows, length), dtype=bool)
    how = fill.get("rows", "mixed")
    order = ("none", "one", "all", "prefix", "random")
    p = float(fill.get("p", 0.5))
    # fewer rows than structures: the first row's structure is drawn too (always starting at
    # ``none`` made every one-row mask all False: a third of dropout_with_mask's and
    # masked_mean_pool's generated cases tested nothing, round twelve of issue 32)
    start = stream.integer(0, len(order) - 1) if how == "mixed" and 0 < n_rows < len(order) and length else 0
    for i in range(n_rows if length else 0):
        kind = order[(start + i) % len(order)] if how == "mixed" else how
        if kind == "one":
            out[i, stream.integer(0, length - 1)] = True
        elif kind == "all":
            out[i, :] = True
        elif kind == "prefix":
            out[i, :stream.integer(0, length)] = True
        elif kind == "random":
            out[i, :] = stream.unit((length,)) < p
        elif kind == "nonempty":
            out[i, :] = stream.unit((length,)) < p
            if not out[i].any():
                out[i, stream.integer(0, length - 1)] = True
        elif kind == "causal":
            q_len = shape[-2] if len(shape) >= 2 else 1
            q = i % q_len
            out[i, :max(0, q + length - q_len) + 1] = True
    return out.reshape(shape)


def integer_array(stream: Stream, shape: tuple[int, ...], fill: dict[str, Any],
                  bounds: tuple[int, int] | None) -> np.ndarray:
    """int64 values of ``shape``, uniform in ``[low, high)`` of an ``integers`` fill, else in the
    parameter's domain ``bounds`` (both included), else in [0, 9]."""
    if fill.get("kind") == "integers" and ("low" in fill or "high" in fill):
        lo, hi = int(fill.get("low", 0)), int(fill.get("high", 2)) - 1
    elif bounds is not None:
        lo, hi = bounds
    else:
        lo, hi = 0, 9
    return stream.integers(lo, hi, tuple(int(s) for s in shape))


def param_array(stream: Stream, param: Parameter, shape: tuple[int, ...], fill: dict[str, Any] | None,
                dtype: str, sizes: dict[str, Any]) -> np.ndarray:
    """One input of a filled case, by the parameter's kind, in ``dtype`` (its concrete dtype).

    Float parameters: :func:`fill_array` (default fill ``normal``) rounded by :func:`cast_to`;
    integer ones: :func:`integer_array` over the parameter's domain (never a float dtype);
    bool ones: :func:`mask_array` (default ``rows: mixed``). A ``dtype`` that differs from the
    kind (a float dtype for an integer parameter, from a case's ``input_dtypes``) casts the
    values made for the kind.
    """
    if param.kind == "float":
        return cast_to(fill_array(stream, shape, fill or {"kind": "normal"}), dtype)
    if param.kind == "bool":
        values = mask_array(stream, shape, fill or {"kind": "mask"})
    else:
        values = integer_array(stream, shape, fill or {}, param.bounds(sizes))
    return as_dtype(values, dtype)


def as_dtype(values: Any, dtype: str, flush: bool = True) -> np.ndarray:
    """``values`` in ``dtype``: floats through :func:`cast_to`; integers and bool by NumPy's exact cast.

    Raises:
        ValueError: a value does not fit the integer dtype, or is not a whole number.
    """
    dt = dtype_of(dtype)
    if dt.kind == "f" or dtype == "bfloat16":
        return cast_to(values, dtype, flush)
    arr = np.asarray(values)
    if dt.kind == "b":
        return arr.astype(bool)
    wide = np.asarray(arr, dtype=np.float64) if arr.dtype.kind in "fb" else arr
    if wide.dtype.kind == "f" and (np.any(wide != np.round(wide)) or not np.all(np.isfinite(wide))):
        raise ValueError(f"values {arr.tolist()!r} are not whole numbers for {dtype}")
    info = np.iinfo(dt)
    if wide.size and (np.min(wide) < info.min or np.max(wide) > info.max):
        raise ValueError(f"values do not fit {dtype}")
    return wide.astype(dt)


def concrete_dtype(problem: Problem, spec: dict[str, Any] | None, param: Parameter, float_dtype: str,
                   index: int) -> str:
    """The dtype of ``param`` in a case of ``float_dtype``: the case's ``input_dtypes`` entry
    (``"float"`` meaning ``float_dtype``), else :meth:`Parameter.dtype_for` with ``index``."""
    override = (spec or {}).get("input_dtypes", {}).get(param.name)
    if override is not None:
        return float_dtype if override == "float" else override
    return param.dtype_for(float_dtype, index)


def fixed_cases(problem: Problem, dtypes: tuple[str, ...], seed: int) -> list[Case]:
    """The spec's fixed cases, one per (case, graded dtype), values deterministic in ``seed``.

    The values of case ``c`` in dtype ``t`` come from ``Stream(seed, "fixed", c, t)``, so they
    do not change when other cases or dtypes are added or removed. Inputs are made by parameter
    kind (:func:`param_array`); integer parameters with a list of k dtypes take the
    ((c + i) mod k)-th in the c-th case of the spec and the i-th graded dtype of ``dtypes``, so
    that both widths are graded with a single graded dtype too.

    Raises:
        ValueError: a literal input does not fit its parameter's dtype (e.g. 1.5 for int32).
    """
    out: list[Case] = []
    for number, spec in enumerate(problem.cases):
        group = problem.groups[spec["group"]]
        for index, dt in enumerate(dtypes):
            if "dtypes" in spec and dt not in spec["dtypes"]:
                continue
            name = f"{spec['name']}[{dt}]"
            # case k of the spec in its i-th graded dtype takes entry (k + i) mod len of a list of
            # integer dtypes: both widths are graded even where a framework grades one float dtype
            kinds = {p.name: concrete_dtype(problem, spec, p, dt, number + index) for p in problem.parameters}
            given = set(spec.get("inputs", {})) | set(spec.get("fill", {})) | set(spec.get("shapes", {})) \
                | set(spec.get("args", {})) | set(spec.get("pass", ()))
            present = [p for p in problem.parameters
                       if (not p.optional or p.name in given) and p.name not in spec.get("omit", ())]
            stream = Stream(seed, "fixed", spec["name"], dt)
            if "inputs" in spec:
                literal_inputs = {p.name: as_dtype(spec["inputs"][p.name], kinds[p.name]) for p in present
                                  if p.scalar is None and p.name in spec["inputs"]}
                sizes = _sizes_from_inputs(problem, literal_inputs)

                def make(p: Parameter, env: dict[str, Any]) -> np.ndarray:   # an optional array the literal leaves out
                    return param_array(stream, p, resolve_shape(p, env), None, kinds[p.name], env)
            else:
                literal_inputs = {}
                sizes = {k: (tuple(v) if isinstance(v, list) else int(v)) for k, v in spec.get("sizes", {}).items()}
                sizes.setdefault(LEAD, ())

                def make(p: Parameter, env: dict[str, Any]) -> np.ndarray:
                    shaped = replace(p, shape=tuple(spec["shapes"][p.name])) if p.name in spec.get("shapes", {}) else p
                    return param_array(stream, p, resolve_shape(shaped, env), spec.get("fill", {}).get(p.name),
                                       kinds[p.name], env)
            inputs = draw_inputs(problem, present, literal_inputs, make, spec.get("args", {}), sizes,
                                  Stream(seed, "args", spec["name"], dt), number)
            if problem.constraints and not spec.get("raises") and (broken := problem.violated(sizes, inputs)):
                raise ValueError(f"case {spec['name']} ({_describe(sizes, inputs, problem)}) breaks the constraint "
                                 f"{broken!r}: change its sizes, or make it a case that must raise")
            literal = expected_literal(problem, spec["expected"]) if "expected" in spec else None
            out.append(Case(name=name, group=spec["group"], dtype=dt, inputs=inputs, sizes=sizes,
                            compare=spec.get("compare", "tolerance"), expected_literal=literal, origin="fixed",
                            visibility=group.visibility,
                            raises=tuple(spec.get("raises", ())),
                            **call_layout(problem, inputs)))
    return out


def expected_literal(problem: Problem, value: Any) -> np.ndarray:
    """A fixed case's literal ``expected`` as :attr:`Case.expected_literal`: float64 values; for
    several outputs (a mapping of output names to literals) each output's values, None for one
    not given, packed by :func:`grader.packing.pack_outputs` (``unpack_outputs`` reads them)."""
    if not problem.several:
        return np.asarray(value, dtype=np.float64)
    from .packing import pack_outputs
    return pack_outputs([np.asarray(value[o.name], dtype=np.float64) if o.name in value else None
                         for o in problem.outputs])


def _describe(sizes: dict[str, Any], inputs: dict[str, Any], problem: Problem) -> str:
    """A case's sizes and int scalars as ``n=6, k=2``, for messages."""
    return ", ".join(f"{k}={v}" for k, v in problem.size_env(sizes, inputs).items())


def call_layout(problem: Problem, inputs: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """How a case with ``inputs`` calls the function: ``{"keywords": ..., "scalars": ...}``
    (:class:`Case`). An optional parameter is passed by keyword when the spec says ``passed:
    keyword`` (the default) or when an optional parameter before it is left out."""
    keywords: list[str] = []
    gap = False
    for p in problem.parameters:
        if p.name not in inputs:
            gap = True
        elif p.optional and (p.passed == "keyword" or gap):
            keywords.append(p.name)
    return {"keywords": tuple(keywords),
            "scalars": tuple(p.name for p in problem.parameters if p.scalar is not None and p.name in inputs)}


def scalar_value(stream: Stream, param: Parameter, sizes: dict[str, Any], ndims: dict[str, int],
                 index: int) -> np.ndarray:
    """A scalar parameter's value in one case, as a 0-d array (int64, float64 or bool).

    ``values`` are taken in turn (the ``index``-th, cycled); else an int is drawn uniformly
    from its domain (bounds resolved in ``sizes`` and the arrays' ``ndims``); else the default.

    Raises:
        ValueError: the domain is empty in this case.
    """
    dtype = param.dtype_for("float64", index)
    if param.values:
        value = param.values[index % len(param.values)]
    elif param.domain is not None:
        lo, hi = param.bounds(sizes, ndims)  # type: ignore[misc]
        value = stream.integer(lo, hi)
    else:
        value = param.default
    return np.asarray(value, dtype=dtype_of(dtype))


def draw_inputs(problem: Problem, present: list[Parameter], given_arrays: dict[str, np.ndarray],
                 make_array: Callable[[Parameter, dict[str, Any]], np.ndarray], given: dict[str, Any],
                 sizes: dict[str, Any], stream: Stream, index: int) -> dict[str, np.ndarray]:
    """A case's inputs, made in the problem's :attr:`~grader.spec.Problem.draw_order`: what a
    domain refers to first (an int scalar ``num_classes`` before labels in ``[0, num_classes)``,
    an array before an axis in ``[-ndim(x), ndim(x))``).

    ``given_arrays`` are kept as they are (literal inputs); every other present array is
    ``make_array(param, env)``, ``env`` being ``sizes`` with the int scalars made so far (and the
    defaults of optional ones left out), where its domain's bounds are read; scalars are
    ``given`` (a case's ``args``) or :func:`scalar_value` from ``stream``. Returns every input
    in the parameters' order.

    Raises:
        ValueError: a domain is empty in this case, or refers to a scalar the case leaves out
            that has no integer default.
    """
    env: dict[str, Any] = dict(sizes)
    names = {p.name for p in present}
    for p in problem.parameters:
        if p.scalar == "int" and p.name not in names and p.optional and isinstance(p.default, int):
            env.setdefault(p.name, int(p.default))
    made: dict[str, np.ndarray] = dict(given_arrays)
    ndims = {k: int(v.ndim) for k, v in made.items()}
    order = problem.draw_order or tuple(p.name for p in sorted(problem.parameters, key=lambda q: q.scalar is not None))
    for name in order:
        p = problem.parameter[name]
        if name not in names or name in made:
            continue
        try:
            if p.scalar is not None:
                made[name] = (np.asarray(given[name], dtype=dtype_of(p.dtype_for("float64", 0))) if name in given
                              else scalar_value(stream, p, env, ndims, index))
                if p.scalar == "int":
                    env[name] = int(made[name])
            else:
                made[name] = make_array(p, env)
                ndims[name] = int(made[name].ndim)
        except KeyError as exc:
            raise ValueError(f"the domain of {name} refers to {exc.args[0]}, which this case leaves out "
                             f"(give it, or a default)") from None
    return {p.name: made[p.name] for p in problem.parameters if p.name in made}


def _check_shapes(problem: Problem, inputs: dict[str, np.ndarray]) -> None:
    """Check that the inputs' shapes fit the parameters' symbolic shapes: each rank, each fixed
    size, and each size symbol (and the leading axes) the same wherever it appears.

    Raises:
        ValueError: one line naming the parameter, the symbol and both sizes (a replay with
            hidden (1, 2) and embedding_matrix (1, 3) was blamed on the reference solution).
    """
    def form(p) -> str:
        return "(" + ", ".join(str(s) for s in p.shape) + (",)" if len(p.shape) == 1 else ")")

    seen: dict[Any, tuple[Any, str]] = {}
    for p in problem.parameters:
        if p.name not in inputs or p.scalar is not None or (p.optional and inputs[p.name].ndim != len(p.shape)
                                                             and LEAD not in p.shape):
            continue  # left out, a scalar, or an optional array given in a broadcastable shape
        shape = inputs[p.name].shape
        fixed = len(p.shape) - (1 if LEAD in p.shape else 0)
        if len(shape) < fixed or (LEAD not in p.shape and len(shape) != fixed):
            raise ValueError(f"{p.name} has shape {tuple(shape)}, which does not fit its form {form(p)}")
        n_lead, i = len(shape) - fixed, 0
        for s in p.shape:
            size: Any = tuple(shape[i:i + n_lead]) if s == LEAD else shape[i]
            i += n_lead if s == LEAD else 1
            if isinstance(s, int) and size != s:
                raise ValueError(f"{p.name} has shape {tuple(shape)}, which does not fit its form {form(p)}")
            if isinstance(s, str):
                if s in seen and seen[s][0] != size:
                    what = "leading axes" if s == LEAD else s
                    raise ValueError(f"the inputs disagree on {what}: {seen[s][1]} gives {seen[s][0]}, {p.name} "
                                     f"(shape {tuple(shape)}, form {form(p)}) gives {size}")
                seen.setdefault(s, (size, p.name))


def _sizes_from_inputs(problem: Problem, inputs: dict[str, np.ndarray]) -> dict[str, Any]:
    sizes: dict[str, Any] = {}
    for p in problem.parameters:
        if p.name not in inputs or p.scalar is not None or (p.optional and sizes):
            continue  # an optional array (a mask) may broadcast: the required ones set the sizes
        shape = inputs[p.name].shape
        n_lead = len(shape) - (len(p.shape) - (1 if LEAD in p.shape else 0))
        i = 0
        for s in p.shape:
            if s == LEAD:
                sizes[LEAD] = tuple(shape[i:i + n_lead])
                i += n_lead
            else:
                if isinstance(s, str):
                    sizes[s] = shape[i]
                i += 1
    sizes.setdefault(LEAD, ())
    return sizes


def _distinct(sizes: dict[str, Any]) -> bool:
    """Every size symbol differs from the others and from every leading-axis size."""
    symbols = [v for k, v in sizes.items() if k != LEAD]
    return len(set(symbols)) == len(symbols) and not set(symbols) & set(sizes.get(LEAD, ()))


def draw_sizes(stream: Stream, gen: dict[str, Any], problem: Problem | None = None,
               rank: int | None = None) -> dict[str, Any]:
    """One size combination for generated cases, from the spec's ``generated`` ranges.

    A number of leading axes in ``leading_axes`` (``rank`` when given), each sized in ``sizes["..."]``, and every
    other size symbol in its range. Where the ranges allow, all size symbols differ from each
    other and from the leading-axis sizes (up to 200 draws), so that no axis can be confused
    with another: a missing transpose or swapped axes changes the shape. A size given as
    ``{one_of: [...]}`` is drawn from that set. With ``problem``, its ``constraints`` on sizes
    alone are met (up to 2000 draws; one with scalars is met by :func:`generated_cases`).

    Raises:
        ValueError: no draw satisfies the constraints.
    """
    rank_lo, rank_hi = gen.get("leading_axes", [0, 0])
    lead_lo, lead_hi = gen.get("sizes", {}).get(LEAD, [1, 1])
    symbols = {k: v for k, v in gen.get("sizes", {}).items() if k != LEAD}
    sizes: dict[str, Any] = {}
    fitting: dict[str, Any] | None = None
    for _ in range(200 if problem is None or not problem.constraints else 2000):
        count = stream.integer(rank_lo, rank_hi) if rank is None else rank
        sizes = {LEAD: tuple(int(x) for x in stream.integers(lead_lo, lead_hi, (count,)))}
        for sym, bounds in symbols.items():
            if isinstance(bounds, dict):   # one_of: a set of sizes
                sizes[sym] = int(bounds["one_of"][stream.integer(0, len(bounds["one_of"]) - 1)])
            else:
                sizes[sym] = stream.integer(*bounds)
        if problem is not None and problem.constraints and problem.violated(sizes, {}) is not None:
            continue
        fitting = fitting or sizes
        if _distinct(sizes):
            break
    else:
        if problem is not None and problem.constraints:
            if fitting is None:
                raise ValueError(f"no generated sizes satisfy the constraints ({'; '.join(t for t, _ in problem.constraints)}) "
                                 f"in 2000 draws from generated.sizes")
            sizes = fitting
    return sizes


def shape_pool(problem: Problem, seed: int) -> list[dict[str, Any]] | None:
    """The K size combinations generated cases cycle through, or None.

    With ``generated.shapes: K``, the generated cases of every dtype use the same K distinct
    size combinations (:func:`draw_sizes`, from ``Stream(seed, "shapes")``), case j of a dtype
    the (j mod K)-th. JAX compiles once per (shape, dtype) signature, about 18 ms of XLA per op
    (NOTES.md): this bounds the submission's compilations to K per dtype, and the reference's
    (float64 for every dtype) to K, while the values of every case are new. Without ``shapes``
    every case draws its own sizes.

    It holds every count of ``leading_axes`` when K allows (free draws gave masked_mean_pool one
    leading axis four times: ``dim=1`` scored 8.33): a missing count, drawn, replaces the latest
    entry of the commonest; a pool whose free draws cover the range is those draws.
    """
    gen = problem.generated or {}
    k = gen.get("shapes")
    if not k:
        return None
    stream = Stream(seed, "shapes")
    pool: list[dict[str, Any]] = []
    for _ in range(50 * k):
        sizes = draw_sizes(stream, gen, problem)
        if sizes not in pool:
            pool.append(sizes)
        if len(pool) >= k:
            break
    lo, hi = gen.get("leading_axes", [0, 0])
    for missing in range(lo, hi + 1):
        counts = [len(s[LEAD]) for s in pool]
        spare = max(set(counts), key=lambda c: (counts.count(c), c))
        if missing not in counts and len(pool) == k and counts.count(spare) > 1:
            at = max(i for i, c in enumerate(counts) if c == spare)
            with contextlib.suppress(ValueError):   # no sizes of that count meet the constraints
                pool[at] = next((s for s in (draw_sizes(stream, gen, problem, rank=missing) for _ in range(50))
                                 if s not in pool), pool[at])
    return pool


def generated_cases(problem: Problem, dtypes: tuple[str, ...], seed: int, count: int) -> list[Case]:
    """``count`` generated cases spread evenly over ``dtypes``, deterministic in ``seed``.

    Case j of dtype t takes its sizes from :func:`shape_pool` (or draws them) and its values
    from ``Stream(seed, "generated", t, j)`` with the spec's ``generated.values`` fills.
    """
    gen = problem.generated
    if not gen or count <= 0:
        return []
    values = gen.get("values", {})
    group = problem.groups[gen["group"]]
    out: list[Case] = []
    per = [count // len(dtypes) + (1 if i < count % len(dtypes) else 0) for i in range(len(dtypes))]
    pool = shape_pool(problem, seed)
    for dt, n in zip(dtypes, per):
        for j in range(n):
            stream = Stream(seed, "generated", dt, j)
            sizes = dict(pool[j % len(pool)]) if pool else draw_sizes(stream, gen, problem)
            optional = gen.get("optional", "alternate")
            present = [p for p in problem.parameters
                       if not p.optional or optional == "always" or (optional == "alternate" and j % 2 == 1)]
            def make(p: Parameter, env: dict[str, Any], stream: Stream = stream, j: int = j,
                     dt: str = dt) -> np.ndarray:
                return param_array(stream, p, resolve_shape(p, env), values.get(p.name), p.dtype_for(dt, j), env)

            inputs = draw_inputs(problem, present, {}, make, {}, sizes, Stream(seed, "args", "generated", dt, j), j)
            # arrays whose domain reads no scalar keep their values when the scalars are drawn again
            kept = {p.name: inputs[p.name] for p in present
                    if p.scalar is None and not domain_refs(p, problem.parameters)}
            for attempt in range(1, 200 if problem.constraints else 1):   # scalars that meet the constraints
                if problem.violated(sizes, inputs) is None:
                    break
                inputs = draw_inputs(problem, present, kept, make, {}, sizes,
                                      Stream(seed, "args", "generated", dt, j, attempt), j + attempt)
            if problem.constraints and (broken := problem.violated(sizes, inputs)) is not None:
                raise ValueError(f"generated case {len(out)} ({_describe(sizes, inputs, problem)}): no scalar values "
                                 f"satisfy the constraint {broken!r} in 200 draws")
            out.append(Case(name=f"gen{len(out):03d}[{dt}]", group=gen["group"], dtype=dt, inputs=inputs,
                            sizes=sizes, compare="tolerance", expected_literal=None, origin="generated",
                            visibility=group.visibility, **call_layout(problem, inputs)))
    return out


def cases_digest(cases: Iterable[Case]) -> str:
    """SHA-256 (hex) of the cases' names, dtypes and inputs (names, dtypes, shapes, bytes), in order.

    Two runs with the same digest graded the same inputs; the report's ``environment`` carries it.
    """
    h = hashlib.sha256()
    for case in cases:
        h.update(f"{case.name}\0{case.dtype}\0".encode("utf-8", "surrogatepass"))
        for name, arr in case.inputs.items():
            a = np.ascontiguousarray(arr)
            h.update(f"{name}\0{a.dtype.name}\0{a.shape}\0".encode())
            h.update(a.tobytes())
    return h.hexdigest()


def content_key(case: Case) -> str:
    """SHA-256 (hex) of what a case's expected value depends on besides the problem: its dtype,
    comparison, the error it must raise, and its inputs (names, dtypes, shapes, bytes). Two cases
    with the same key have the same reference values, whatever their names or case sets."""
    h = hashlib.sha256(f"{case.dtype}\0{case.compare}\0{case.raises}\0".encode())
    for name, arr in case.inputs.items():
        a = np.ascontiguousarray(arr)
        h.update(f"{name}\0{a.dtype.name}\0{a.shape}\0".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def case_from_literal(problem: Problem, literal: dict[str, Any]) -> Case:
    """A case from a replay literal ``{"dtype": ..., "<param>": nested list, ...}``.

    An array with an axis of size 0 cannot be told by its nested list (``[]`` is ``(0,)``, not
    ``(0, 4)``): its shape comes from the optional ``"shapes": {"<param>": [0, 4]}``.

    Raises:
        ValueError: a parameter is missing, the dtype is unknown, or a shape does not fit.
    """
    dt = literal.get("dtype")
    if not isinstance(dt, str):
        raise ValueError("the replay case needs a 'dtype'")
    dtype_of(dt)
    missing = [p.name for p in problem.parameters if p.name not in literal and not p.optional]
    if missing:
        raise ValueError(f"the replay case lacks {', '.join(missing)}")
    given = literal.get("dtypes") or {}
    if not isinstance(given, dict):
        raise ValueError("'dtypes' must map parameter names to dtype names, e.g. {\"token_ids\": \"int64\"}")
    inputs = {p.name: as_dtype(literal[p.name], str((given.get(p.name) if p.scalar is None else None)
                                                    or p.dtype_for(dt, 0)), flush=False)
              for p in problem.parameters if p.name in literal}
    with np.errstate(all="ignore"):   # how many values the literal itself gives as inf or NaN
        given_non_finite = {k: int(np.count_nonzero(~np.isfinite(np.asarray(literal[k], dtype=np.float64))))
                            for k, v in inputs.items() if v.dtype.kind == "f" or v.dtype.name == "bfloat16"}
    for name in [k for k, v in inputs.items() if problem.parameter[k].scalar is not None and v.ndim]:
        raise ValueError(f"{name} is a scalar parameter: give it a single number")
    shapes = literal.get("shapes") or {}
    if not isinstance(shapes, dict):
        raise ValueError("'shapes' must map parameter names to shapes, e.g. {\"hidden\": [0, 4]}")
    from .protocol import MAX_DIMS
    for name, shape in shapes.items():
        if name in inputs:
            if isinstance(shape, (list, tuple)) and len(shape) > MAX_DIMS:  # NumPy 1.x cannot even reshape to it
                raise ValueError(f"{name} has {len(shape)} axes; a submission's inputs have at most {MAX_DIMS}")
            try:
                inputs[name] = inputs[name].reshape(tuple(int(s) for s in shape))
            except (TypeError, ValueError):
                raise ValueError(f"shapes.{name}={shape!r} does not fit its {inputs[name].size} values") from None
    group = str(literal.get("group", "replay"))
    raises = literal.get("raises") or ()
    if not isinstance(raises, (list, tuple)) or not all(isinstance(r, str) for r in raises):
        raise ValueError("'raises' must be a list of exception type names")
    for name, arr in inputs.items():
        if arr.ndim > MAX_DIMS:
            raise ValueError(f"{name} has {arr.ndim} axes; a submission's inputs have at most {MAX_DIMS}")
        # an infinity or NaN the case holds replays as it is (JSON's Infinity, NaN: embedding_lookup's
        # special_rows); a finite number its dtype cannot hold is refused
        if name in given_non_finite and \
                int(np.count_nonzero(~np.isfinite(arr.astype(np.float64)))) > given_non_finite[name]:
            raise ValueError(f"{name} holds a value that is not a finite {arr.dtype.name} number (beyond its "
                             f"range): a replay's finite values must fit the dtype")
    if not raises:  # a case that must raise may have any shapes; any other must fit the spec
        _check_shapes(problem, inputs)
    compare = literal.get("compare", "tolerance")
    if compare not in ("tolerance", "exact"):
        raise ValueError("'compare' must be \"tolerance\" or \"exact\"")
    return Case(name=f"replay[{dt}]", group=group, dtype=dt, inputs=inputs, sizes=_sizes_from_inputs(problem, inputs),
                compare=compare, expected_literal=None, origin="replay", visibility="visible", raises=tuple(raises),
                **call_layout(problem, inputs))


def case_literal(case: Case) -> dict[str, Any]:
    """The replay literal of a case: its dtype and inputs as nested lists of exact floats."""
    lit: dict[str, Any] = {"dtype": case.dtype}
    for name, arr in case.inputs.items():
        lit[name] = arr.tolist() if arr.dtype.kind in "biu" else np.asarray(arr, dtype=np.float64).tolist()
    others = {name: arr.dtype.name for name, arr in case.inputs.items() if arr.dtype.name != case.dtype}
    if others:
        lit["dtypes"] = others  # integer, bool or other-float inputs keep their dtype
    if case.raises:
        lit["raises"] = list(case.raises)
    if case.compare == "exact":
        lit["compare"] = "exact"  # an exact probe replays as one, not under the tolerance
    empty = {name: list(arr.shape) for name, arr in case.inputs.items() if arr.size == 0 and arr.ndim > 1}
    if empty:
        lit["shapes"] = empty  # a nested list cannot carry a shape with a 0 in it
    return lit
