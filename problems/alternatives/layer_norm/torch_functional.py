"""Source: https://github.com/karpathy/nanoGPT/blob/3adf61e154c3fe3fca428ad6bc3818b27a3b8291/model.py#L18
Expect: pass
Why: nanoGPT's LayerNorm is F.layer_norm(input, weight.shape, weight, bias, eps), the PyTorch built-in (biased variance, eps inside the sqrt, float accumulation for half).
"""
import torch.nn.functional as F


def layer_norm(x, gamma, beta, eps=1e-5):
    return F.layer_norm(x, gamma.shape, gamma, beta, eps)
