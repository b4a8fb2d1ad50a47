"""Source: https://github.com/huggingface/transformers/blob/e368c1a8819d54720956961ea7cd47d99239bd39/src/transformers/models/distilbert/modeling_distilbert.py
Expect: pass
Why: DistilBERT's _create_sinusoidal_embeddings (pos / 10000**(2*(j//2)/dim) in float64, sin on even, cos on odd columns) written into a float32 array instead of a torch weight.
"""
import numpy as np


def sinusoidal_positional_encoding(seq_len, d_model):
    n_pos, dim = seq_len, d_model
    position_enc = np.array([[pos / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)] for pos in range(n_pos)]).reshape(n_pos, dim)
    out = np.zeros((n_pos, dim), dtype=np.float32)
    out[:, 0::2] = np.sin(position_enc[:, 0::2])
    out[:, 1::2] = np.cos(position_enc[:, 1::2])
    return out
