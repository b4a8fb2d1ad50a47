"""Hints in words: a hint's facts in, one sentence out, chosen once for the learner's framework.

The hint stage (``grader.diagnose``, the ideas of ``grader/hints/``) names a mistake as a
record, :class:`grader.hints.Hint` (``idea`` and ``facts``), never as a sentence. This package
words it when the report is made (``grader.grading.finish``, and the summary's shared hints in
``grader.diagnose.combine``), for the framework the submission is graded as:

* the wording table of the module that owns the idea: ``grader/words/<module>.py`` for a
  bundled hint module (``tied_lm_head``, ``masked_mean_pool``, ``embedding_lookup`` and the course
  pack's ``softmax``, ``layer_norm``, ``rms_norm``, ``gelu``, ``cross_entropy``, ``kl_divergence``, ``conv1d``,
  ``scaled_dot_product_attention``), then
  ``grader/words/generic.py`` for the generic ideas every problem has. Each table is
  ``WORDS: dict[idea, function(facts, code) -> str]``;
* the framework's code, from ``CODE`` in ``grader/frameworks/<framework>.py`` (a cast is
  ``x.astype(np.float32)``, ``x.astype(jnp.float32)`` or ``x.to(torch.float32)``), filled in
  by :class:`Code`. Advice that belongs to one framework (JAX without ``jax_enable_x64``) is a
  template that is empty for the others.

So a wording is changed in one function of one table, and a framework's way of writing code in
its ``CODE``. An instructor's hint module words its own ideas (``Idea.text``, ``Hint.text``),
which are shown as they are.
"""
from __future__ import annotations

from typing import Any, Callable

from .. import frameworks
from ..hints import Hint
from . import conv1d as _conv1d
from . import cross_entropy as _cross_entropy
from . import embedding_lookup as _embedding_lookup
from . import gelu as _gelu
from . import kl_divergence as _kl_divergence
from . import generic as _generic
from . import layer_norm as _layer_norm
from . import masked_mean_pool as _masked_mean_pool
from . import rms_norm as _rms_norm
from . import scaled_dot_product_attention as _attention
from . import softmax as _softmax
from . import tied_lm_head as _tied_lm_head

#: A wording: the hint's facts and the framework's :class:`Code` -> one sentence (no period).
Wording = Callable[[dict[str, Any], "Code"], str]

#: The wording tables of the bundled hint modules, by the name a spec gives in ``hints``.
TABLES: dict[str, dict[str, Wording]] = {"tied_lm_head": _tied_lm_head.WORDS,
                                         "masked_mean_pool": _masked_mean_pool.WORDS,
                                         "embedding_lookup": _embedding_lookup.WORDS,
                                         "softmax": _softmax.WORDS, "layer_norm": _layer_norm.WORDS,
                                         "scaled_dot_product_attention": _attention.WORDS,
                                         "rms_norm": _rms_norm.WORDS, "gelu": _gelu.WORDS,
                                         "kl_divergence": _kl_divergence.WORDS, "cross_entropy": _cross_entropy.WORDS,
                                         "conv1d": _conv1d.WORDS}
#: The generic ideas' wording (every problem).
GENERIC: dict[str, Wording] = _generic.WORDS
#: Summary wordings of ideas whose facts a module reconciles across cases (factors that differ
#: from case to case...), by module; each ``function(top, mine, code) -> str | None``.
COMBINED = {"tied_lm_head": _tied_lm_head.combined, None: _generic.combined}


class Code:
    """How code is written in one framework: ``code("cast", x="hidden", dtype="float32")`` is
    ``hidden.astype(np.float32)`` for NumPy (``grader.frameworks.<name>.CODE`` filled in).

    Attributes:
        framework: the framework's name (``"numpy"``, ``"jax"``, ``"torch"``).

    Raises:
        KeyError: an unknown framework (at construction) or template (at a call).
    """

    def __init__(self, framework: str) -> None:
        self.framework = framework
        self._templates: dict[str, str] = frameworks.get(framework).CODE

    def __call__(self, key: str, **names: Any) -> str:
        """The template ``key`` with ``names`` filled in."""
        return self._templates[key].format(**names)


def table(module: str | None) -> list[dict[str, Wording]]:
    """The wording tables that word a hint of a problem whose spec names ``module`` in
    ``hints`` (a bundled name, an instructor's file, or None), most specific first."""
    own = TABLES.get(module) if module else None
    return [own, GENERIC] if own is not None else [GENERIC]


def wording(idea: str, module: str | None = None) -> Wording | None:
    """The function that words ``idea`` for a problem with hint module ``module``, or None."""
    for words in table(module):
        if idea in words:
            return words[idea]
    return None


def render(hint: Hint, framework: str = "numpy", module: str | None = None) -> str | None:
    """One sentence for ``hint`` in the words of a ``framework`` submission (no trailing period).

    Args:
        hint: the record; its own ``text`` (an instructor's idea) is returned as it is.
        framework: the framework the submission is graded as.
        module: the problem's hint module (``Problem.hints``), whose table comes first.

    Returns:
        The sentence, or None when no table words the idea.

    Raises:
        KeyError: a wording needs a fact the hint lacks, or the framework is unknown.
    """
    if hint.text is not None:
        return hint.text
    words = wording(hint.idea, module)
    if words is None:
        return None
    code = Code(framework)
    text = words(dict(hint.facts), code)
    if hint.facts.get("also_computed_in"):   # two mistakes at once (grader.hints.generic._in_lower_precision)
        also = _generic.also_lower(dict(hint.facts), code)
        text += (" " + also[0].upper() + also[1:]) if text.endswith("?") else "; " + also
    return text


def render_failure(failure: Any, framework: str, module: str | None) -> None:
    """Word the hint a :class:`grader.results.Failure` carries as facts (``data["hint_id"]``,
    ``data["hint_params"]``) into ``failure.hint`` when it has no text yet; a wording that
    fails leaves no hint (hints are advice). A torch learner's type failure says "not a tensor"."""
    if framework == "torch" and failure.kind == "type" and failure.data.get("wanted") == "array":
        # the case's line in a torch learner's words, from its facts, as the hint's (a newcomer
        # read "returned list, not an array" above "return a tensor, not a list")
        failure.message = f"the function returned {failure.data.get('returned')}, not a tensor"
    idea = failure.data.get("hint_id")
    if failure.hint is not None or not idea:
        return
    try:
        failure.hint = render(Hint(idea=idea, facts=dict(failure.data.get("hint_params") or {})), framework, module)
    except Exception:  # noqa: BLE001 - a hint that cannot be worded is left out
        failure.hint = None


def combined(top: str, mine: list[dict[str, Any]], framework: str = "numpy",
             module: str | None = None) -> str | None:
    """The summary sentence of one hint shared by many cases whose facts differ (``top``: the
    summary key, ``"scaled"``, ``"lower_precision:float16"``...; ``mine``: the cases' hint dicts,
    :func:`grader.diagnose.combine`), or None to keep the most common case sentence."""
    code = Code(framework)
    for key in (module, None):
        fn = COMBINED.get(key) if key in COMBINED else None
        if fn is not None:
            text = fn(top, mine, code)
            if text is not None:
                return text
    return None


__all__ = ["COMBINED", "Code", "GENERIC", "TABLES", "combined", "render", "render_failure", "table", "wording"]
