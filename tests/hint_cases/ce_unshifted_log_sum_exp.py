"""A newcomer's cross_entropy: log(sum(exp(logits))) without the max shift, no softmax anywhere.
It was told "never take the log of a softmax" on large_logits and six other cases."""
import numpy as np


def cross_entropy(logits, targets):
    if not np.issubdtype(targets.dtype, np.integer):
        raise TypeError("targets must be integers")
    if np.any(targets < 0) or np.any(targets >= logits.shape[-1]):
        raise ValueError("target out of range")
    lse = np.log(np.sum(np.exp(logits), axis=-1))
    return np.mean(lse - logits[np.arange(logits.shape[0]), targets])
