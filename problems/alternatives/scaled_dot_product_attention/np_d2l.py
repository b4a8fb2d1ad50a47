"""Source: https://github.com/d2l-ai/d2l-en/blob/23d7a5aecceee57d1292c56e90cce307f183bb0a/d2l/jax.py#L1376
Expect: pass
Why: d2l's DotProductAttention (queries @ keys.swapaxes / math.sqrt(d), masked softmax, @ values) in NumPy, with the valid_lens mask replaced by np.where(mask, s, -inf) and a max-shifted softmax; float16 computed in float32.
"""
import math
import numpy as np


def scaled_dot_product_attention(q, k, v, mask=None):
    dt = q.dtype
    if dt == np.float16:
        q, k, v = q.astype(np.float32), k.astype(np.float32), v.astype(np.float32)
    d = q.shape[-1]
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(d)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    e = np.exp(scores - scores.max(-1, keepdims=True))
    w = e / e.sum(-1, keepdims=True)
    return (w @ v).astype(dt)
