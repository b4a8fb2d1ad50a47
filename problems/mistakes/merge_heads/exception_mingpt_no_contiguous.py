"""Source: https://github.com/karpathy/minGPT/blob/master/mingpt/model.py (CausalSelfAttention.forward: ``y.transpose(1, 2).contiguous().view(B, T, C)``) without ``.contiguous()``
Expect: exception
Why: view() of a transposed tensor raises "view size is not compatible with input tensor's size and stride" (except where a size is 1).
"""
import torch


def merge_heads(x):
    B, nh, T, hs = x.size()
    return x.transpose(1, 2).view(B, T, nh * hs)
