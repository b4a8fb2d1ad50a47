# Mistake: returns probabilities (softmax over the vocabulary) instead of raw logits.
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    logits = np.matmul(hidden, embedding_matrix.T)
    shifted = logits - np.max(logits, axis=-1, keepdims=True)
    weights = np.exp(shifted)
    return weights / np.sum(weights, axis=-1, keepdims=True)
