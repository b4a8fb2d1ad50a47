"""Source: https://docs.pytorch.org/docs/stable/generated/torch.nn.functional.cross_entropy.html
Expect: pass
Why: F.cross_entropy (mean reduction) with the checks it lacks: it silently ignores target -100 (ignore_index) and raises RuntimeError, not TypeError, for float targets of shape (N,).
"""
import torch
import torch.nn.functional as F


def cross_entropy(logits, targets):
    if targets.dtype not in (torch.int32, torch.int64):
        raise TypeError("targets must be int32 or int64")
    if targets.numel() and (targets.min() < 0 or targets.max() >= logits.shape[-1]):
        raise IndexError("target out of range")
    x = logits.to(torch.promote_types(logits.dtype, torch.float32))
    return F.cross_entropy(x, targets.long()).to(logits.dtype)
