"""Source: https://docs.pytorch.org/docs/stable/generated/torch.nn.functional.rms_norm.html
Expect: pass
Why: torch.nn.functional.rms_norm over normalized_shape=(d,) is exactly x / sqrt(mean(x**2) + eps) * weight.
"""
import torch.nn.functional as F


def rms_norm(x, weight, eps=1e-6):
    return F.rms_norm(x, weight.shape, weight, eps)
