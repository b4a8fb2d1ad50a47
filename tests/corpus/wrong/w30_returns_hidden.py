# Mistake: returns hidden unchanged (the projection was never applied).
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    return hidden
