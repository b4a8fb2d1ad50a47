# Mistake: a Python loop over d_model with an accumulator in the inputs' dtype. In float16 and bfloat16
# every partial sum is rounded to the half dtype; over many terms of one sign the sum stalls (in float16
# at about 2048, where adding a term below 1 changes nothing). matmul accumulates in float32.
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    acc = np.zeros(hidden.shape[:-1] + (embedding_matrix.shape[0],), dtype=hidden.dtype)
    for k in range(hidden.shape[-1]):
        acc = acc + hidden[..., k, None] * embedding_matrix[:, k]
    return acc
