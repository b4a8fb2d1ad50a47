"""Source: https://github.com/jaymody/picoGPT/blob/817292baea75f194fb0bb8ba2aa5f947af4e45ee/gpt2.py#L52
Expect: non_finite
Why: picoGPT's additive mask `(1 - mask) * -1e10` in the input dtype: in float16 -1e10 rounds to -inf and 0 * -inf = NaN on every allowed position.
"""
import math
import numpy as np


def softmax(x):
    exp_x = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return exp_x / np.sum(exp_x, axis=-1, keepdims=True)


def scaled_dot_product_attention(q, k, v, mask=None):
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        s = s + (1 - mask.astype(q.dtype)) * -1e10
    return softmax(s) @ v
