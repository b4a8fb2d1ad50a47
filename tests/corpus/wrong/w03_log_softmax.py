# Mistake: returns log-probabilities (log_softmax) instead of raw logits.
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    logits = hidden @ embedding_matrix.T
    top = logits.max(axis=-1, keepdims=True)
    lse = top + np.log(np.exp(logits - top).sum(axis=-1, keepdims=True))
    return logits - lse
