"""Test cases: the spec's fixed cases and hypothesis-generated ones, as concrete arrays.

Everything here is read out of the problem spec (sizes, fills, dtypes, groups); nothing is
specific to one problem. A :class:`Case` holds the inputs already rounded to the case's dtype:
those exact arrays go to the submission, and their float64 images go to the reference.

Fixed cases are deterministic in ``(seed, case name, dtype)``. Generated cases come from
hypothesis strategies with ``@seed(seed)``, ``database=None`` (no example database is ever
written) and ``deadline=None``; the same seed gives the same cases on every machine with the
same hypothesis version. :func:`case_strategy` is also what ``grader.shrink`` shrinks over.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .dtypes import dtype_of
from .spec import LEAD, Parameter, Problem

Z_BOUND = 4.0  # standard scores drawn by hypothesis lie in [-4, 4]


@dataclass
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

    @property
    def rank(self) -> int:
        """Number of axes of the first parameter (for grouping failures by rank)."""
        return int(next(iter(self.inputs.values())).ndim)

    @property
    def size(self) -> int:
        """Largest element count of any input."""
        return max(int(a.size) for a in self.inputs.values())


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


def _range(value: Any, default: tuple[float, float]) -> tuple[float, float]:
    if value is None:
        return default
    if isinstance(value, (int, float)):
        return (float(value), float(value))
    return (float(value[0]), float(value[1]))


def fill_array(rng: np.random.Generator, shape: tuple[int, ...], fill: dict[str, Any]) -> np.ndarray:
    """float64 values of ``shape`` for a spec fill (``normal``, ``uniform``, ``zeros``, ``basis``).

    ``normal``: each row (last axis) is ``mean + scale * z`` with z ~ N(0, 1) clipped to
    [-4, 4], and a mean and scale drawn per row from the ``mean`` / ``scale`` ranges.
    ``uniform``: magnitudes in [low, high], with random signs if ``random_sign``.
    ``zeros``: all 0 (-0.0 if ``negative``). ``basis``: row i is ``scale * e_(i mod d)``.
    ``integers``: uniform integers in [low, high).
    """
    kind = fill.get("kind", "normal")
    if kind == "zeros":
        return np.full(shape, -0.0 if fill.get("negative") else 0.0)
    if kind == "basis":
        out = np.zeros(shape)
        d = shape[-1] if shape else 1
        flat = out.reshape(-1, d) if out.size else out
        for i in range(flat.shape[0] if out.size else 0):
            flat[i, i % d] = float(fill.get("scale", 1.0))
        return out
    if kind == "uniform":
        lo, hi = float(fill.get("low", -1.0)), float(fill.get("high", 1.0))
        out = rng.uniform(lo, hi, size=shape)
        if fill.get("random_sign"):
            out *= rng.choice([-1.0, 1.0], size=shape)
        return out
    if kind == "integers":
        return rng.integers(int(fill.get("low", 0)), int(fill.get("high", 2)), size=shape).astype(np.float64)
    lead = shape[:-1] + (1,) if shape else ()
    mlo, mhi = _range(fill.get("mean"), (0.0, 0.0))
    slo, shi = _range(fill.get("scale"), (1.0, 1.0))
    z = np.clip(rng.standard_normal(shape), -Z_BOUND, Z_BOUND)
    out = rng.uniform(mlo, mhi, size=lead) + rng.uniform(slo, shi, size=lead) * z
    if fill.get("asymmetric") and len(shape) == 2 and shape[0] == shape[1] and shape[0] > 1:
        out[0, 1] = out[1, 0] + 1.0  # never symmetric, whatever the draw
    return out


def _f32(x: float) -> float:
    """``x`` rounded to float32 (hypothesis wants float bounds representable at width 32)."""
    return float(np.float32(x))


def _cast(values: Any, dtype: str) -> np.ndarray:
    return np.asarray(values, dtype=np.float64).astype(dtype_of(dtype))


def fixed_cases(problem: Problem, dtypes: tuple[str, ...], seed: int) -> list[Case]:
    """The spec's fixed cases, one per (case, graded dtype), values deterministic in ``seed``."""
    out: list[Case] = []
    for spec in problem.cases:
        group = problem.groups[spec["group"]]
        for dt_index, dt in enumerate(dtypes):
            if "dtypes" in spec and dt not in spec["dtypes"]:
                continue
            name = f"{spec['name']}[{dt}]"
            if "inputs" in spec:
                inputs = {p.name: _cast(spec["inputs"][p.name], dt) for p in problem.parameters}
                sizes = _sizes_from_inputs(problem, inputs)
            else:
                sizes = {k: (tuple(v) if isinstance(v, list) else int(v)) for k, v in spec["sizes"].items()}
                sizes.setdefault(LEAD, ())
                rng = np.random.default_rng([seed, zlib.crc32(spec["name"].encode()), dt_index])
                inputs = {}
                for p in problem.parameters:
                    fill = spec.get("fill", {}).get(p.name, {"kind": "normal"})
                    inputs[p.name] = _cast(fill_array(rng, resolve_shape(p, sizes), fill), dt)
            literal = np.asarray(spec["expected"], dtype=np.float64) if "expected" in spec else None
            out.append(Case(name, spec["group"], dt, inputs, sizes, spec.get("compare", "tolerance"),
                            literal, "fixed", group.visibility))
    return out


