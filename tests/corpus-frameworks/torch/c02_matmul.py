# correct: the @ operator with .T, on a tensor that requires grad (returned without detaching)
import torch


def tied_lm_head(hidden, embedding_matrix):
    table = embedding_matrix.clone().requires_grad_(True)
    return hidden @ table.T
