"""The wording of tied_lm_head's hint ideas (``grader/hints/tied_lm_head.py``): logits, softmax,
1/sqrt(d_model), the table's transpose...

``WORDS[idea](facts, code)`` is one sentence (no period) for the learner's framework (``code``:
:class:`grader.words.Code`); it comes before ``grader/words/generic.py`` for this problem, so an
id both use (``promoted``, ``transposed``, ``not_numeric``...) is worded here. :func:`combined`
words a factor or an offset shared by many cases.
"""
from __future__ import annotations

import statistics
from typing import Any, Callable

from ..dtypes import max_finite
from ..hints.tied_lm_head import SIZE_FACTORS
from . import generic as _generic

Facts = dict[str, Any]


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _product(code: Any) -> str:
    """hidden @ embedding_matrix.T in the learner's code."""
    return f"hidden @ {code('transpose', x='embedding_matrix')}"


def _differ(f: Facts) -> str:
    return "; the values differ as well" if f.get("values_differ") else ""


def lower_precision(f: Facts, code: Any) -> str:
    low, dtype = f["computed_in"], f["dtype"]
    cast = f"a cast such as {code('cast', x=f['first'], dtype=low)}" if f.get("first") else f"a cast to {low}"
    x64 = code("x64_off") if (dtype, low) == ("float64", "float32") else ""
    return (f"every value is a {low} number and the errors are {low}'s: the {dtype} inputs were computed in {low} "
            f"precision ({cast}{x64}?); compute in the inputs' dtype")


def factor(f: Facts, code: Any) -> str:
    c, n, v, name = float(f["factor"]), f.get("d_model"), f.get("vocab_size"), f.get("named")
    if name is not None:
        sizes = (f"d_model = vocab_size = {n}" if " or " in name else
                 f"vocab_size = {v}" if "vocab_size" in name else f"d_model = {n}")
        shown = f"{name} = {_fmt(c)} ({sizes})"
        why = ("; scaling belongs to attention scores, not to the output logits"
               if name in ("1/sqrt(d_model)", "sqrt(d_model)") else "")
    else:
        shown, why = _fmt(c), ""
    return f"looks like the logits were multiplied by a factor of {shown}{why}; leave them unscaled"


def row_offset(f: Facts, code: Any) -> str:
    by = f.get("by")
    if by == "mean":
        return "looks like each row was shifted by an offset, its own mean (subtracted); return the logits unshifted"
    if by == "max":
        return ("looks like each row was shifted by an offset, its largest logit (subtracted, the first step of a "
                "stable softmax?); return the logits unshifted")
    return ("looks like each row of logits was shifted by its own constant offset (one per position); return the "
            "logits unshifted")


def _part(f: Facts, key: str, one: str, many: str) -> str:
    idx, where, total = f[key], f[f"{key}_at"], f[f"{key}_of"]
    if where == "one":
        part = f"{one} {idx[0]} of {total}"
    elif len(idx) == 1:
        part = f"the {where} of {total} {many}"
    else:
        part = f"the {where} {len(idx)} of {total} {many}"
    return part + (" (hidden vectors, leading axes flattened)" if key == "rows" else "")


def where(f: Facts, code: Any) -> str:
    tail = " (they came back as 0: never computed?)" if f.get("zeros") else ""
    if f.get("sign") == "negative":
        return f"only logits that should be negative are wrong ({f['wrong']} of {f['of']}){tail}: logits can be negative"
    if f.get("sign") == "positive":
        return f"only logits that should be positive are wrong ({f['wrong']} of {f['of']}){tail}"
    parts = [_part(f, key, one, many) for key, one, many in (("rows", "row", "rows"),
                                                              ("columns", "vocabulary entry", "vocabulary entries"))
             if key in f]
    single = len(parts) == 1 and len(f["rows" if "rows" in f else "columns"]) == 1
    text = f"only {' and '.join(parts)} {'is' if single else 'are'} wrong{tail}"
    if "last" in (f.get("rows_at"), f.get("columns_at")):
        text += ": a loop or slice that stops short?"
    return text


def empty_batch(f: Facts, code: Any) -> str:
    rs, gs = tuple(f["shape"]), tuple(f["got_shape"])
    if f.get("from_list"):
        return (f"an empty batch must still give shape {rs} (leading axes, then vocab_size): {code('from_list')} of "
                f"an empty list has shape (0,); a vectorised matmul keeps the shape")
    return f"an empty batch must still give shape {rs} (leading axes, then vocab_size), not {gs}"


def integer(f: Facts, code: Any) -> str:
    how = {"truncated": f": the fractional parts were cut off ({code('to_int')}?)",
           "rounded": ": the logits were rounded to whole numbers"}.get(f.get("how") or "", "")
    return f"the result is an integer array ({f['got']}){how}; return {f['want']} logits, the inputs' dtype"


