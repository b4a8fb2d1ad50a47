"""Hint precision: is every hint the grader gives about a wrong submission right?

Grades every failing submission of tests/corpus/wrong (the files expected.json marks ``fail``)
through the CLI, as a learner's run would (``grader check FILE --format json --audience
instructor``, default case count unless ``--max-examples``), and sorts every hint in the report
(each failing case's hint, each summary hint, the run's own) into

* **right**: it names the planted mistake (:data:`PLANTED`, per file: the hint ids that name it);
* **fact**: it only states what the output is (:data:`FACTS`: where the wrong elements are, the
  shape or dtype that came back...), true by construction, naming no mistake beyond it;
* **wrong**: it names a cause that is not the planted one.

Per submission: **wrong** if any hint is wrong, else **right** if any hint is right, else
**absent** (no hint named a cause). Files whose mistake has no idea in grader/hints/tied_lm_head.py (an
empty set in :data:`PLANTED`) can at best be absent. The goal is no wrong hint.

Usage::

    python benchmarks/hint_precision.py [--jobs 2] [--max-examples N] [--json OUT] [--timing] [--synthetic N]
    PYTHONPATH=/tmp/old python benchmarks/hint_precision.py   # the same corpus, an older grader

``--timing`` also times ``grader.hints.tied_lm_head.diagnose_values`` on (2, 32, 2085) outputs
(d_model = 1024, the spec's real_size case) for a few mistakes, in this process;
``--synthetic N`` judges the hints on N random cases of known mistakes and of mistakes no idea
knows (:func:`synthetic`); ``--skip-corpus`` runs only those two.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"

#: The hint ids that name each file's planted mistake (an empty set: no idea names it; absent is
#: the best outcome). Ids of run-level hints without an id are ``kind:<failure kind>``.
PLANTED: dict[str, set[str]] = {
    "w01_no_transpose.py": {"no_transpose", "shapes_do_not_line_up"},
    "w02_softmax.py": {"softmax"},
    "w03_log_softmax.py": {"log_softmax"},
    "w04_constant_bias.py": {"offset"},
    "w05_row_mean_offset.py": {"row_offset"},
    "w06_scale_inv_sqrt_d.py": {"factor"},
    "w07_scale_by_two.py": {"factor"},
    "w08_normalised_hidden.py": {"normalised_hidden", "nan_zero_rows"},
    "w09_cosine_similarity.py": {"cosine", "nan_zero_rows"},
    "w10_sign_flip.py": {"sign_flip"},
    "w11_abs_logits.py": {"abs"},
    "w12_relu_logits.py": {"relu"},
    "w13_atleast_2d.py": {"added_axis"},
    "w14_flatten_leading.py": {"flattened"},
    "w15_transposed_output_2d.py": {"transposed", "swapped_axes"},
    "w16_cast_float32.py": {"promoted", "demoted", "lower_precision:float32"},  # "a cast to float32"
    "w17_float64_in_float32_precision.py": {"lower_precision:float32"},
    "w18_wrong_only_float16.py": {"factor"},
    "w19_jax_bfloat16_to_float32.py": {"promoted"},
    "w20_returns_list.py": {"not_array"},
    "w21_returns_none.py": {"none"},
    "w22_mutates_hidden.py": {"mutation"},
    "w23_stub_not_implemented.py": {"not_implemented"},
    "w24_missing_function.py": set(),
    "w25_syntax_error.py": {"kind:import"},
    "w26_infinite_loop.py": {"kind:timeout"},
    "w27_hardcoded_example.py": {"constant_shape"},
    "w28_first_row_only.py": {"first_row", "first_row_only"},
    "w29_truncates_to_int.py": {"integer"},
    "w30_returns_hidden.py": {"returns_hidden", "hidden_shape"},
    "w31_drops_last_row.py": {"vocab_dropped"},
    "w32_nan_for_zero_hidden.py": {"nan_zero_rows"},
    "w33_ignores_last_feature.py": {"feature_dropped"},
    "w34_float16_compute.py": {"lower_precision:float16"},
    "w35_tiny_bias.py": {"offset"},
    "w36_bfloat16_compute.py": {"lower_precision:bfloat16"},
    "w37_rank3_only.py": set(),
    "w38_half_running_sum.py": {"half_accumulation"},
    "w39_numpy_returns_jax_array.py": {"jax_array"},
}

#: Hints that state what the output is and name no mistake beyond it: never wrong by themselves.
#: (``not_array``, "return a NumPy or JAX array", is not one: said of a JAX array it is wrong.)
FACTS = {"where", "wrong_vocab", "squeezed", "added_axis", "flattened", "transposed", "hidden_shape",
         "empty_batch", "promoted", "demoted", "other_half", "dtype", "integer", "not_numeric",
         "none", "scalar", "first_row_only", "kind:timeout", "kind:memory"}


def grade(path: Path, extra: list[str], timeout: float) -> dict:
    """The JSON report of ``grader check path`` (``{"error": ...}`` when there is none)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        cmd = [sys.executable, "-m", "grader", "check", str(path), "--problem", "tied_lm_head", "--format", "json",
               "--audience", "instructor", "--output", str(out), *extra]
        if "w26" in path.name:
            cmd += ["--timeout", "3"]
        started = time.monotonic()
        try:
            # run from a scratch folder: `python -m` puts the working directory first on sys.path,
            # which would shadow a grader given by PYTHONPATH (an older checkout, to compare)
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=tmp,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return {"error": f"no report within {timeout:g} s"}
        if not out.exists():
            return {"error": f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}"}
        report = json.loads(out.read_text())
        report["_seconds"] = time.monotonic() - started
        return report


