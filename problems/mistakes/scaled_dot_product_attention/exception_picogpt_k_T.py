"""Source: https://github.com/jaymody/picoGPT/blob/817292baea75f194fb0bb8ba2aa5f947af4e45ee/gpt2.py#L35
Expect: exception
Why: picoGPT's attention uses k.T, which reverses every axis, so it only works on unbatched 2-D q/k/v; batched inputs fail in the matmul (math.sqrt and np.where mask used so that this is the only fault).
"""
import math
import numpy as np


def softmax(x):
    exp_x = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return exp_x / np.sum(exp_x, axis=-1, keepdims=True)


def scaled_dot_product_attention(q, k, v, mask=None):
    s = q @ k.T / math.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    return softmax(s) @ v
