"""Source: https://github.com/ZiqinZhou66/ZegCLIP/blob/eab9ceff9ed6ea12f0615aab19d37518b0076f9c/models/decode_heads/utils.py
Expect: shape
Why: the same code verbatim returns angle_rads[np.newaxis, ...], shape (1, seq_len, d_model) (cast to float32 here so the shape is the main fault).
"""
import numpy as np


def get_angles(pos, i, d_model):
    angle_rates = 1 / np.power(10000, (2 * (i // 2)) / np.float32(d_model))
    return pos * angle_rates


def sinusoidal_positional_encoding(seq_len, d_model):
    angle_rads = get_angles(np.arange(seq_len)[:, np.newaxis], np.arange(d_model)[np.newaxis, :], d_model)
    angle_rads[:, 0::2] = np.sin(angle_rads[:, 0::2])
    angle_rads[:, 1::2] = np.cos(angle_rads[:, 1::2])
    pos_encoding = angle_rads[np.newaxis, ...]
    return pos_encoding.astype(np.float32)