def hint_key(hint_id: str | None, params: dict | None, kind: str | None, text: str | None) -> str | None:
    """The key a hint is judged by: its id (``lower_precision:<format>`` for that idea), or
    ``kind:<kind>`` for a hint with text and no id (the run's own: timeout, syntax error...)."""
    if hint_id:
        low = (params or {}).get("computed_in")
        return f"{hint_id}:{low}" if hint_id == "lower_precision" and low else hint_id
    if text and kind:
        return f"kind:{kind}"
    return None


def hints_of(report: dict) -> tuple[list[tuple[str, str]], int]:
    """Every hint in a report as (where, key), and the number of failing cases."""
    found: list[tuple[str, str]] = []
    failing = 0
    top = report.get("failure")
    if top:
        key = hint_key(None, None, top.get("kind"), top.get("hint"))
        if key:
            found.append(("run", key))
    for case in report.get("cases") or []:
        f = case.get("failure")
        if not f:
            continue
        failing += not case.get("shrunk")
        data = f.get("data") or {}
        key = hint_key(data.get("hint_id"), data.get("hint_params"), f.get("kind"), f.get("hint"))
        if key:
            found.append((case["name"], key))
    for entry in report.get("summary") or []:
        for h in entry.get("hints") or []:
            key = h.get("id")
            if key == "lower_precision":  # the summary keeps the format in its text only
                for fmt in ("bfloat16", "float16", "float32"):
                    if f"every value is a {fmt} number" in h.get("text", ""):
                        key = f"lower_precision:{fmt}"
            if key:
                found.append((f"summary:{entry['kind']}", key))
    return found, failing


def judge(name: str, keys: list[str]) -> tuple[str, Counter]:
    """The submission's outcome (right / absent / wrong) and the count of right, fact and wrong hints."""
    planted = PLANTED.get(name, set())
    counts: Counter = Counter()
    for key in keys:
        counts["right" if key in planted else "fact" if key in FACTS else "wrong"] += 1
    outcome = "wrong" if counts["wrong"] else "right" if counts["right"] else "absent"
    return outcome, counts


