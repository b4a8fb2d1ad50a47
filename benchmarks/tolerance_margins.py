"""Margins of the tolerance rule: how close correct code comes to it, how far wrong code lands.

For every graded dtype this draws ``--cases`` inputs (default 1000 per dtype) of
``tied_lm_head`` (``hidden @ embedding_matrix.T``), runs a set of correct implementations and a
set of wrong ones on them in this process, and for each (implementation, case) computes the
case's worst ratio ``max(|got - ref| / allowed)`` with ``allowed`` from
:func:`grader.compare.allowed_error` and ``ref``, ``S`` from the grader's own reference
(:func:`grader.reference.evaluate`, JAX float64). A case fails when the ratio exceeds 1.

Printed (and written as JSON with ``--json FILE``):

* correct implementations: the worst (largest) ratio per dtype; the target is <= 0.5;
* outside the model: summing in the half dtype itself, measured for the record;
* wrong implementations: the smallest ratio per dtype over the cases where the mistake changes
  the result at all (e.g. 1/sqrt(d) only where d > 1), and the share of cases caught; the
  target is >= 10, and where it cannot be (a small bias against a large S) the exact probes of
  problems/tied_lm_head.yaml have to catch the mistake: those are checked too (section
  "exact probes": correct code must be exact, wrong code must not be).

Inputs come from a fixed pool of shapes (d_model from 1 to 1024, V = d_model included, leading
axes from none to three) so that JAX compiles each signature once, and from several value
styles: the spec's rows with a random mean and scale, centred N(0, 1) (heavy cancellation),
hypothesis-like values (zeros, repeats, bounds, small integers), values near float16's range
(S up to about 2e4) and tiny values (float16 subnormal outputs).

    python benchmarks/tolerance_margins.py [--cases 1000] [--seed 0] [--dtypes float16,...]
                                           [--compare-rules] [--json FILE]

``--compare-rules`` also measures alternative half-dtype terms (how the rule was chosen).
The mistakes are computed in long double and rounded once (the most accurate way to be wrong),
and counted only for inputs where they change the exact result.

About a minute on 2 cores for the default 1000 cases per dtype (``--compare-rules`` included).
The last section grades the mistakes on the grader's own cases (the spec's fixed cases and its
36 generated ones): a submission fails when any case fails, so that is what a learner meets.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from grader import reference  # noqa: E402
from grader.compare import allowed_error  # noqa: E402
from grader.dtypes import dtype_of  # noqa: E402
from grader.spec import find_problem, load_problem  # noqa: E402

DTYPES = ("bfloat16", "float16", "float32", "float64")
HALF = ("bfloat16", "float16")
F16_S_MAX = 2.0e4  # keep S (and so every partial sum) well under float16's 65504


# ---------------------------------------------------------------------------------------------
# inputs

def shape_pool(rng: np.random.Generator) -> list[tuple[tuple[int, ...], int, int]]:
    """(leading axes, d_model, vocab_size) triples: fixed corners, squares, then random ones."""
    leads = [(), (1,), (3,), (4,), (2, 3), (2, 1, 3), (1, 1, 1), (3, 2)]
    ds = [1, 2, 3, 4, 5, 7, 8, 13, 16, 24, 32, 64, 128, 256, 512, 1024]
    vs = [1, 2, 3, 5, 8, 11, 24, 33]
    pool = [((), 1, 1), ((3,), 1, 5), ((2,), 2, 3), ((4,), 1024, 8), ((2, 3), 512, 5), ((1,), 24, 1)]
    pool += [((3,), 4, 4), ((2,), 16, 16), ((2, 2), 3, 3), ((1,), 64, 64), ((), 2, 2), ((3,), 24, 24)]
    while len(pool) < 48:
        pool.append((leads[rng.integers(len(leads))], int(rng.choice(ds)), int(rng.choice(vs))))
    return pool


def _hypothesis_like(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Values the way hypothesis draws them: zeros, repeats, the bounds, small integers, normals."""
    choice = rng.integers(5)
    if choice == 0:  # one repeated value
        return np.full(shape, float(rng.choice([0.0, 1.0, -4.0, 4.0, rng.uniform(-4, 4)])))
    z = np.clip(rng.standard_normal(shape), -4, 4)
    mask = rng.random(shape)
    z = np.where(mask < 0.2, 0.0, z)
    z = np.where((mask >= 0.2) & (mask < 0.3), rng.choice([-4.0, 4.0, 1.0, -1.0, 2.0], size=shape), z)
    if choice == 1:
        z = np.round(z)
    return z


