"""Source: https://github.com/hurricanelx/LxNet/blob/efa40231f1f8dfe21f95bd7e27dabc8365c929c4/LxNet/Layers/Softmax.py
Expect: tolerance
Why: the CS231n loss with the `/ N` dropped (a per-batch sum, reduction='sum'), so the result is N times too large.
"""
import numpy as np


def cross_entropy(logits, targets):
    if targets.dtype.kind not in "iu":
        raise TypeError("targets must be integers")
    if targets.min() < 0 or targets.max() >= logits.shape[1]:
        raise IndexError("target out of range")
    shifted_logits = logits - np.max(logits, axis=1, keepdims=True)
    Z = np.sum(np.exp(shifted_logits), axis=1, keepdims=True)
    log_probs = shifted_logits - np.log(Z)
    N = logits.shape[0]
    return -np.sum(log_probs[np.arange(N), targets])
