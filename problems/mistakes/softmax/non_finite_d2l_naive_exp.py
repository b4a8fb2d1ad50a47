"""Source: https://github.com/d2l-ai/d2l-en/blob/23d7a5aecceee57d1292c56e90cce307f183bb0a/chapter_linear-classification/softmax-regression-scratch.md#L82
Expect: non_finite
Why: d2l's from-scratch softmax exponentiates without subtracting the max, so logits of 1e4 overflow to inf and give inf/inf = NaN (the book itself warns it is not robust).
"""
import torch


def softmax(logits, axis=-1):
    X_exp = torch.exp(logits)
    partition = X_exp.sum(axis, keepdims=True)
    return X_exp / partition
