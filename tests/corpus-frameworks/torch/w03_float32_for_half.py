# wrong: float32 logits for half inputs (never cast back)
import torch


def tied_lm_head(hidden, embedding_matrix):
    return hidden.float() @ embedding_matrix.float().T if hidden.dtype != torch.float64 \
        else hidden @ embedding_matrix.T
