"""Source: https://github.com/jaymody/picoGPT/blob/817292baea75f194fb0bb8ba2aa5f947af4e45ee/gpt2.py#L8
Expect: pass
Why: picoGPT's max-shifted softmax, with its hard-coded axis=-1 made the `axis` parameter and half inputs computed in float32 then rounded once.
"""
import numpy as np


def softmax(logits, axis=-1):
    x = logits.astype(np.float32) if logits.dtype == np.float16 else logits
    exp_x = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return (exp_x / np.sum(exp_x, axis=axis, keepdims=True)).astype(logits.dtype)
