"""Source: https://github.com/jaymody/picoGPT/blob/817292baea75f194fb0bb8ba2aa5f947af4e45ee/gpt2.py#L4
Expect: tolerance
Why: picoGPT's gelu is GPT-2's tanh approximation (error up to ~5e-4); np.sqrt(2 / np.pi) is here math.sqrt so that it is not also a float64 dtype promotion under NumPy 2.
"""
import math
import numpy as np


def gelu(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
