"""Source: https://github.com/xingchensong/Speech-Transformer-tf2.0/blob/5e2ab2e6adf132a82987812f55a408e50c7702e2/models/modules/positional_encoding.py
Expect: tolerance
Why: concatenates [sines, cosines] in two halves instead of interleaving sin/cos columns (batch axis and tf.cast replaced by a float32 (seq_len, d_model) array).
"""
import numpy as np


def get_angles(pos, i, d_model):
    angle_rates = 1 / np.power(10000, (2 * (i // 2)) / np.float32(d_model))
    return pos * angle_rates


def sinusoidal_positional_encoding(seq_len, d_model):
    angle_rads = get_angles(np.arange(seq_len)[:, np.newaxis], np.arange(d_model)[np.newaxis, :], d_model)
    sines = np.sin(angle_rads[:, 0::2])
    cosines = np.cos(angle_rads[:, 1::2])
    pos_encoding = np.concatenate([sines, cosines], axis=-1)
    return pos_encoding.astype(np.float32)
