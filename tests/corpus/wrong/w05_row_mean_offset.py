# Mistake: centres each row of logits by subtracting its mean (a per-row offset).
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    logits = hidden @ embedding_matrix.T
    return logits - logits.mean(axis=-1, keepdims=True)
