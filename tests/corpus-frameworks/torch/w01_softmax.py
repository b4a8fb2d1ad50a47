# wrong: probabilities instead of logits
import torch


def tied_lm_head(hidden, embedding_matrix):
    return torch.softmax(hidden @ embedding_matrix.T, dim=-1)
