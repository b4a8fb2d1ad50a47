"""Source: https://github.com/hurricanelx/LxNet/blob/efa40231f1f8dfe21f95bd7e27dabc8365c929c4/LxNet/Layers/Softmax.py
Expect: type
Why: CS231n's softmax_loss returns (loss, dx); as a submission that is a tuple, not the loss (range checks added so that only the return type is wrong).
"""
import numpy as np


def cross_entropy(logits, targets):
    if targets.dtype.kind not in "iu":
        raise TypeError("targets must be integers")
    if targets.min() < 0 or targets.max() >= logits.shape[1]:
        raise IndexError("target out of range")
    x = logits
    shifted_logits = x - np.max(x, axis=1, keepdims=True)
    Z = np.sum(np.exp(shifted_logits), axis=1, keepdims=True)
    log_probs = shifted_logits - np.log(Z)
    probs = np.exp(log_probs)
    N = x.shape[0]
    loss = -np.sum(log_probs[np.arange(N), targets]) / N
    dx = probs.copy()
    dx[np.arange(N), targets] -= 1
    dx /= N
    return loss, dx
