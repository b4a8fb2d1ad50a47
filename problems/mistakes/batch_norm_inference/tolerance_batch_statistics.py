"""Source: https://docs.pytorch.org/docs/stable/generated/torch.nn.functional.batch_norm.html with ``training=True`` (the module left in train mode: the batch's own mean and variance replace the running ones)
Expect: tolerance
Why: normalises with the batch statistics, not the given running statistics.
"""
import torch  # noqa: F401 - graded as PyTorch
import torch.nn.functional as F


def batch_norm_inference(x, running_mean, running_var, weight, bias, eps=1e-5):
    return F.batch_norm(x, running_mean.clone(), running_var.clone(), weight, bias, training=True, eps=eps)
