"""The wording of the generic hint ideas (``grader/hints/generic.py``), for every problem.

``WORDS[idea](facts, code)`` is one sentence (no period): ``facts`` as the idea recorded them,
``code`` the learner's framework's templates (:class:`grader.words.Code`). A sentence names
code only through ``code``, so a NumPy, a JAX and a PyTorch learner each read their own.
"""
from __future__ import annotations

import math
from typing import Any, Callable

Facts = dict[str, Any]


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def lower_precision(f: Facts, code: Any) -> str:
    low, dtype, first = f["computed_in"], f["dtype"], f.get("first") or "the inputs"
    function = f.get("function") or "the function"
    cast = f"a cast such as {code('cast', x=first, dtype=low)}" if f.get("first") else f"a cast to {low}"
    x64 = code("x64_off") if (dtype, low) == ("float64", "float32") else ""
    return (f"every value is a {low} number and the errors are {low}'s: {function} computed in {low} "
            f"precision ({cast}{x64}?); compute in {dtype}")


def also_lower(f: Facts, code: Any) -> str:
    """The second clause of a hint whose mistake was also computed in a lower format
    (``also_computed_in``): the values are that format's numbers."""
    low, dtype, first = f["also_computed_in"], f.get("dtype") or "the inputs' dtype", f.get("first")
    cast = f"a cast such as {code('cast', x=first, dtype=low)}" if first else f"a cast to {low}"
    x64 = code("x64_off") if (dtype, low) == ("float64", "float32") else ""
    return f"also, every value is a {low} number: it was computed in {low} precision ({cast}{x64}?); compute in {dtype}"


#: the causes of a wrong count, by the factor's formula (``grader.hints.generic._COUNT_FACTORS``)
def _count_cause(formula: str, code: Any) -> str:
    return {
        "sqrt((n - 1) / n)": f"a standard deviation with n - 1 (unbiased, {code('ddof1')}) where the biased one "
                             f"(divide by n) is due",
        "sqrt(n / (n - 1))": "a standard deviation with n (biased) where the unbiased one (n - 1) is due",
        "(n - 1) / n": "a variance or mean divided by n where n - 1 is due, or the reverse count somewhere",
        "n / (n - 1)": "a variance or mean divided by n - 1 (unbiased) where n is due",
    }[formula]


def variance_count(f: Facts, code: Any) -> str:
    return (f"looks like the whole result was multiplied by {_fmt(f['factor'])} = {f['formula']} with n = {f['n']}, "
            f"the length of the last axis: {_count_cause(f['formula'], code)}")


def transposed(f: Facts, code: Any) -> str:
    if f.get("axes") == "reversed":
        return ("the result holds the right values with its axes in reverse order (a transpose too many, or "
                "indexing the transposed array?)")
    return "looks like the last two axes of the result are swapped (the value of [..., i, j] is at [..., j, i])"


def not_array(f: Facts, code: Any) -> str:
    returned = f.get("returned", "")
    if returned in ("list", "tuple"):
        return f"return {code('noun')}, not a {returned} (drop .tolist() or wrap with {code('as_array')})"
    return f"the function returned a {returned}, not {code('noun')}: return {code('array')}, e.g. {code('as_array')}(result)"


def jax_array(f: Facts, code: Any) -> str:
    other = code("other_framework")
    return (f"the function returned a JAX array ({f['returned']}), which only a JAX submission may return (the "
            f"framework comes from the file's import statements): return {code('array')}, e.g. "
            f"{code('as_array')}(result)" + (f", {other}" if other else ""))


def x64_default(got: str, code: Any) -> str:
    """Why a JAX result came out float64 (JAX with x64 on, as the grader runs it, makes float64 of
    ``jnp.zeros``, ``jnp.arange``... without ``dtype=``, where a learner's kernel, x64 off, made
    float32: a newcomer was told only "promoted"), as a clause; ``""`` otherwise."""
    if getattr(code, "framework", "") != "jax" or got != "float64":
        return ""
    return (" (the grader runs JAX with jax_enable_x64 on: jnp.zeros, jnp.ones, jnp.arange and jnp.array of Python "
            "numbers without dtype= make float64 there)")


def dtype_words(f: Facts, code: Any) -> str:
    """``promoted``, ``demoted`` and ``dtype``: what to return, in the statement's words."""
    have, want, rule, like = f["got"], f["want"], f.get("rule") or "the inputs' dtype", f.get("like") or ""
    how = f" (e.g. {code('cast_like', x=like)})" if like else ""
    if f.get("how") == "promoted":
        return f"the result was promoted to {have}{x64_default(have, code)}: compute as you like, but return {want}, {rule}{how}"
    if f.get("how") == "demoted":
        return f"the result was demoted to {have}: return {want}, {rule}{how}"
    return f"return {want}, {rule}{how}"


