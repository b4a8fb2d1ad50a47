"""The hint stage: name the mistake behind a failure, from the generic ideas and the problem's own.

``grader.compare`` finds what is wrong (type, shape, dtype, finiteness, values) and calls one
function here per kind of failure; each returns a :class:`Hint` (an idea and its facts, no
sentence: ``grader.words`` words it for the learner's framework when the report is made) or None. The ideas live in
:mod:`grader.hints`: ``grader/hints/generic.py`` for every problem (worded with the spec's own
names), and the module a spec names in ``hints`` (bundled, ``grader/hints/tied_lm_head.py``, or an
instructor's file beside the spec) for that problem only, so that no hint of one problem
appears in another's report. A problem module's stage hook (``diagnose_values``...) replaces the
generic stage; its ``ideas`` compete with the generic value ideas under the same judge
(:func:`grader.hints.generic.judge`: an idea is named only when its prediction reproduces the
output). Every function here is advice: :func:`grader.compare._safe` turns an error into no hint.

:func:`combine` merges the hints of many failing cases into the report's summary.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from . import tolerance, words
from .cases import Case
from .hints import BUNDLED, Hint, Idea, Names, generic, load

__all__ = ["Hint", "Idea", "Names", "for_type", "for_shape", "for_dtype", "for_non_finite", "for_values", "for_exception",
           "for_raises", "mutation_hint", "combine"]


def _hook(hints: str | None, name: str) -> Any:
    module = load(hints)
    return getattr(module, name, None) if module is not None else None


def _names(case: Case) -> Names:
    # the function's name is not part of a case: hints say "the function"
    return Names("the function", tuple(case.inputs), case.dtype)


def for_type(hints: str | None, type_name: str, want: str) -> Hint | None:
    """A non-array result (``type_name`` as the child reported it); ``want``: the expected dtype."""
    hook = _hook(hints, "diagnose_type")
    return hook(type_name) if hook else generic.type_hint(type_name, want)


def for_shape(hints: str | None, case: Case, got: np.ndarray, ref: np.ndarray) -> Hint | None:
    """A wrong output shape (``got`` any dtype, ``ref`` the exact float64 output)."""
    hook = _hook(hints, "diagnose_shape")
    return hook(case, got, ref) if hook else generic.shape_hint(
        got, ref, {k: tuple(np.shape(v)) for k, v in case.inputs.items() if k not in case.scalars})


def for_dtype(hints: str | None, case: Case, got: np.ndarray, want: str, rule: tuple[str, str]) -> Hint | None:
    """A wrong output dtype; ``rule``: the statement's words for it and the parameter to copy it from."""
    hook = _hook(hints, "diagnose_dtype")
    return hook(case, got) if hook else generic.dtype_hint(got, want, rule)


def for_non_finite(hints: str | None, case: Case, got: np.ndarray, ref: np.ndarray) -> Hint | None:
    """NaN or infinity where the expected output is finite (``got`` float64, shaped like ``ref``)."""
    hook = _hook(hints, "diagnose_non_finite")
    return hook(case, got, ref) if hook else generic.non_finite_hint(got, ref)


def for_exception(hints: str | None, case: Case, message: str, problem_only: bool = False) -> Hint | None:
    """An exception the submission raised on ``case`` (``message``: its first line, e.g.
    ``"ValueError: matmul: ..."``): the generic idea (a stub's NotImplementedError; not with
    ``problem_only``), else the problem's own ``diagnose_exception(message, shapes)`` hook, given
    the case's input shapes in call order; None when neither names a cause. Only the problem's
    own module is asked, so one problem's exception wording never reaches another's report."""
    found = None if problem_only else (generic.exception_hint(message)
                                       or generic.signature_hint(message, list(case.inputs)))
    if found is not None:
        return found
    hook = _hook(hints, "diagnose_exception")
    return hook(message, {k: list(np.shape(v)) for k, v in case.inputs.items()}) if hook else None


