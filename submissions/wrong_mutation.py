"""Wrong (mutation): right logits, but scales hidden in place and back, leaving it changed."""
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    out = hidden @ embedding_matrix.T
    hidden *= 3
    return out