def draw_inputs(rng: np.random.Generator, lead: tuple[int, ...], d: int, v: int, style: str,
                dtype: str) -> dict[str, np.ndarray]:
    """One case's ``hidden`` (lead + (d,)) and ``embedding_matrix`` (v, d), rounded to ``dtype``."""
    hs, es = lead + (d,), (v, d)
    if style == "rows":  # the spec's generated values: per-row mean and scale
        z = np.clip(rng.standard_normal(hs), -4, 4)
        h = rng.uniform(-3, 3, lead + (1,)) + rng.uniform(0.01, 4, lead + (1,)) * z
        e = rng.uniform(0.01, 2, (v, 1)) * np.clip(rng.standard_normal(es), -4, 4)
    elif style == "centred":
        h, e = rng.standard_normal(hs), rng.standard_normal(es)
    elif style == "hypothesis":
        h = rng.uniform(-3, 3) + rng.uniform(0.01, 4) * _hypothesis_like(rng, hs)
        e = rng.uniform(0.01, 2) * _hypothesis_like(rng, es)
    elif style == "wide":  # near float16's range: |h|, |e| up to sqrt(F16_S_MAX / d)
        top = math.sqrt(F16_S_MAX / d)
        h = rng.uniform(0.5, 1.0, hs) * top * rng.choice([-1.0, 1.0], hs)
        e = rng.uniform(0.5, 1.0, es) * top * rng.choice([-1.0, 1.0], es)
    elif style == "tiny":  # products around 1e-6: float16 subnormal outputs
        h = 1e-3 * rng.standard_normal(hs)
        e = 1e-3 * rng.standard_normal(es)
    else:
        raise ValueError(style)
    h, e = h.astype(dtype_of(dtype)), e.astype(dtype_of(dtype))
    if dtype == "float16":
        s = np.abs(h.astype(np.float64)) @ np.abs(e.astype(np.float64)).T
        top = float(np.max(s)) if s.size else 0.0
        if top > F16_S_MAX:
            k = 2.0 ** -math.ceil(math.log2(top / F16_S_MAX) / 2)
            h, e = (h * np.float16(k)).astype(np.float16), (e * np.float16(k)).astype(np.float16)
    return {"hidden": h, "embedding_matrix": e}


STYLES = ("rows", "centred", "hypothesis", "wide", "tiny")


# ---------------------------------------------------------------------------------------------
# implementations

def _jax() -> Any:
    import jax
    jax.config.update("jax_enable_x64", True)
    return jax


def _as(x: Any, dt: str) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype == np.longdouble:  # ml_dtypes has no cast from long double
        x = x.astype(np.float64)
    return x.astype(dtype_of(dt))


def _fsum_loop(h: np.ndarray, e: np.ndarray) -> np.ndarray:
    h64, e64 = h.astype(np.float64), e.astype(np.float64)
    rows = h64.reshape(-1, h64.shape[-1])
    out = np.array([[math.fsum(r * col) for col in e64] for r in rows])
    return out.reshape(h.shape[:-1] + (e.shape[0],))


