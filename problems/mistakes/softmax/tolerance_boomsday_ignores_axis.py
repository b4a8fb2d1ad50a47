"""Source: https://github.com/zhaoqi94/The-Boomsday-Project/blob/9ca8948aad4ac04bf8e340d0430f7c0145a33835/utils/activation.py
Expect: tolerance
Why: takes an `axis` argument but always reduces over axis=-1, so softmax(x, axis=0) is wrong.
"""
import numpy as np


def softmax(logits, axis=-1):
    x = logits - np.max(logits, axis=-1, keepdims=True)
    x = np.exp(x)
    x /= np.sum(x, axis=-1, keepdims=True)
    return x
