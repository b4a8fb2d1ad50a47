# Mistake: computes the logits but forgets the return statement (returns None).
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    logits = hidden @ embedding_matrix.T