def _sequential_in_dtype(h: np.ndarray, e: np.ndarray) -> np.ndarray:
    """``acc += h[k] * e[k]`` in the input dtype, one rounding per product and per addition."""
    acc = np.zeros(h.shape[:-1] + (e.shape[0],), dtype=h.dtype)
    for k in range(h.shape[-1]):
        acc = (acc + (h[..., None, k] * e[:, k]).astype(h.dtype)).astype(h.dtype)
    return acc


def correct_impls() -> dict[str, tuple[tuple[str, ...], Callable[[np.ndarray, np.ndarray, str], np.ndarray]]]:
    """name -> (dtypes it is graded in, fn(hidden, table, dtype) -> output in dtype)."""
    jax = _jax()
    jnp = jax.numpy
    jit_einsum = jax.jit(lambda h, e: jnp.einsum("...d,vd->...v", h, e))
    np3 = ("float16", "float32", "float64")
    return {
        "numpy matmul": (np3, lambda h, e, dt: h @ e.T),
        "numpy einsum": (np3, lambda h, e, dt: np.einsum("...d,vd->...v", h, e)),
        "numpy dot": (np3, lambda h, e, dt: np.dot(h, e.T)),
        "wide accumulation, cast back": (DTYPES, lambda h, e, dt: _as(
            h.astype(np.longdouble if dt == "float64" else np.float32)
            @ e.astype(np.longdouble if dt == "float64" else np.float32).T, dt)),
        "numpy broadcast multiply + sum": (np3, lambda h, e, dt: (h[..., None, :] * e).sum(-1)),
        "numpy multiply + sum over axis -2": (np3, lambda h, e, dt: (h[..., :, None] * e.T).sum(-2)),
        "python loop, math.fsum": (DTYPES, lambda h, e, dt: _as(_fsum_loop(h, e), dt)),
        "jax matmul": (DTYPES, lambda h, e, dt: np.asarray(jnp.matmul(h, e.T))),
        "jax jit einsum": (DTYPES, lambda h, e, dt: np.asarray(jit_einsum(h, e))),
        "jax broadcast multiply + sum": (DTYPES, lambda h, e, dt: np.asarray(
            (jnp.asarray(h)[..., None, :] * e).sum(-1))),
        "jax matmul, float32 accumulator": (HALF, lambda h, e, dt: np.asarray(jnp.matmul(
            h, e.T, preferred_element_type=jnp.float32).astype(h.dtype))),
    }


def outside_impls() -> dict[str, tuple[tuple[str, ...], Callable[..., np.ndarray]]]:
    """Implementations outside the model, measured for the record (not counted as correct)."""
    return {"loop over d_model, accumulator in the half dtype": (HALF, lambda h, e, dt: _sequential_in_dtype(h, e)),
            "numpy bfloat16 broadcast multiply + sum (sequential)": (("bfloat16",),
                                                                    lambda h, e, dt: (h[..., None, :] * e).sum(-1))}


