"""Source: https://docs.pytorch.org/docs/stable/generated/torch.nn.functional.cross_entropy.html
Expect: raises
Why: plain F.cross_entropy ignores target -100 (its ignore_index) without an error and raises RuntimeError, not TypeError/ValueError/IndexError, for float class-index targets.
"""
import torch.nn.functional as F


def cross_entropy(logits, targets):
    return F.cross_entropy(logits, targets.long() if targets.dtype.is_floating_point is False else targets)
