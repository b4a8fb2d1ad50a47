"""Source: https://github.com/labmlai/annotated_deep_learning_paper_implementations/blob/e6b3c8a6a2cdae4071bcde1abeaaf9a2bc37bd53/labml_nn/transformers/positional_encoding.py#L51
Expect: shape
Why: labml's get_positional_encoding ends with encodings.unsqueeze(1), shape (seq_len, 1, d_model) for its (seq, batch, d) layout.
"""
import math
import torch


def sinusoidal_positional_encoding(seq_len, d_model):
    encodings = torch.zeros(seq_len, d_model)
    position = torch.arange(0, seq_len, dtype=torch.float32).unsqueeze(1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float32)
    div_term = torch.exp(two_i * -(math.log(10000.0) / d_model))
    encodings[:, 0::2] = torch.sin(position * div_term)
    encodings[:, 1::2] = torch.cos(position * div_term)
    encodings = encodings.unsqueeze(1).requires_grad_(False)
    return encodings
