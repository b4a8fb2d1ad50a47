"""Reference solution of ``cross_entropy`` (problems/cross_entropy.yaml), run by the grader in JAX."""
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import logsumexp


def cross_entropy(logits, targets):
    """Mean of ``logsumexp(logits[i]) - logits[i, targets[i]]`` over the rows: 0-d.

    Raises:
        TypeError: ``targets`` is not an integer array.
        IndexError: a target is outside ``[0, C)``.
    """
    t = np.asarray(targets)
    if t.dtype.kind not in "iu":
        raise TypeError(f"targets must be integers, not {t.dtype}")
    x = jnp.asarray(logits)
    if t.size and (t.min() < 0 or t.max() >= x.shape[-1]):
        raise IndexError("a target is outside [0, C)")
    picked = jnp.take_along_axis(x, jnp.asarray(t)[:, None], axis=-1)[:, 0]
    return jnp.mean(logsumexp(x, axis=-1) - picked)
