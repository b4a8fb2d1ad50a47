"""Hint precision on every bundled problem's mistakes: is every hint the grader gives right?

Grades each file of each problem's ``mistakes:`` folder as ``grader validate`` does (the default
cases, instructor audience, no shrinking), with the file called in this process
(``grader.run.inprocess.for_file``: they are the project's own trusted files), and sorts every
hint in the report (each failing case's, each summary hint, the run's own) as
``benchmarks/hint_precision.py`` does:

* **right**: it names the planted mistake (:data:`PLANTED`: per problem and file, the hint ids
  that name it; a reviewer read each hint's text against the file);
* **fact**: it only states what the output is (``hint_precision.FACTS``, plus :data:`PACK_FACTS`);
* **wrong**: any other hint: it names a cause that is not the file's.

Per file: **wrong** if any hint is wrong, else **right** if any hint is right, else **absent**.
The goal is 0 wrong. ``--show`` prints every distinct hint text per file (to review
:data:`PLANTED`).

    python benchmarks/pack_hint_precision.py [--problem ID ...] [--show] [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from hint_precision import FACTS, hint_key  # noqa: E402

from grader.options import CheckOptions  # noqa: E402
from grader.run.inprocess import for_file  # noqa: E402
from grader.spec import available_problems, load_problem  # noqa: E402
from grader.validate import _check, mistake_files  # noqa: E402

#: hints that state a fact of the output or of the call and name no cause beyond it
#: ("scaled": the whole output is c times the right one, checked to fit; said per case, or as "a
#: factor that differs from case to case" when it does)
PACK_FACTS = {"kind:exception", "kind:type", "kind:shape", "kind:dtype", "kind:non_finite", "kind:mutation",
              "kind:tolerance", "kind:raises", "mutation", "not_array", "list", "tuple", "scaled"}

#: problem -> file -> the hint ids (``hint_key``) that name its mistake, from reading each hint's
#: text (``--show``) against the file; files not listed have no idea that names theirs
PLANTED: dict[str, dict[str, set[str]]] = {
    "embedding_lookup": {"tolerance_one_hot_matmul.py": {"scaled"},        # it multiplies by 1 + 1e-3
                         "exception_stub.py": {"not_implemented"}},
    "layer_norm": {"tolerance_annotated_transformer_std.py": {"variance_count"}},
    "masked_mean_pool": {"non_finite_zero_count.py": {"nan_where_zero"}, "shape_keepdims.py": {"extra_axis"}},
    "sinusoidal_positional_encoding": {"shape_labml_unsqueeze.py": {"extra_axis"},
                                       "shape_zegclip_newaxis.py": {"extra_axis"}},
    "tied_lm_head": {"bias.py": {"offset"}, "half_running_sum.py": {"half_accumulation"},
                     "inv_sqrt_d_model.py": {"factor"}, "last_feature_dropped.py": {"feature_dropped"},
                     "no_transpose.py": {"no_transpose", "shapes_do_not_line_up"}, "softmax.py": {"softmax"}},
}


def hints_with_text(report: dict) -> list[tuple[str, str, str]]:
    """Every hint of a report as (where, key, text)."""
    found = []
    top = report.get("failure")
    if top and top.get("hint"):
        found.append(("run", hint_key(None, None, top.get("kind"), top.get("hint")) or "?", top["hint"]))
    for case in report.get("cases") or []:
        f = case.get("failure")
        if not f or not f.get("hint"):
            continue
        data = f.get("data") or {}
        key = hint_key(data.get("hint_id"), data.get("hint_params"), f.get("kind"), f.get("hint"))
        found.append((case["name"], key or f"kind:{f.get('kind')}", f["hint"]))
    for entry in report.get("summary") or []:
        for h in entry.get("hints") or []:
            found.append((f"summary:{entry.get('kind')}", h.get("id") or f"kind:{entry.get('kind')}", h.get("text", "")))
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problem", nargs="*")
    ap.add_argument("--show", action="store_true", help="print each distinct hint text per file")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    ids = args.problem or sorted(available_problems())
    totals: Counter = Counter()
    rows = []
    t0 = time.monotonic()
    for pid in ids:
        problem = load_problem(available_problems()[pid])
        _, files, _, _ = mistake_files(problem)
        for path in files:
            opts = CheckOptions(shrink=False, sandbox="none", audience="instructor", submission_shown=path.name)
            report = _check(path, problem, opts,
                            lambda p, pr, plan: for_file(p, pr.function, plan.framework)).to_json()
            hints = hints_with_text(report)
            planted = PLANTED.get(pid, {}).get(path.name, set())
            counts: Counter = Counter()
            for _, key, _ in hints:
                counts["right" if key in planted else "fact" if key in FACTS | PACK_FACTS else "wrong"] += 1
            outcome = "wrong" if counts["wrong"] else "right" if counts["right"] else "absent"
            totals[outcome] += 1
            rows.append({"problem": pid, "file": path.name, "outcome": outcome, "counts": dict(counts),
                         "hints": sorted({(k, t) for _, k, t in hints})})
            print(f"{pid:32s} {path.name:44s} {outcome:6s} {dict(counts)}", flush=True)
            if args.show:
                for key, text in sorted({(k, t) for _, k, t in hints}):
                    print(f"      [{key}] {text[:400]}")
    print(f"total: {sum(totals.values())} mistakes of {len(ids)} problems: right {totals['right']}, "
          f"absent {totals['absent']}, wrong {totals['wrong']} ({time.monotonic() - t0:.0f} s)")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=list))
    return 1 if totals["wrong"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
