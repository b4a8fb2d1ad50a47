# Mistake: adds a small bias of 1e-3 to every logit (invisible in float16, caught in float32/float64).
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    logits = hidden @ embedding_matrix.T
    return logits + np.asarray(1e-3, dtype=logits.dtype)
