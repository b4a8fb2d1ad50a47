"""Source: https://github.com/d2l-ai/d2l-en/blob/23d7a5aecceee57d1292c56e90cce307f183bb0a/chapter_linear-classification/softmax-regression-scratch.md#L264
Expect: non_finite
Why: d2l's from-scratch loss, -mean(log(y_hat[range(N), y])) on its un-shifted softmax: exp(1e4) overflows and the loss is NaN/inf.
"""
import torch


def cross_entropy(logits, targets):
    if targets.dtype not in (torch.int32, torch.int64):
        raise TypeError("targets must be integers")
    if targets.min() < 0 or targets.max() >= logits.shape[1]:
        raise IndexError("target out of range")
    X_exp = torch.exp(logits)
    y_hat = X_exp / X_exp.sum(1, keepdims=True)
    return -torch.log(y_hat[list(range(len(y_hat))), targets]).mean()