#: why a case is free (``grader.grading.free_cases``: a failure's ``data["free_because"]``), in
#: words, for the ``unearned`` failure and the summary's entry alike; another reason is the case's
#: expected result (zeros, a constant, one of its inputs reshaped...): :func:`free_because`
#: what exp of unshifted logits does, said by every module whose mistake it is (softmax, cross_entropy)
EXP_OVERFLOW = ("exp overflowed to infinity: exp(x) passes the dtype's largest number once a logit is above about "
                "11.1 in float16, 88.7 in float32 and bfloat16, 709.8 in float64")

FREE_BECAUSE = {"an exception": "it raised as this case requires",
                "seedless": "its inputs are the same under every seed, so a table of a published run's answers "
                            "passes it"}


def free_because(why: str) -> str:
    """Why a case is free (:data:`FREE_BECAUSE`), in words."""
    return FREE_BECAUSE.get(why, f"its expected result is {why}")


def half_range(f: Facts, code: Any) -> str:
    """``half_range``: float16 fails where bfloat16 (fewer digits, float32's range) passes."""
    first = f.get("first") or "x"
    return ("float16 fails where bfloat16 passes, which has fewer digits but float32's range: a value inside the "
            "computation left float16's range (above 65504 it becomes inf, below 6e-8 it becomes 0: a square, a "
            f"sum, an exp?); compute that step in float32 (e.g. {code('cast', x=first, dtype='float32')}) and "
            "return float16")


WORDS: dict[str, Callable[[Facts, Any], str]] = {
    "half_range": half_range,
    "lower_precision": lower_precision,
    "variance_count": variance_count,
    "axis_factor": lambda f, c: (f"looks like the whole result was {f['how']} by sqrt({f['n']}) (= sqrt("
                                 f"{' = '.join(f['where'])})): a sum of squares where their mean was meant, under the "
                                 "root?" if f.get("root") else
                                 f"looks like the whole result was {f['how']} by {f['n']} "
                                 f"(= {' = '.join(f['where'])}): a mean over the wrong count (or a sum for a mean)?"),
    "scaled": lambda f, c: f"looks like the whole result was multiplied by a constant factor of {_fmt(f['factor'])}",
    "swapped_outputs": lambda f, c: (f"{f['first']} and {f['second']} came back in each other's place: return "
                                     f"them in the order {', '.join(f['order'])}"),
    "near_zero": lambda f, c: ("the result is all zeros where the expected values are not: is the right quantity "
                               "computed and returned?" if f.get("exact") else
                               "the result is close to zero everywhere (within the tolerance of 0) where the expected "
                               "values are not: is the right quantity computed and returned?"),
    "shifted": lambda f, c: f"looks like a constant {_fmt(f['offset'])} was added to every element",
    "row_shifted": lambda f, c: ("looks like each row of the result (along its last axis) was shifted by its own "
                                 "constant offset"),
    "transposed": transposed,
    "not_array": not_array,
    "none": lambda f, c: "the function returned None: is a return statement missing?",
    "not_numeric": lambda f, c: f"the result is an array of dtype {f['dtype']}: return a {f['want']} array",
    "jax_array": jax_array,
    "extra_axis": lambda f, c: (f"the values are right but the shape has an extra axis of size 1: return shape "
                                f"{tuple(f['shape'])}"),
    "lost_axis": lambda f, c: f"the values are right but an axis of size 1 was dropped: return shape {tuple(f['shape'])}",
    "promoted": dtype_words,
    "demoted": dtype_words,
    "dtype": dtype_words,
    "nan_where_zero": lambda f, c: ("NaN exactly where the expected result is 0: a 0/0 (a division by something "
                                    "that is zero there: a count, a sum or a norm?); the statement says what to "
                                    "return there"),
    "not_handled": lambda f, c: (f"the function refuses these inputs (NotImplementedError: {f['said']}): the "
                                 f"statement asks for them too; handle them"),
    "not_implemented": lambda f, c: "the function raises NotImplementedError: write its body",
    "signature": lambda f, c: (f"the grader calls {f['function']}({', '.join(f['params'])}), with the statement's "
                               "parameter names"
                               + (f": {f['unexpected']!r} is one of them, so name yours as the statement does"
                                  if f.get("unexpected") else ": give the function exactly these parameters, in this "
                                  "order")),
    "reduced_axis": lambda f, c: (f"the result has the shape of {f['of']} without axis {f['used']}, where the "
                                  f"expected one drops axis {f['instead']}: reduce over {c('axis_kw', axis=f['instead'])} "
                                  f"instead of {c('axis_kw', axis=f['used'])}"),
    "numpy_code_given_tensors": lambda f, c: ("looks like NumPy code given torch tensors (a tensor has no .astype: in "
                                              "PyTorch it is .to(dtype)); a file that imports torch is graded as "
                                              "PyTorch and its function gets tensors: if it is NumPy code, drop the "
                                              "import torch (or grade it with --framework numpy, "
                                              "check(fn, framework=\"numpy\") in a notebook)"),
    "missing_import": lambda f, c: f"{f['name']} is used but never imported: add {f['statement']} at the top of the file",
    "mutation": lambda f, c: f"work on a copy (or use {c('new_values')}) instead of writing into an input",
    "constant_shape": lambda f, c: (f"the result has shape {tuple(f['shape'])} whatever the inputs' shapes: is it "
                                    f"hard-coded (the worked example?) instead of computed from the inputs?"),
}