def _logits64(h: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Exact logits as far as long double goes (64-bit significand on x86: float16/bfloat16/float32
    products and sums of up to 2**11 terms are exact; float64 ones carry 2**-64 relative error)."""
    return np.matmul(h.astype(np.longdouble), e.astype(np.longdouble).T)


def _softmax(x: np.ndarray) -> np.ndarray:
    z = np.exp(x - x.max(-1, keepdims=True))
    return z / z.sum(-1, keepdims=True)


Applies = Callable[[np.ndarray, np.ndarray, str], bool]


def _always(h: np.ndarray, e: np.ndarray, dt: str) -> bool:
    return True


def wrong_impls() -> dict[str, tuple[tuple[str, ...], Applies, Callable[..., np.ndarray]]]:
    """name -> (dtypes, runs(h, e, dt): the mistake can run on these shapes, fn).

    Each returns its mistake computed as exactly as long double allows, unrounded; the benchmark
    rounds it to the dtype once. That is the most accurate way to be wrong: whatever rounding a
    real submission adds only moves it further away. Comparing the unrounded value with the
    exact logits also tells whether the mistake changes the result at all for an input.
    """
    ld = np.longdouble

    def nz(x: np.ndarray) -> np.ndarray:
        x = x.astype(ld)
        n = np.sqrt((x * x).sum(-1, keepdims=True))
        return x / np.where(n > 0, n, ld(1))

    square = lambda h, e, dt: e.shape[0] == e.shape[1]  # noqa: E731
    return {
        "softmax": (DTYPES, _always, lambda h, e, dt: _softmax(_logits64(h, e))),
        "log-softmax": (DTYPES, _always, lambda h, e, dt: np.log(_softmax(_logits64(h, e)))),
        "bias 0.5": (DTYPES, _always, lambda h, e, dt: _logits64(h, e) + ld(0.5)),
        "bias 1e-3": (DTYPES, _always, lambda h, e, dt: _logits64(h, e) + ld(1e-3)),
        "factor 1/sqrt(d)": (DTYPES, _always, lambda h, e, dt: _logits64(h, e) / np.sqrt(ld(h.shape[-1]))),
        "mean instead of sum (1/d)": (DTYPES, _always, lambda h, e, dt: _logits64(h, e) / ld(h.shape[-1])),
        "factor 0.99": (DTYPES, _always, lambda h, e, dt: _logits64(h, e) * ld(0.99)),
        "hidden normalised": (DTYPES, _always, lambda h, e, dt: nz(h) @ e.astype(ld).T),
        "cosine similarity": (DTYPES, _always, lambda h, e, dt: nz(h) @ nz(e).T),
        "missing transpose (V = d)": (DTYPES, square, lambda h, e, dt: h.astype(ld) @ e.astype(ld)),
        "float64 computed in float32": (("float64",), _always,
                                        lambda h, e, dt: h.astype(np.float32) @ e.astype(np.float32).T),
        "sign flipped": (DTYPES, _always, lambda h, e, dt: -_logits64(h, e)),
        "ReLU": (DTYPES, _always, lambda h, e, dt: np.maximum(_logits64(h, e), 0)),
        "row mean subtracted": (DTYPES, _always,
                                lambda h, e, dt: _logits64(h, e) - _logits64(h, e).mean(-1, keepdims=True)),
        "last feature dropped": (DTYPES, _always, lambda h, e, dt: _logits64(h[..., :-1], e[:, :-1])),
    }


# ---------------------------------------------------------------------------------------------
# measuring

Rule = Callable[[str, np.ndarray, np.ndarray, int], np.ndarray]


def _half_term_rule(coefficient: Callable[[int], float]) -> Rule:
    """The grader's rule with the half-dtype term ``coefficient(n) * u_out * S`` instead."""
    from grader.tolerance import HALF_PRODUCT_FACTOR
    from grader.dtypes import unit_roundoff

    def rule(dt: str, ref: np.ndarray, scale: np.ndarray, n: int) -> np.ndarray:
        u = unit_roundoff(dt)
        out = allowed_error(dt, ref, scale, n)  # the grader's rule, then its half term swapped
        return out + ((coefficient(n) - HALF_PRODUCT_FACTOR) * u * scale if dt in HALF else 0.0)
    return rule


RULES: dict[str, Rule] = {"grader": lambda dt, ref, scale, n: allowed_error(dt, ref, scale, n)}
ALTERNATIVES: dict[str, Rule] = {
    "half term (1 + ceil(log2 n)) u S (NOTES)": _half_term_rule(lambda n: 1 + math.ceil(math.log2(max(n, 1)))),
    "half term (2 + ceil(log2 n)) u S": _half_term_rule(lambda n: 2 + math.ceil(math.log2(max(n, 1)))),
    "half term 3 u S": _half_term_rule(lambda n: 3.0),
    "half term 2 u S": _half_term_rule(lambda n: 2.0),
}


@dataclass
class Tally:
    """Ratios of one implementation in one dtype under one rule."""

    worst: float = 0.0
    worst_case: str = ""
    smallest: float = math.inf
    smallest_case: str = ""
    cases: int = 0
    caught: int = 0


def case_ratio(rule: Rule, got: np.ndarray, ref: np.ndarray, scale: np.ndarray, n: int, dt: str) -> float:
    """max |got - ref| / allowed over the elements (inf for NaN/inf or a wrong shape)."""
    g = np.asarray(got).astype(np.float64)
    if g.shape != ref.shape or not np.all(np.isfinite(g)):
        return math.inf
    if ref.size == 0:
        return 0.0
    return float(np.max(np.abs(g - ref) / rule(dt, ref, scale, n)))


def describe(inputs: dict[str, np.ndarray], style: str) -> str:
    """``"hidden (2, 8), V 5, rows"`` for a case."""
    h, e = inputs["hidden"], inputs["embedding_matrix"]
    return f"hidden {tuple(h.shape)}, V {e.shape[0]}, {style}"


def probe_cases(rng: np.random.Generator, dt: str) -> list[dict[str, np.ndarray]]:
    """The spec's exact probes (zero rows, -0.0, 2*e_k, -0.5*e_k, e_k) on shapes with d from 1 to 512."""
    out = []
    for lead, d, v in [((3,), 4, 5), ((2, 2), 3, 6), ((2,), 1, 4), ((4,), 64, 7), ((5,), 512, 3), ((3,), 3, 3)]:
        e = np.clip(rng.standard_normal((v, d)), -4, 4).astype(dtype_of(dt))
        for scale in (0.0, -0.0, 2.0, -0.5, 1.0):
            h = np.full(lead + (d,), scale if scale == 0.0 else 0.0)
            flat = h.reshape(-1, d)
            if scale != 0.0:
                for i in range(flat.shape[0]):
                    flat[i, i % d] = scale
            out.append({"hidden": h.astype(dtype_of(dt)), "embedding_matrix": e})
    return out


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    wide = np.longdouble if np.longdouble in (a.dtype, b.dtype) else np.float64
    return a.shape == b.shape and bool(np.array_equal(a.astype(wide), b.astype(wide)))


def measure(dtypes: tuple[str, ...], cases: int, seed: int, rules: dict[str, Rule]) -> dict[str, Any]:
    """Run every implementation on ``cases`` inputs per dtype; the tallies per (rule, impl, dtype)."""
    problem = load_problem(find_problem("tied_lm_head"))
    rng = np.random.default_rng(seed)
    pool = shape_pool(rng)
    good, outside, bad = correct_impls(), outside_impls(), wrong_impls()
    tallies: dict[tuple[str, str, str], Tally] = {}
    probes: dict[tuple[str, str], list[int]] = {}
    t0 = time.monotonic()
    for dt in dtypes:
        for i in range(cases):
            lead, d, v = pool[i % len(pool)]
            style = STYLES[(i // len(pool)) % len(STYLES)]
            inputs = draw_inputs(rng, lead, d, v, style, dt)
            ref, scale = reference.evaluate(problem, inputs)
            h, e = inputs["hidden"], inputs["embedding_matrix"]
            where = describe(inputs, style)
            outputs = []
            for name, (dts, fn) in list(good.items()) + list(outside.items()):
                if dt in dts:
                    with np.errstate(all="ignore"):
                        outputs.append((name, True, _as(fn(h, e, dt), dt)))
            exact = _logits64(h, e)
            for name, (dts, runs, fn) in bad.items():
                if dt in dts and runs(h, e, dt):
                    with np.errstate(all="ignore"):
                        raw = np.asarray(fn(h, e, dt))
                    if not _same(raw, exact):  # else the mistake does not change this result
                        outputs.append((name, False, _as(raw, dt)))
            for rule_name, rule in rules.items():
                for name, is_correct, got in outputs:
                    with np.errstate(all="ignore"):
                        r = case_ratio(rule, got, ref, scale, d, dt)
                    t = tallies.setdefault((rule_name, name, dt), Tally())
                    t.cases += 1
                    t.caught += r > 1
                    if is_correct and r > t.worst:
                        t.worst, t.worst_case = r, where
                    if not is_correct and r < t.smallest:
                        t.smallest, t.smallest_case = r, where
        # exact probes: correct code must give the correctly rounded result bit for bit
        for inputs in probe_cases(rng, dt):
            ref, _ = reference.evaluate(problem, inputs)
            want = ref.astype(dtype_of(dt))
            h, e = inputs["hidden"], inputs["embedding_matrix"]
            for name, (dts, fn) in good.items():
                if dt in dts:
                    p = probes.setdefault((name, dt), [0, 0])
                    p[0] += 1
                    p[1] += _same(_as(fn(h, e, dt), dt), want)
            for name, (dts, runs, fn) in bad.items():
                if dt in dts and runs(h, e, dt):
                    with np.errstate(all="ignore"):
                        got = _as(fn(h, e, dt), dt)
                    p = probes.setdefault((name, dt), [0, 0])
                    p[0] += 1
                    p[1] += _same(got, want)
        print(f"# {dt}: {cases} cases done after {time.monotonic() - t0:.0f} s", file=sys.stderr)
    return {"tallies": tallies, "probes": probes, "good": list(good), "outside": list(outside),
            "bad": list(bad), "seconds": time.monotonic() - t0}


def suite_view(dtypes: tuple[str, ...], seed: int) -> dict[tuple[str, str], tuple[int, int, int, int]]:
    """How the grader's own cases (the spec's fixed cases and its default generated ones) catch
    each mistake, per (mistake, dtype): (tolerance cases failed, tolerance cases run, exact
    cases that differ, exact cases run). A submission fails when any case fails."""
    from grader.cases import fixed_cases, generated_cases

    problem = load_problem(find_problem("tied_lm_head"))
    cases = fixed_cases(problem, dtypes, seed) + generated_cases(
        problem, dtypes, seed, int((problem.generated or {}).get("count", 0)))
    out: dict[tuple[str, str], list] = {}
    for case in cases:
        if case.size == 0:
            continue
        h, e = case.inputs["hidden"], case.inputs["embedding_matrix"]
        ref, scale = reference.evaluate(problem, case.inputs)
        n = int(h.shape[-1])
        everything = dict(wrong_impls(), **{k: (d, _always, f) for k, (d, f) in outside_impls().items()})
        for name, (dts, runs, fn) in everything.items():
            if case.dtype not in dts or not runs(h, e, case.dtype):
                continue
            with np.errstate(all="ignore"):
                got = _as(fn(h, e, case.dtype), case.dtype)
            cell = out.setdefault((name, case.dtype), [0, 0, 0, 0])
            if case.compare == "exact":
                cell[3] += 1
                cell[2] += not _same(got, ref.astype(dtype_of(case.dtype)))
            else:
                cell[1] += 1
                with np.errstate(all="ignore"):
                    cell[0] += case_ratio(RULES["grader"], got, ref, scale, n, case.dtype) > 1
    return {k: tuple(v) for k, v in out.items()}


def render(result: dict[str, Any], dtypes: tuple[str, ...], rules: dict[str, Rule], cases: int,
           seed: int) -> str:
    """The figures as Markdown tables (what docs/tolerance.md quotes)."""
    tallies, probes = result["tallies"], result["probes"]
    head = ["| implementation | " + " | ".join(dtypes) + " |", "|---" * (len(dtypes) + 1) + "|"]
    lines = [f"tolerance margins: {cases} cases per dtype, seed {seed}, {result['seconds']:.0f} s"]
    for rule in rules:
        def t(name: str, dt: str) -> Tally | None:
            return tallies.get((rule, name, dt))
        lines += ["", f"### rule: {rule}", "", "correct implementations: worst error / allowed (target <= 0.5)", ""]
        lines += head
        for name in result["good"]:
            lines.append(f"| {name} | " + " | ".join(
                "-" if t(name, dt) is None else f"{t(name, dt).worst:.3g}" for dt in dtypes) + " |")
        worst = {dt: max((t(n, dt).worst for n in result["good"] if t(n, dt)), default=0.0) for dt in dtypes}
        lines.append("| **worst** | " + " | ".join(f"**{worst[dt]:.3g}**" for dt in dtypes) + " |")
        lines += ["", "outside the model: worst error / allowed (cases failed of cases run)", ""] + head
        for name in result["outside"]:
            lines.append(f"| {name} | " + " | ".join(
                "-" if t(name, dt) is None else f"{t(name, dt).worst:.3g} ({t(name, dt).caught}/{t(name, dt).cases})"
                for dt in dtypes) + " |")
        lines += ["", "wrong implementations: smallest error / allowed over the cases where the mistake "
                      "changes the rounded result (target >= 10), and cases caught", ""] + head
        for name in result["bad"]:
            lines.append(f"| {name} | " + " | ".join(
                "-" if t(name, dt) is None else f"{t(name, dt).smallest:.3g} ({t(name, dt).caught}/{t(name, dt).cases})"
                for dt in dtypes) + " |")
        lines += ["", "where the worst correct ratio occurs:"]
        for dt in dtypes:
            names = [n for n in result["good"] if t(n, dt)]
            if names:
                n = max(names, key=lambda n: t(n, dt).worst)
                lines.append(f"- {dt}: {n}, {t(n, dt).worst:.3g} on {t(n, dt).worst_case}")
        lines += ["", "where wrong code comes under 10x:"]
        for name in result["bad"]:
            for dt in dtypes:
                x = t(name, dt)
                if x is not None and x.smallest < 10:
                    lines.append(f"- {name}, {dt}: {x.smallest:.3g} on {x.smallest_case}")
    if result.get("suite"):
        lines += ["", "### the grader's own cases (fixed + 36 generated, seed 0): tolerance cases failed; "
                      "exact cases failed", ""] + head
        for name in result["bad"] + result["outside"]:
            cells = []
            for dt in dtypes:
                v = result["suite"].get((name, dt))
                cells.append("-" if v is None else f"{v[0]}/{v[1]}; exact {v[2]}/{v[3]}")
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "### exact probes: results equal to the correctly rounded value (equal / run)", ""] + head
    for name in result["good"] + result["bad"]:
        lines.append(f"| {name} | " + " | ".join(
            f"{probes[(name, dt)][1]}/{probes[(name, dt)][0]}" if (name, dt) in probes else "-"
            for dt in dtypes) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=1000, help="cases per dtype (default 1000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dtypes", default=",".join(DTYPES))
    ap.add_argument("--compare-rules", action="store_true",
                    help="also measure the alternative half-dtype terms (how the rule was chosen)")
    ap.add_argument("--json", metavar="FILE", help="also write the tallies as JSON")
    args = ap.parse_args(argv)
    dtypes = tuple(args.dtypes.split(","))
    rules = dict(RULES, **(ALTERNATIVES if args.compare_rules else {}))
    result = measure(dtypes, args.cases, args.seed, rules)
    result["suite"] = suite_view(dtypes, 0)
    print(render(result, dtypes, rules, args.cases, args.seed))
    if args.json:
        Path(args.json).write_text(json.dumps({
            "cases_per_dtype": args.cases, "seed": args.seed,
            "tallies": {f"{r}|{n}|{dt}": vars(t) for (r, n, dt), t in result["tallies"].items()},
            "probes": {f"{n}|{dt}": p for (n, dt), p in result["probes"].items()}}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