def for_raises(hints: str | None, case: Case, accepted: list[str]) -> Hint | None:
    """A case that must raise one of ``accepted`` and did not: the problem module's
    ``diagnose_raises(case, accepted)`` (what is wrong with these inputs), or None (the
    statement's contract is the hint)."""
    hook = _hook(hints, "diagnose_raises")
    return hook(case, accepted) if hook else None


def mutation_hint() -> Hint:
    """The hint for a submission that wrote into an input (worded per framework: new arrays,
    or tensors rather than in-place operations)."""
    return Hint(idea="mutation")


def problem_ideas(hints: str | None, case: Case, got: np.ndarray, ref: np.ndarray) -> list[Idea]:
    """The problem module's ``ideas`` for this output (none when it has none or they fail); an
    id of the grader's own (:data:`grader.hints.generic.RESERVED`) becomes ``<module>.<id>``."""
    fn = _hook(hints, "ideas")
    if fn is None:
        return []
    try:
        inputs = {k: np.asarray(v, dtype=np.float64) if np.asarray(v).dtype.kind in "fc"
                  or np.asarray(v).dtype.name == "bfloat16" else np.asarray(v) for k, v in case.inputs.items()}
        out = []
        for idea in fn(inputs, ref.copy(), got.copy(), _names(case)) or ():
            worded = isinstance(idea, Idea) and (isinstance(idea.text, str) or (idea.text is None and hints in BUNDLED))
            if not worded or not isinstance(idea.id, str):
                continue  # an instructor's idea brings its own sentence; a bundled one is worded by grader.words
            if idea.id in generic.RESERVED:
                stem = hints if hints in BUNDLED else str(hints).rsplit("/", 1)[-1].removesuffix(".py")
                idea = Idea(id=f"{stem}.{idea.id}", text=idea.text, predicted=idea.predicted, params=idea.params)
            out.append(idea)
        return out
    except Exception:  # noqa: BLE001 - an instructor's idea that fails is left out
        return []


def for_values(hints: str | None, case: Case, got: np.ndarray, ref: np.ndarray, allowed: np.ndarray,
               scale: np.ndarray | None, n: Any, model: str, out_dtype: str) -> Hint | None:
    """A value mismatch: ``got`` (float64, finite or not) against the exact ``ref``, with the
    verdict's ``allowed`` (zeros for an exact comparison), the tolerance model's ``scale`` and
    ``n``, and the output dtype. A problem's ``diagnose_values`` hook replaces the generic ideas."""
    hook = _hook(hints, "diagnose_values")
    if hook is not None:
        return hook(case, got, ref, scale, allowed)
    exact = not np.any(allowed)

    def allowed_in(dtype: str) -> np.ndarray:
        if exact or scale is None:
            return np.zeros_like(ref)
        return np.asarray(tolerance.model(model).allowed(dtype, ref, scale, n), dtype=np.float64)

    shapes = {k: tuple(np.shape(v)) for k, v in case.inputs.items() if k not in case.scalars and np.ndim(v) >= 1}
    return generic.value_ideas(got, ref, allowed, out_dtype, allowed_in, _names(case),
                               problem_ideas(hints, case, got, ref), shapes)


# ---------------------------------------------------------------------------------------------
# many cases

#: Ideas whose text names the case dtype: their hints are combined per dtype.
PER_DTYPE = frozenset({"promoted", "demoted", "other_half", "dtype", "half_accumulation"})


def _key(h: dict[str, Any]) -> str | None:
    """Hints that are the same idea with different facts share a key (``lower_precision:float16``);
    hints whose text names the case dtype are kept apart per dtype (``promoted@float16``)."""
    if not h.get("id"):
        return None
    low = (h.get("params") or {}).get("computed_in")
    if low:
        return f"{h['id']}:{low}"
    also = (h.get("params") or {}).get("also_computed_in")
    if also:   # the idea with a second mistake (part of it computed in a lower format): its own line
        return f"{h['id']}+{also}"
    if h["id"] == "axis_factor":   # the same axis in every case, whatever its size there
        params = h.get("params") or {}
        return (f"axis_factor:{params.get('how')}:{'root:' if params.get('root') else ''}"
                f"{','.join(map(str, params.get('where') or ()))}")
    got = (h.get("params") or {}).get("got")
    if h["id"] in ("promoted", "demoted") and got:
        # one mistake (a result in float64, say) in several case dtypes: one hint that names
        # them (:func:`grader.words.generic.combined`), not one near-identical hint per dtype
        return f"{h['id']}:{got}"
    return f"{h['id']}@{h.get('dtype')}" if h["id"] in PER_DTYPE else h["id"]


