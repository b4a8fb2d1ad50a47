# correct: half inputs multiplied in float32, rounded back to the inputs' dtype once
import torch


def tied_lm_head(hidden, embedding_matrix):
    if hidden.dtype in (torch.float16, torch.bfloat16):
        return (hidden.float() @ embedding_matrix.float().T).to(hidden.dtype)
    return torch.matmul(hidden, embedding_matrix.transpose(0, 1))
