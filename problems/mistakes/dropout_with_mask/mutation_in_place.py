"""Source: https://github.com/pytorch/pytorch/blob/main/torch/nn/functional.py (``dropout(input, p, training, inplace=True)``: ``_VF.dropout_``), the in-place variant, here with the given mask
Expect: mutation
Why: the values are right, but x itself is overwritten.
"""
import torch


def dropout_with_mask(x, keep, p):
    return x.mul_(keep).div_(1 - p)