def overflow(f: Facts, code: Any) -> str:
    dtype = f["dtype"]
    top = _fmt(max_finite(dtype))
    if f["where"] == "sum":
        return (f"an overflow: where the result is infinite, the products sum to more than {dtype} can hold in "
                f"magnitude ({top}) along the way; accumulate in float32 and cast back, as matmul does")
    if f["where"] == "norm":
        return (f"an overflow: the sum of squares of a hidden vector or table row exceeds {dtype}'s range ({top}): a "
                f"norm computed in {dtype}? the head needs no norms")
    return (f"an overflow: exp of the logits exceeds {dtype}'s range where the result is infinite (exp without "
            f"subtracting the row maximum?); the head returns the raw logits")


def scalar(f: Facts, code: Any) -> str:
    how = f["how"]
    what = how if how == "the largest logit" else f"all logits {how}"
    return f"a scalar came back, {what}: return every logit, shape (..., vocab_size)"


WORDS: dict[str, Callable[[Facts, Any], str]] = {
    "lower_precision": lower_precision,
    "factor": factor,
    "offset": lambda f, c: (f"looks like a constant offset of {_fmt(f['offset'])} was added to every logit (a bias?); "
                            f"the head has no bias"),
    "row_offset": row_offset,
    "column_offset": lambda f, c: "looks like a bias vector (an offset per vocabulary entry) was added; the tied head "
                                  "has no bias",
    "zeros": lambda f, c: "the result is all zeros: were the logits computed and returned?",
    "softmax": lambda f, c: ("looks like softmax was applied to the logits: return the raw logits (softmax belongs to "
                             "the loss or to sampling)"),
    "log_softmax": lambda f, c: "looks like log-softmax was applied (log-probabilities): return the raw logits",
    "sign_flip": lambda f, c: "the sign is flipped: the logits are the dot products themselves, not their negatives",
    "abs": lambda f, c: "looks like abs() was applied: logits can be negative",
    "relu": lambda f, c: "looks like a ReLU (max with 0) was applied: logits can be negative",
    "normalised_hidden": lambda f, c: ("looks like the hidden vectors were normalised to unit length first; use them "
                                       "as they are"),
    "cosine": lambda f, c: ("looks like cosine similarity (hidden vectors and table rows normalised); the logits are "
                            "plain dot products"),
    "normalised_table": lambda f, c: ("looks like the rows of the embedding matrix were normalised to unit length; use "
                                      "the table as it is"),
    "standardised_hidden": lambda f, c: ("looks like each hidden vector was standardised (mean subtracted, divided by "
                                         "its std, as in a layer norm) first; use hidden as it is"),
    "no_transpose": lambda f, c: (f"looks like the table was not transposed (hidden @ embedding_matrix): use "
                                  f"{_product(c)}; the shapes only agree because vocab_size = d_model here"),
    "returns_hidden": lambda f, c: (f"the result is hidden itself: the projection onto the embedding matrix was not "
                                    f"applied ({_product(c)})"),
    "swapped_axes": lambda f, c: (f"looks like the last two axes are swapped (embedding_matrix @ "
                                  f"{c('swap_last', x='hidden')}?): the vocabulary axis must be the last one"),
    "first_row": lambda f, c: ("every row holds the logits of the first hidden vector: compute one row of logits per "
                               "hidden vector (all leading positions)"),
    "feature_dropped": lambda f, c: (f"looks like the {f['which']} feature (one of the d_model = {f['d_model']} "
                                     f"columns) was left out of the dot products: contract over all of d_model"),
    "half_accumulation": lambda f, c: (f"the values match a running sum kept in {f['dtype']} (each partial sum rounded "
                                       f"to {f['dtype']}, as in a loop with a {f['dtype']} accumulator), which loses "
                                       f"accuracy as the sum grows: accumulate in float32 and cast back, as matmul "
                                       f"does"),
    "where": where,
    "empty_batch": empty_batch,
    "added_axis": lambda f, c: (f"a leading axis of size 1 was added (e.g. {c('atleast_2d')} or a reshape to 2-D): a "
                                f"single vector of shape (d_model,) must give shape (vocab_size,)" + _differ(f)),
    "flattened": lambda f, c: ("the leading (batch) axes were flattened into one; reshape the result back to (..., "
                               "vocab_size)" + _differ(f)),
    "transposed": lambda f, c: (f"the result is transposed: the vocabulary axis must be the last one ({_product(c)}, "
                                f"not embedding_matrix @ {c('swap_last', x='hidden')})" + _differ(f)),
    "squeezed": lambda f, c: (f"the axes of size 1 are missing (shape {tuple(f['got_shape'])}, expected "
                              f"{tuple(f['shape'])}): keep every leading axis, and a vocab_size of 1 still gives a "
                              f"last axis of size 1" + _differ(f)),
    "vocab_dropped": lambda f, c: (f"the {f['which']} row of the embedding matrix is missing from the result "
                                   f"({f['logits']} logits, vocab_size = {f['vocab_size']}): an off-by-one in a slice "
                                   f"or range?"),
    "hidden_shape": lambda f, c: ("the result has the shape of hidden (..., d_model), not (..., vocab_size): was the "
                                  "projection onto the table applied?"),
    "first_row_only": lambda f, c: (f"only {f['which']} row of the batch was computed (the leading axis of size "
                                    f"{f['lead']} is missing); keep every leading axis"),
    "wrong_vocab": lambda f, c: (f"the last axis has {f['logits']} entries, not vocab_size = {f['vocab_size']}: one "
                                 f"logit per row of the embedding matrix ({_product(c)})"),
    "scalar": scalar,
    "integer": integer,
    "promoted": lambda f, c: (f"the result was promoted to {f['got']}{_generic.x64_default(f['got'], c)}: compute "
                              f"as you like, but return {f['want']} "
                              f"(e.g. {c('cast_like', x=f.get('like') or 'hidden')})"),
    "demoted": lambda f, c: (f"the result was demoted to {f['got']}: {f['want']} inputs must give {f['want']} logits "
                             f"(no cast to {f['got']})"),
    "other_half": lambda f, c: f"the result is {f['got']}, not {f['want']}: return the inputs' dtype",
    "dtype": lambda f, c: f"return the inputs' dtype ({f['want']})",
    "not_numeric": lambda f, c: f"the result is an array of dtype {f['dtype']}: return floating logits in the inputs' dtype",
    "nan_zero_rows": lambda f, c: ("NaN exactly where a hidden vector is all zeros: a division by its norm? the head "
                                   "divides by nothing"),
    "overflow": overflow,
    "shapes_do_not_line_up": lambda f, c: (f"the shapes do not line up: the table needs a transpose, {_product(c)} "
                                           f"contracts the last axis of both (d_model) and gives (..., vocab_size)"),
}

