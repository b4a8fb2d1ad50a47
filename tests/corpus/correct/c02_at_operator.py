# Correct: the @ operator; works for a single vector and any number of leading axes.
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    logits = hidden @ embedding_matrix.T
    return logits