def combined(top: str, mine: list[dict[str, Any]], code: Any) -> str | None:
    """The summary sentence of a generic idea whose facts differ from case to case (a factor,
    an offset), or of a lower precision, a promoted or a demoted result shared by cases of
    several dtypes; None otherwise."""
    if top in ("scaled", "shifted"):  # the generic fitted ideas: one case's value is not the others'
        what = "factor" if top == "scaled" else "offset"
        values = [float((h.get("params") or {}).get(what, math.nan)) for h in mine]
        if len(values) >= 2 and all(math.isfinite(v) for v in values) and \
                max(values) - min(values) > 1e-2 * max(abs(v) for v in values):
            span = f"from {min(values):.4g} to {max(values):.4g}"
            return (f"looks like the whole result was multiplied by a factor that differs from case to case ({span})"
                    if top == "scaled" else
                    f"looks like a constant was added to every element, a different one in each case ({span})")
    if top == "reduced_axis":   # an axis counted from the front, another one at each rank
        facts = [h.get("params") or {} for h in mine]
        used = {f.get("used") for f in facts}
        front = {f.get("from_front") for f in facts}
        instead = {f.get("instead") for f in facts}
        if len(used) > 1 and len(front) == 1 and None not in front and len(instead) == 1:
            k, want = next(iter(front)), next(iter(instead))
            return (f"the result drops axis {k} counted from the front ({code('axis_kw', axis=k)}), which is another "
                    f"axis at each rank ({', '.join(str(u) for u in sorted(used))} from the end here); the expected one "
                    f"drops axis {want} from the end at every rank: reduce over {code('axis_kw', axis=want)}")
    if top.startswith("axis_factor:"):   # the same axis, its size differing from case to case
        params = mine[0].get("params") or {}
        sizes = sorted({int(h["params"]["n"]) for h in mine if (h.get("params") or {}).get("n")})
        if len(sizes) > 1:
            where = list(params.get("where") or [])
            named = where[0] + (f" (= {' = '.join(where[1:])})" if len(where) > 1 else "") if where else "an axis size"
            if params.get("root"):
                named = f"sqrt({named})"
            return (f"looks like the whole result was {params.get('how')} by {named} "
                    f"({', '.join(map(str, sizes[:6]))}{'...' if len(sizes) > 6 else ''} in these cases): a mean over "
                    "the wrong count (or a sum for a mean)?")
    if top.startswith(("promoted:", "demoted:")):
        order = {"bfloat16": 0, "float16": 1, "float32": 2, "float64": 3}
        dtypes = sorted({str(h.get("dtype")) for h in mine}, key=lambda d: (order.get(d, 9), d))
        if len(dtypes) > 1:
            how, got = top.split(":", 1)
            like = (mine[0].get("params") or {}).get("like")
            cast = f" (e.g. {code('cast_like', x=like)})" if like else ""
            x64 = x64_default(got, code) if how == "promoted" else ""
            return (f"the result was {how} to {got}{x64}: compute as you like, but return each case in its inputs' "
                    f"dtype ({', '.join(dtypes)}){cast}")
    if top.startswith("lower_precision:"):
        low = top.split(":", 1)[1]
        if len({h.get("dtype") for h in mine}) > 1:
            params = (mine[0].get("params") or {})
            first = params.get("first")
            cast = f"a cast such as {code('cast', x=first, dtype=low)}" if first else f"a cast to {low}"
            return (f"every value is a {low} number and the errors are {low}'s: the inputs were computed in "
                    f"{low} precision ({cast}?); compute in the inputs' dtype")
    return None
