"""Source: https://github.com/huggingface/transformers/blob/v4.40.0/src/transformers/models/gpt2/modeling_gpt2.py (GPT2Attention._merge_heads: ``tensor.permute(0, 2, 1, 3).contiguous()`` then ``tensor.view(new_shape)``) with the final view left out
Expect: shape
Why: the heads are moved after the tokens but not flattened: (B, T, H, Dh) where (B, T, H * Dh) is due.
"""
import torch


def merge_heads(x):
    return x.permute(0, 2, 1, 3).contiguous()
