"""Mistake (tolerance): a running sum over d_model kept in the inputs' dtype.

Right in float32 and float64, but in float16 every partial sum is rounded to float16: over
hundreds of terms of one sign the error grows far past what a float32 accumulation allows.
"""
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    out = np.zeros(hidden.shape[:-1] + (embedding_matrix.shape[0],), dtype=hidden.dtype)
    for k in range(hidden.shape[-1]):
        out += hidden[..., k, None] * embedding_matrix[:, k]
    return out
