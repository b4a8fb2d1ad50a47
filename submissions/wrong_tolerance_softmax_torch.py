"""Wrong (tolerance), PyTorch: returns probabilities instead of logits (the twin of
wrong_tolerance_softmax.py)."""
import torch


def tied_lm_head(hidden, embedding_matrix):
    return torch.softmax(hidden @ embedding_matrix.T, dim=-1)
