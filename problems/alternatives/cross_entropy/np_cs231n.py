"""Source: https://github.com/hurricanelx/LxNet/blob/efa40231f1f8dfe21f95bd7e27dabc8365c929c4/LxNet/Layers/Softmax.py
Expect: pass
Why: the CS231n softmax_loss (shifted_logits, log Z, -sum(log_probs[arange(N), y]) / N) without the gradient, plus the target checks NumPy indexing lacks; float16 computed in float32.
"""
import numpy as np


def cross_entropy(logits, targets):
    if targets.dtype.kind not in "iu":
        raise TypeError("targets must be integers")
    N, C = logits.shape
    if targets.size and (targets.min() < 0 or targets.max() >= C):
        raise IndexError("target out of range")
    x = logits.astype(np.float32) if logits.dtype == np.float16 else logits
    shifted_logits = x - np.max(x, axis=1, keepdims=True)
    Z = np.sum(np.exp(shifted_logits), axis=1, keepdims=True)
    log_probs = shifted_logits - np.log(Z)
    loss = -np.sum(log_probs[np.arange(N), targets]) / N
    return np.asarray(loss, dtype=logits.dtype)
