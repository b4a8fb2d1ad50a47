# Correct: broadcast (..., 1, d) * (V, d) and sum over the feature axis.
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    products = np.expand_dims(hidden, -2) * embedding_matrix
    return products.sum(axis=-1)
