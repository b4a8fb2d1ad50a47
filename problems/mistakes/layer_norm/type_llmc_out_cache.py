"""Source: https://github.com/karpathy/llm.c/blob/f1e2ace651495b74ae22d45d1723443fd00ecd3a/doc/layernorm/layernorm.py#L7
Expect: type
Why: llm.c's LayerNorm.forward returns (out, cache) for the backward pass; as a submission that is a tuple, not an array.
"""
import torch


def layer_norm(x, gamma, beta, eps=1e-5):
    C = x.shape[-1]
    mean = x.sum(-1, keepdim=True) / C
    xshift = x - mean
    var = (xshift**2).sum(-1, keepdim=True) / C
    rstd = (var + eps) ** -0.5
    norm = xshift * rstd
    out = norm * gamma + beta
    cache = (x, gamma, mean, rstd)
    return out, cache
