"""Source: https://docs.pytorch.org/docs/stable/generated/torch.nn.functional.cross_entropy.html called without ``label_smoothing`` (its default is 0.0)
Expect: tolerance
Why: plain cross-entropy: right only where smoothing = 0.
"""
import torch  # noqa: F401 - graded as PyTorch
import torch.nn.functional as F


def label_smoothing_cross_entropy(logits, targets, smoothing=0.1):
    return F.cross_entropy(logits, targets.long())
