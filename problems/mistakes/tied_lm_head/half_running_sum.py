"""Mistake (tolerance): a running sum over d_model kept in the inputs' dtype.

Each product is formed in float32 (or float64), but the running total is stored back in the
inputs' dtype after every feature. Right in float32 and float64; in float16 every partial sum
is rounded to float16, and over hundreds of terms of one sign the error grows far past what a
float32 accumulation (what `@` does) allows.
"""
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    wide = np.promote_types(hidden.dtype, np.float32)
    h = hidden.astype(wide)
    table_t = np.ascontiguousarray(embedding_matrix.T.astype(wide))  # (d_model, vocab_size)
    total = np.zeros(hidden.shape[:-1] + (embedding_matrix.shape[0],), dtype=hidden.dtype)
    for k in range(hidden.shape[-1]):
        total = (total + h[..., k, None] * table_t[k]).astype(hidden.dtype)
    return total
