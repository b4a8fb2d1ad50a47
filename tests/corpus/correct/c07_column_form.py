# Correct: column form E @ h, with h turned into a column vector and the column axis dropped after.
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    column = hidden[..., None]                  # (..., d_model, 1)
    return (embedding_matrix @ column)[..., 0]  # (..., vocab, 1) -> (..., vocab)
