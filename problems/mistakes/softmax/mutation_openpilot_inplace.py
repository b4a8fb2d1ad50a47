"""Source: https://github.com/commaai/openpilot/blob/75a8e5d16ebaffade44b45bf8ef027fcebeb8f3a/selfdrive/modeld/parse_model_outputs.py#L7
Expect: mutation
Why: openpilot's softmax shifts (and for float32/64 exponentiates and normalises) the caller's array in place with `x -= ...`, `np.exp(x, out=x)`, `x /= ...`.
"""
import numpy as np


def softmax(logits, axis=-1):
    x = logits
    x -= np.max(x, axis=axis, keepdims=True)
    if x.dtype == np.float32 or x.dtype == np.float64:
        np.exp(x, out=x)
    else:
        x = np.exp(x)
    x /= np.sum(x, axis=axis, keepdims=True)
    return x
