# Mistake: converts the logits to an integer dtype ("token scores are integers").
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    return (hidden @ embedding_matrix.T).astype(np.int64)
