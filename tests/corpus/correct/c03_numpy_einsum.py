# Correct: einsum contracting the feature axis; the ellipsis keeps every leading axis.
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    return np.einsum("...k,vk->...v", hidden, embedding_matrix)