def _combined_text(top: str, mine: list[dict[str, Any]], framework: str, module: str | None) -> str:
    """The summary sentence of one shared hint: the owning module's wording of facts that differ
    from case to case (:func:`grader.words.combined`), else the most common case sentence."""
    texts = Counter(h["text"] for h in mine)
    text = max(mine, key=lambda h: (texts[h["text"]], h.get("size", 0)))["text"]  # most common, then largest
    return words.combined(top, mine, framework, module) or text


def combine(hints: list[dict[str, Any]], framework: str = "numpy", module: str | None = None) -> list[dict[str, Any]]:
    """The hints of a group of failing cases (one summary entry), most shared first.

    Args:
        framework: the submission's framework, for the wording of sentences made here.
        module: the problem's hint module (``Problem.hints``), whose wording comes first.
        hints: one dict per failing case: ``id`` (None when the case had no hint), ``params``,
            ``text``, ``size`` (the case's element count), ``dtype``, ``kind`` (the failure
            kind), ``message`` and ``data`` (the failure's message and data), and optionally
            ``shapes`` (input name -> shape, which confirms or rules out an exception's hint).

    Returns:
        Up to three ``{"id", "text", "count", "of"}``, each shared by at least a fifth of the
        cases, most shared first; hints worded alike are one (their counts summed: facts the
        words leave out, such as a wrong dtype's name, made three equal lines). Facts are
        reconciled across cases by the module that owns the
        id (tied_lm_head: factors equal to ``1/sqrt(d_model)`` of each case are named so, equal
        factors and offsets are called constant); exceptions are read from their messages
        (the generic idea only, for a case that carries none; a problem's own exception ideas
        are asked per case, :func:`for_exception`); shape failures that return one shape
        whatever the input are called hard-coded.
    """
    hints = [dict(h) for h in hints]
    for h in hints:
        if not h.get("id") and h.get("kind") == "exception":
            found = generic.exception_hint(h.get("message") or "")
            if found:
                h.update(id=found.idea, text=words.render(found, framework, module), params=found.facts)
    shapes = [h for h in hints if h.get("kind") == "shape" and (h.get("data") or {}).get("got") is not None]
    if len(shapes) >= 3 and len(shapes) == len(hints):
        got = {tuple(h["data"]["got"]) for h in shapes}
        want = {tuple(h["data"]["expected"]) for h in shapes}
        if len(got) == 1 and len(want) >= 3:
            shape = next(iter(got))
            hint = Hint(idea="constant_shape", facts={"shape": list(shape)})
            return [{"id": "constant_shape", "count": len(hints), "of": len(hints),
                     "text": words.render(hint, framework, module)}]
    keys = Counter(k for k in (_key(h) for h in hints) if k)
    worded: dict[str, dict[str, Any]] = {}   # text -> its entry: facts the words do not name are one hint
    for key, count in keys.most_common():
        mine = [h for h in hints if _key(h) == key]
        text = _combined_text(key, mine, framework, module)
        if text in worded:   # "return int64" for float16, float32 and bfloat16 results: one line, not three
            worded[text]["count"] += count
        else:
            worded[text] = {"id": mine[0]["id"], "text": text, "count": count, "of": len(hints)}
    ranked = sorted(worded.values(), key=lambda e: -e["count"])   # stable: the first worded leads a tie
    return [e for e in ranked if 5 * e["count"] >= len(hints)][:3]
