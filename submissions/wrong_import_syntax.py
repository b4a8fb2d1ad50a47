"""Wrong (import): a syntax error (the colon is missing)."""
import numpy as np


def tied_lm_head(hidden, embedding_matrix)
    return hidden @ embedding_matrix.T