def _sizes_from_inputs(problem: Problem, inputs: dict[str, np.ndarray]) -> dict[str, Any]:
    sizes: dict[str, Any] = {}
    for p in problem.parameters:
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


def shape_pool(problem: Problem, seed: int) -> list[dict[str, Any]] | None:
    """The sizes generated cases may take when the spec caps distinct shapes, else None.

    With ``generated.shapes: K``, generated cases of a dtype share K size combinations: the
    smallest one the ranges allow (no leading axes, every size at its minimum; so shrinking can
    still reach the smallest input) and K - 1 drawn uniformly, deterministic in ``seed``. JAX
    compiles once per (shape, dtype) signature, about 30-90 ms each (NOTES.md), so this bounds
    the cost of generated cases for JAX submissions while values stay fully random.
    """
    gen = problem.generated or {}
    k = gen.get("shapes")
    if not k:
        return None
    rank_lo, rank_hi = gen.get("leading_axes", [0, 0])
    lead_lo, lead_hi = gen["sizes"].get(LEAD, [1, 1])
    symbols = {sym: rng for sym, rng in gen["sizes"].items() if sym != LEAD}
    pool = [{LEAD: (lead_lo,) * rank_lo, **{sym: lo for sym, (lo, _) in symbols.items()}}]
    rng = np.random.default_rng([seed, 0x5EED])
    for _ in range(50 * k):
        if len(pool) >= k:
            break
        rank = int(rng.integers(rank_lo, rank_hi + 1))
        sizes = {LEAD: tuple(int(x) for x in rng.integers(lead_lo, lead_hi + 1, size=rank)),
                 **{sym: int(rng.integers(lo, hi + 1)) for sym, (lo, hi) in symbols.items()}}
        if sizes not in pool:
            pool.append(sizes)
    return pool


