"""Source: https://docs.pytorch.org/docs/stable/generated/torch.nn.functional.conv1d.html
Expect: pass
Why: PyTorch's conv1d without bias is exactly the statement's operation.
"""
import torch  # noqa: F401 - graded as PyTorch
import torch.nn.functional as F


def conv1d(x, w, stride=1, padding=0):
    if stride < 1:
        raise ValueError("stride must be >= 1")
    return F.conv1d(x, w, stride=stride, padding=padding)
