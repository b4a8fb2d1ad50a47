"""Source: https://github.com/jaymody/picoGPT/blob/817292baea75f194fb0bb8ba2aa5f947af4e45ee/gpt2.py#L35
Expect: dtype
Why: picoGPT divides by np.sqrt(q.shape[-1]), a np.float64 scalar; under NumPy 2 promotion that turns float16/float32 scores (and the result) into float64 (here .T is made swapaxes and the mask a np.where so that only the dtype is wrong).
"""
import numpy as np


def softmax(x):
    exp_x = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return exp_x / np.sum(exp_x, axis=-1, keepdims=True)


def scaled_dot_product_attention(q, k, v, mask=None):
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    return softmax(s) @ v
