"""Source: https://github.com/jaymody/picoGPT/blob/817292baea75f194fb0bb8ba2aa5f947af4e45ee/gpt2.py#L13
Expect: pass
Why: picoGPT's layer_norm (np.mean / biased np.var over the last axis, eps inside the sqrt), with float16 computed in float32 and rounded once.
"""
import numpy as np


def layer_norm(x, gamma, beta, eps=1e-5):
    dt = x.dtype
    if dt == np.float16:
        x, gamma, beta = x.astype(np.float32), gamma.astype(np.float32), beta.astype(np.float32)
    mean = np.mean(x, axis=-1, keepdims=True)
    variance = np.var(x, axis=-1, keepdims=True)
    x = (x - mean) / np.sqrt(variance + eps)  # normalize x to have mean=0 and var=1 over last axis
    return (gamma * x + beta).astype(dt)  # scale and offset with gamma/beta params