def _range_text(values: list[int]) -> str:
    v = sorted(set(values))
    return ", ".join(str(d) for d in v) if len(v) <= 4 else f"from {v[0]} to {v[-1]}"


def combined(top: str, mine: list[dict[str, Any]], code: Any) -> str | None:
    """The summary sentence of ``factor``, ``offset`` or ``feature_dropped`` hints shared by many cases (``mine``: their
    dicts, as :func:`grader.diagnose.combine` receives them), or None to keep the most common case
    sentence: factors that equal ``1/sqrt(d_model)`` of each case (d_model varying) are named so,
    equal factors and offsets are called constant; a feature dropped from cases of several
    d_model gives their range, not one case's."""
    params = [h.get("params") or {} for h in mine]
    if top == "factor" and all("factor" in p for p in params):
        facs = [(float(p["factor"]), int(p.get("d_model") or 1), int(p.get("vocab_size") or 1)) for p in params]
        for size, label in ((1, "d_model"), (2, "vocab_size")):
            sizes = [f[size] for f in facs]
            for fn, template in SIZE_FACTORS:
                name = template.format(label)
                if len(set(sizes)) >= 2 and all(abs(f[0] - fn(f[size])) <= 1e-3 * fn(f[size]) for f in facs):
                    return (f"looks like the logits were multiplied by a factor of {name} (in every case, {label} "
                            f"{_range_text(sizes)})"
                            + ("; scaling belongs to attention scores, not to the output logits"
                               if name in ("1/sqrt(d_model)", "sqrt(d_model)") else "")
                            + "; leave them unscaled")
        values = [f[0] for f in facs]
        if len(values) >= 2 and max(values) - min(values) <= 1e-2 * max(abs(v) for v in values):
            return (f"looks like the logits were multiplied by a constant factor of "
                    f"{_fmt(statistics.median(values))}; leave them unscaled")
        if len(values) >= 2:  # one case's factor is not the others': never state it for all of them
            return (f"looks like the logits were multiplied by a factor that differs from case to case (from "
                    f"{_fmt(min(values))} to {_fmt(max(values))}); leave them unscaled")
    elif top == "offset" and all("offset" in p for p in params):
        values = [float(p["offset"]) for p in params]
        if len(values) >= 2 and max(values) - min(values) <= 1e-2 * max(abs(v) for v in values):
            return (f"looks like a constant offset of {_fmt(statistics.median(values))} was added to every "
                    f"logit (a bias?); the head has no bias")
        if len(values) >= 2:
            return (f"looks like an offset was added to every logit, a different one in each case (from "
                    f"{_fmt(min(values))} to {_fmt(max(values))}; a bias?); the head has no bias")
    elif top == "feature_dropped" and all("d_model" in p for p in params):
        # one case's d_model is not the others' (a newcomer read "d_model = 33" for 43 cases of many sizes)
        sizes = sorted({int(p["d_model"]) for p in params})
        which = {p.get("which") for p in params}
        if len(sizes) >= 2 and len(which) == 1:
            return (f"looks like the {next(iter(which))} feature was left out of the dot products (d_model "
                    f"{_range_text(sizes)} in these cases): contract over all of d_model")
    return None
