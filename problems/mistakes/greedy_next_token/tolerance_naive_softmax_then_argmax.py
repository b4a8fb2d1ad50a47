"""Source: the greedy step written as the argmax of softmax probabilities with the textbook softmax ``np.exp(x) / np.sum(np.exp(x))`` (no max shift; a pattern of many tutorials, no single file cited)
Expect: tolerance
Why: exp overflows for large logits (above 11 in float16, 709 in float64): inf / inf is NaN and np.argmax returns the first NaN's index.
"""
import numpy as np


def greedy_next_token(logits):
    last = logits[:, -1]
    probs = np.exp(last) / np.sum(np.exp(last), axis=-1, keepdims=True)
    return np.argmax(probs, axis=-1).astype(np.int64)