def case_strategy(problem: Problem, dtype: str, seed: int = 0) -> Any:
    """A hypothesis strategy of :class:`Case` in ``dtype`` following the spec's ``generated``.

    Shapes: a number of leading axes in ``leading_axes`` with sizes in ``sizes["..."]``, every
    other size symbol in its range (or one of :func:`shape_pool` for ``seed`` when the spec
    caps distinct shapes). Values: ``mean + scale * z`` per row with z drawn by
    hypothesis in [-4, 4] (float32-representable, no subnormals), so that shrinking moves
    toward small shapes and simple values (z -> 0, the mean and scale toward their bounds).
    """
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp

    gen = problem.generated or {}
    rank_lo, rank_hi = gen.get("leading_axes", [0, 0])
    lead_lo, lead_hi = gen["sizes"].get(LEAD, [1, 1])
    symbols = {k: v for k, v in gen["sizes"].items() if k != LEAD}
    values = gen.get("values", {})
    z_elems = st.floats(-Z_BOUND, Z_BOUND, allow_nan=False, allow_infinity=False,
                        allow_subnormal=False, width=32)

    pool = shape_pool(problem, seed)

    @st.composite
    def draw(data: Any) -> Case:
        if pool is not None:
            sizes: dict[str, Any] = dict(data(st.sampled_from(pool)))
        else:
            rank = data(st.integers(rank_lo, rank_hi))
            sizes = {LEAD: tuple(data(st.lists(st.integers(lead_lo, lead_hi), min_size=rank, max_size=rank)))}
            for sym, (lo, hi) in symbols.items():
                sizes[sym] = data(st.integers(lo, hi))
        inputs = {}
        for p in problem.parameters:
            shape = resolve_shape(p, sizes)
            fill = values.get(p.name, {"kind": "normal"})
            if fill.get("kind", "normal") != "normal":
                rng = np.random.default_rng(data(st.integers(0, 2**32 - 1)))
                arr = fill_array(rng, shape, fill)
            else:
                rows = shape[:-1] + (1,) if shape else ()
                mlo, mhi = (_f32(x) for x in _range(fill.get("mean"), (0.0, 0.0)))
                slo, shi = (_f32(x) for x in _range(fill.get("scale"), (1.0, 1.0)))
                mean = data(hnp.arrays(np.float64, rows, elements=st.floats(mlo, mhi, width=32)))
                scale = data(hnp.arrays(np.float64, rows, elements=st.floats(slo, shi, width=32)))
                z = data(hnp.arrays(np.float64, shape, elements=z_elems))
                arr = mean + scale * z
            inputs[p.name] = _cast(arr, dtype)
        group = problem.groups[gen["group"]]
        return Case("", gen["group"], dtype, inputs, sizes, "tolerance", None, "generated", group.visibility)

    return draw()


def generated_cases(problem: Problem, dtypes: tuple[str, ...], seed: int, count: int) -> list[Case]:
    """``count`` generated cases spread evenly over ``dtypes``, deterministic in ``seed``."""
    if not problem.generated or count <= 0:
        return []
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    out: list[Case] = []
    per = [count // len(dtypes) + (1 if i < count % len(dtypes) else 0) for i in range(len(dtypes))]
    for i, (dt, n) in enumerate(zip(dtypes, per)):
        if n == 0:
            continue
        drawn: list[Case] = []

        @hseed(seed * 1000 + i)
        @settings(max_examples=n, database=None, deadline=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck), derandomize=False)
        @given(case_strategy(problem, dt, seed))
        def collect(case: Case) -> None:
            if len(drawn) < n:
                drawn.append(case)

        collect()
        for j, case in enumerate(drawn):
            case.name = f"gen{len(out) + j:03d}[{dt}]"
        out.extend(drawn)
    return out


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
    missing = [p.name for p in problem.parameters if p.name not in literal]
    if missing:
        raise ValueError(f"the replay case lacks {', '.join(missing)}")
    inputs = {p.name: _cast(literal[p.name], dt) for p in problem.parameters}
    shapes = literal.get("shapes") or {}
    if not isinstance(shapes, dict):
        raise ValueError("'shapes' must map parameter names to shapes, e.g. {\"hidden\": [0, 4]}")
    for name, shape in shapes.items():
        if name in inputs:
            try:
                inputs[name] = inputs[name].reshape(tuple(int(s) for s in shape))
            except (TypeError, ValueError):
                raise ValueError(f"shapes.{name}={shape!r} does not fit its {inputs[name].size} values") from None
    group = str(literal.get("group", "replay"))
    return Case(f"replay[{dt}]", group, dt, inputs, _sizes_from_inputs(problem, inputs), "tolerance",
                None, "replay", "visible")


def case_literal(case: Case) -> dict[str, Any]:
    """The replay literal of a case: its dtype and inputs as nested lists of exact floats."""
    lit: dict[str, Any] = {"dtype": case.dtype}
    for name, arr in case.inputs.items():
        lit[name] = np.asarray(arr, dtype=np.float64).tolist()
    empty = {name: list(arr.shape) for name, arr in case.inputs.items() if arr.size == 0 and arr.ndim > 1}
    if empty:
        lit["shapes"] = empty  # a nested list cannot carry a shape with a 0 in it
    return lit
