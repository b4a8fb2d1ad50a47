"""Source: the textbook form ``sum(p * log(p / q))`` on probabilities made by a softmax first (a pattern of tutorials, no single file cited)
Expect: non_finite
Why: with large logits the probabilities underflow to 0: 0 * log(0 / 0) is NaN.
"""
import numpy as np


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def kl_divergence(p_logits, q_logits):
    p, q = softmax(p_logits), softmax(q_logits)
    return np.sum(p * np.log(p / q)) / p.shape[0]
