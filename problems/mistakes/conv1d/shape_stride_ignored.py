"""Source: a stride-1 convolution used for every stride (e.g. torch.nn.functional.conv1d called without passing stride: https://docs.pytorch.org/docs/stable/generated/torch.nn.functional.conv1d.html)
Expect: shape
Why: stride is accepted and ignored: the output has L + 2p - K + 1 steps where (L + 2p - K) // stride + 1 are due.
"""
import torch
import torch.nn.functional as F


def conv1d(x, w, stride=1, padding=0):
    if stride < 1:
        raise ValueError("stride must be >= 1")
    return F.conv1d(x, w, padding=padding)
