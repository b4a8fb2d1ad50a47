"""Source: https://github.com/jaymody/picoGPT/blob/817292baea75f194fb0bb8ba2aa5f947af4e45ee/gpt2.py#L4
Expect: dtype
Why: picoGPT's gelu verbatim: np.sqrt(2 / np.pi) is a np.float64 scalar, which under NumPy 2 promotes float16/float32 inputs to a float64 result (it is also the tanh approximation).
"""
import numpy as np


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
