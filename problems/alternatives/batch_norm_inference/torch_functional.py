"""Source: https://docs.pytorch.org/docs/stable/generated/torch.nn.functional.batch_norm.html (``training=False``)
Expect: pass
Why: PyTorch's evaluation-mode batch norm uses exactly the given running statistics.
"""
import torch  # noqa: F401 - graded as PyTorch
import torch.nn.functional as F


def batch_norm_inference(x, running_mean, running_var, weight, bias, eps=1e-5):
    return F.batch_norm(x, running_mean, running_var, weight, bias, training=False, eps=eps)
