# Mistake: cosine similarity (both hidden and the embedding rows L2-normalised) instead of dot products.
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    h = hidden / np.sqrt((hidden * hidden).sum(axis=-1, keepdims=True))
    e = embedding_matrix / np.sqrt((embedding_matrix ** 2).sum(axis=-1, keepdims=True))
    return h @ e.T