def timing() -> list[str]:
    """Median time of diagnose_values on (2, 32, 2085) outputs, d_model = 1024, per mistake and dtype."""
    import ml_dtypes
    import numpy as np

    from grader.hints import tied_lm_head as diagnose
    from grader.cases import Case
    from grader.compare import allowed_error

    rows = []
    rng = np.random.default_rng(0)
    for dt_name in ("float16", "float32"):
        dt = np.dtype(ml_dtypes.bfloat16) if dt_name == "bfloat16" else np.dtype(dt_name)
        h = (rng.normal(0, 1, (2, 32, 1024))).astype(dt)
        e = (rng.normal(0, 0.06, (2085, 1024))).astype(dt)
        tn = float(ml_dtypes.finfo(dt).smallest_normal)
        h, e = (np.where(np.abs(a) < tn, 0, a).astype(dt) for a in (h, e))  # as grader.cases: no subnormals
        h64, e64 = h.astype(np.float64), e.astype(np.float64)
        ref, scale = h64 @ e64.T, np.abs(h64) @ np.abs(e64).T
        allowed = allowed_error(dt_name, ref, scale, 1024)
        case = Case(name=f"real_size[{dt_name}]", group="real_size", dtype=dt_name,
                    inputs={"hidden": h, "embedding_matrix": e}, sizes={})
        noise = np.random.default_rng(1).choice([-1.0, 1.0], ref.shape)
        mistakes = {
            "noise, 3x the allowance (no cause)": ref + 3 * allowed * noise,
            "offset 0.5": ref + 0.5,
            "factor 2": 2 * ref,
            "softmax": np.exp(ref - ref.max(-1, keepdims=True)) / np.exp(ref - ref.max(-1, keepdims=True)).sum(
                -1, keepdims=True),
            "1% of elements off by 1 (no cause)": np.where(np.random.default_rng(2).random(ref.shape) < 0.01,
                                                           ref + 1, ref),
        }
        for name, got in mistakes.items():
            g = got.astype(dt).astype(np.float64)
            times = []
            for _ in range(5):
                t0 = time.perf_counter()
                hint = diagnose.diagnose_values(case, g, ref, scale, allowed)
                times.append(time.perf_counter() - t0)
            rows.append(f"| {dt_name} | {name} | {1000 * sorted(times)[2]:.0f} | {1000 * min(times):.0f} | "
                        f"{hint.id if hint else '-'} |")
    return ["| dtype | output | median ms | min ms | hint |", "|---|---|---|---|---|", *rows]


