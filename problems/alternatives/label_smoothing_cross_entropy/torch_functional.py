"""Source: https://docs.pytorch.org/docs/stable/generated/torch.nn.functional.cross_entropy.html (``label_smoothing``)
Expect: pass
Why: PyTorch's own label smoothing is the statement's definition.
"""
import torch  # noqa: F401 - graded as PyTorch
import torch.nn.functional as F


def label_smoothing_cross_entropy(logits, targets, smoothing=0.1):
    return F.cross_entropy(logits, targets.long(), label_smoothing=smoothing)
