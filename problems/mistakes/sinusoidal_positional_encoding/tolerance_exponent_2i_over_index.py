"""Source: https://github.com/huggingface/transformers/blob/e368c1a8819d54720956961ea7cd47d99239bd39/src/transformers/models/distilbert/modeling_distilbert.py
Expect: tolerance
Why: DistilBERT's formula with 2 * j instead of 2 * (j // 2): every column gets its own frequency 10000**(2j/d), so odd columns use the wrong exponent (the "2i vs i" off-by-one).
"""
import numpy as np


def sinusoidal_positional_encoding(seq_len, d_model):
    dim = d_model
    position_enc = np.array([[pos / np.power(10000, 2 * j / dim) for j in range(dim)] for pos in range(seq_len)]).reshape(seq_len, dim)
    out = np.zeros((seq_len, dim), dtype=np.float32)
    out[:, 0::2] = np.sin(position_enc[:, 0::2])
    out[:, 1::2] = np.cos(position_enc[:, 1::2])
    return out