def synthetic(trials: int, seed: int = 0) -> list[str]:
    """Hints on outputs computed here, in this process: known mistakes (each must get its idea,
    or none) and mistakes no idea knows (tanh, clipping, squaring, rounding to one decimal,
    relative noise, one element off, permuted rows or columns, exp, a quadratic term: each must
    get no cause), on random cases (shapes with d_model 1 to 64, vocab_size 1 to 17, up to two
    leading axes; normal, small-integer and one-signed values; all four dtypes). Only outputs that
    fail the tolerance count. Returns markdown lines: per mistake, right / absent / wrong."""
    import math

    import ml_dtypes
    import numpy as np

    from grader.hints import tied_lm_head as diagnose
    from grader.cases import Case
    from grader.compare import allowed_error

    def softmax(r):
        z = np.exp(r - r.max(-1, keepdims=True))
        return z / z.sum(-1, keepdims=True)

    known = {
        "softmax": (lambda h, e, r: softmax(r), {"softmax"}),
        "log-softmax": (lambda h, e, r: np.log(softmax(r)), {"log_softmax"}),
        "bias 0.5": (lambda h, e, r: r + 0.5, {"offset"}),
        "bias 1e-3": (lambda h, e, r: r + 1e-3, {"offset"}),
        "factor 1/sqrt(d)": (lambda h, e, r: r / math.sqrt(h.shape[-1]), {"factor"}),
        "factor 0.99": (lambda h, e, r: r * 0.99, {"factor"}),
        "sign flipped": (lambda h, e, r: -r, {"sign_flip"}),
        "ReLU": (lambda h, e, r: np.maximum(r, 0), {"relu"}),
        "abs": (lambda h, e, r: np.abs(r), {"abs"}),
        "row mean subtracted": (lambda h, e, r: r - r.mean(-1, keepdims=True), {"row_offset"}),
        "last feature dropped": (lambda h, e, r: h[..., :-1] @ e[:, :-1].T, {"feature_dropped"}),
        "hidden normalised": (lambda h, e, r: (h / np.linalg.norm(h, axis=-1, keepdims=True)) @ e.T,
                              {"normalised_hidden"}),
    }
    unknown = {
        "tanh": lambda h, e, r: np.tanh(r),
        "clip to [-1, 1]": lambda h, e, r: np.clip(r, -1, 1),
        "square": lambda h, e, r: r ** 2,
        "rounded to 0.1": lambda h, e, r: np.round(r, 1),
        "1% relative noise": lambda h, e, r: r * (1 + 0.01 * np.random.default_rng(5).standard_normal(r.shape)),
        "one element off by 3": lambda h, e, r: None if r.size < 4 else np.where(
            np.arange(r.size).reshape(r.shape) == r.size // 2, r + 3, r),
        "rows reversed": lambda h, e, r: r[::-1] if r.ndim > 1 and r.shape[0] > 1 else None,
        "columns reversed": lambda h, e, r: r[..., ::-1],
        "exp": lambda h, e, r: np.exp(np.clip(r, -20, 10)),
        "r + 0.1 r^2": lambda h, e, r: r + 0.1 * r ** 2,
    }
    dts = {"float16": np.dtype(np.float16), "bfloat16": np.dtype(ml_dtypes.bfloat16),
           "float32": np.dtype(np.float32), "float64": np.dtype(np.float64)}
    rng = np.random.default_rng(seed)
    counts: dict[str, Counter] = {}
    examples: dict[str, str] = {}
    for _ in range(trials):
        dt = str(rng.choice(list(dts)))
        lead = tuple(int(v) for v in rng.integers(1, 5, int(rng.integers(0, 3))))
        d, v = int(rng.choice([1, 2, 3, 4, 8, 16, 64])), int(rng.choice([1, 2, 3, 5, 8, 17]))
        style = int(rng.integers(0, 3))
        if style == 0:
            h, e = rng.standard_normal(lead + (d,)), rng.standard_normal((v, d))
        elif style == 1:
            h, e = rng.integers(-3, 4, lead + (d,)).astype(float), rng.integers(-3, 4, (v, d)).astype(float)
        else:
            h, e = rng.uniform(0.1, 1, lead + (d,)) * rng.uniform(0.5, 3), rng.uniform(-1, 1, (v, d))
        h, e = h.astype(dts[dt]), e.astype(dts[dt])
        h64, e64 = h.astype(np.float64), e.astype(np.float64)
        ref, scale = h64 @ e64.T, np.abs(h64) @ np.abs(e64).T
        allowed = allowed_error(dt, ref, scale, d)
        case = Case(name=f"c[{dt}]", group="g", dtype=dt, inputs={"hidden": h, "embedding_matrix": e}, sizes={})
        for name, (fn, planted) in [*known.items(), *((k, (f, set())) for k, f in unknown.items())]:
            with np.errstate(all="ignore"):
                out = fn(h64, e64, ref)
                if out is None or np.shape(out) != ref.shape:
                    continue
                got = np.asarray(out, dtype=np.float64).astype(dts[dt]).astype(np.float64)
            if not np.all(np.isfinite(got)) or np.all(np.abs(got - ref) <= allowed):
                continue  # not a failing output
            hint = diagnose.diagnose_values(case, got, ref, scale, allowed)
            outcome = "absent" if hint is None or hint.id in FACTS else "right" if hint.id in planted else "wrong"
            counts.setdefault(name, Counter())[outcome] += 1
            if outcome == "wrong" and name not in examples:
                examples[name] = f"{hint.id} ({dt}, hidden {h.shape}, table {e.shape})"
    lines = ["| mistake | failing outputs | right | absent | wrong | e.g. |", "|---|---|---|---|---|---|"]
    total: Counter = Counter()
    for name in [*known, *unknown]:
        c = counts.get(name, Counter())
        total.update(c)
        lines.append(f"| {name}{'' if name in known else ' (no idea)'} | {sum(c.values())} | {c['right']} | "
                     f"{c['absent']} | {c['wrong']} | {examples.get(name, '')} |")
    lines.append(f"| **all** | {sum(total.values())} | {total['right']} | {total['absent']} | {total['wrong']} | |")
    return lines


def main() -> int:
    """Grade the failing corpus, print the table and totals (markdown); exit 1 if a hint is wrong."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--max-examples", type=int, default=None, help="default: the spec's count")
    ap.add_argument("--no-shrink", action="store_true")
    ap.add_argument("--only", nargs="*", default=None, help="file names (default: every failing wrong/ file)")
    ap.add_argument("--timeout", type=float, default=600.0, help="per file")
    ap.add_argument("--json", type=Path, default=None, help="write the per-file results here")
    ap.add_argument("--timing", action="store_true", help="also time diagnose_values on (2, 32, 2085) outputs")
    ap.add_argument("--synthetic", type=int, default=0, metavar="N",
                    help="also judge hints on N random cases of known and unknown mistakes, in process")
    ap.add_argument("--skip-corpus", action="store_true", help="only --timing and --synthetic")
    args = ap.parse_args()
    import grader
    print(f"grader from {Path(grader.__file__).parent}", file=sys.stderr)

    if args.skip_corpus:
        if args.synthetic:
            print("\n".join(synthetic(args.synthetic)))
        if args.timing:
            print("\n".join(timing()))
        return 0
    expected = json.loads((args.corpus / "expected.json").read_text())
    files = sorted(rel for rel, want in expected.items() if rel.startswith("wrong/") and want["verdict"] == "fail")
    if args.only:
        files = [rel for rel in files if Path(rel).name in args.only or Path(rel).stem in args.only]
    extra = (["--max-examples", str(args.max_examples)] if args.max_examples is not None else []) + (
        ["--no-shrink"] if args.no_shrink else [])
    started = time.monotonic()
    jax_first = sorted(files, key=lambda rel: "jax" not in (args.corpus / rel).read_text())
    with ThreadPoolExecutor(args.jobs) as pool:
        reports = dict(zip(jax_first, pool.map(lambda rel: grade(args.corpus / rel, extra, args.timeout), jax_first)))

    totals: Counter = Counter()
    hint_totals: Counter = Counter()
    lines = ["| submission | planted (hint ids) | failing cases | hints seen (right / fact / wrong) | outcome |",
             "|---|---|---|---|---|"]
    results = {}
    for rel in files:
        name = Path(rel).name
        report = reports[rel]
        if "error" in report:
            lines.append(f"| {name} | - | - | grading error: {report['error']} | error |")
            totals["error"] += 1
            continue
        if report.get("passed"):
            lines.append(f"| {name} | - | 0 | passed: no failing submission | - |")
            totals["passed"] += 1
            continue
        found, failing = hints_of(report)
        keys = [k for _, k in found]
        outcome, counts = judge(name, keys)
        totals[outcome] += 1
        hint_totals.update(counts)
        seen = Counter(keys)
        shown = ", ".join(f"{k} x{c}" for k, c in sorted(seen.items(), key=lambda kv: (-kv[1], kv[0]))) or "none"
        wrong = sorted({k for k in keys if judge(name, [k])[0] == "wrong"})
        planted = ", ".join(sorted(PLANTED.get(name, set()))) or "(no idea names it)"
        lines.append(f"| {name} | {planted} | {failing} | {shown} ({counts['right']} / {counts['fact']} / "
                     f"{counts['wrong']}) | **{outcome}**" + (f": {', '.join(wrong)}" if wrong else "") + " |")
        results[name] = {"outcome": outcome, "hints": dict(seen), "wrong": wrong, "failing_cases": failing,
                         "seconds": report.get("_seconds")}
    n = sum(totals[k] for k in ("right", "absent", "wrong"))
    lines += ["", f"**{n} failing submissions: {totals['right']} right, {totals['absent']} absent, "
                  f"{totals['wrong']} wrong**" + (f"; {totals['error']} not graded" if totals["error"] else "")
              + (f"; {totals['passed']} passed" if totals["passed"] else "")
              + f". Hints: {hint_totals['right']} right, {hint_totals['fact']} facts, {hint_totals['wrong']} wrong. "
              f"({time.monotonic() - started:.0f} s, {args.jobs} jobs"
              + (f", --max-examples {args.max_examples}" if args.max_examples is not None else ", default case count")
              + ")"]
    print("\n".join(lines))
    if args.synthetic:
        print()
        print("\n".join(synthetic(args.synthetic)))
    if args.timing:
        print()
        print("\n".join(timing()))
    if args.json:
        args.json.write_text(json.dumps({"files": results, "totals": dict(totals), "hints": dict(hint_totals)},
                                        indent=1))
    return 1 if totals["wrong"] else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
