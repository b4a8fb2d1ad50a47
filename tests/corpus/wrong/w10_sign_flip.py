# Mistake: returns negated logits (e.g. confused logits with a loss / energy).
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    return -(hidden @ embedding_matrix.T)
