"""Source: https://github.com/huggingface/transformers/blob/v4.40.0/src/transformers/models/bert/modeling_bert.py (BertSelfAttention.transpose_for_scores) without its ``.permute(0, 2, 1, 3)``
Expect: shape
Why: the view to (B, T, H, Dh) is right, the permute that brings heads before tokens is missing.
"""
import torch


def split_heads(x, n_heads):
    B, T, D = x.shape
    if n_heads < 1 or D % n_heads:
        raise ValueError("n_heads must divide D")
    new_x_shape = x.size()[:-1] + (n_heads, D // n_heads)
    return x.view(new_x_shape)
