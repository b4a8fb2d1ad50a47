"""Wrong (dtype), PyTorch: always returns float32 (the twin of wrong_dtype_float32.py)."""


def tied_lm_head(hidden, embedding_matrix):
    import torch
    return (hidden @ embedding_matrix.T).to(torch.float32)
