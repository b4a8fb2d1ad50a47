# wrong: the table is not transposed (fails, or is wrong when vocab_size == d_model)
import torch


def tied_lm_head(hidden, embedding_matrix):
    return torch.matmul(hidden, embedding_matrix)
