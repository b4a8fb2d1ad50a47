"""Source: https://github.com/karpathy/llm.c/blob/f1e2ace651495b74ae22d45d1723443fd00ecd3a/doc/layernorm/layernorm.py#L7
Expect: pass
Why: llm.c's reference LayerNorm.forward (sum/C mean, biased var, (var+eps)**-0.5), generalised from B,T,C to any leading shape, returning only `out`, half computed in float32.
"""
import torch


def layer_norm(x, gamma, beta, eps=1e-5):
    dt = x.dtype
    if dt in (torch.float16, torch.bfloat16):
        x, gamma, beta = x.float(), gamma.float(), beta.float()
    C = x.shape[-1]
    mean = x.sum(-1, keepdim=True) / C
    xshift = x - mean
    var = (xshift**2).sum(-1, keepdim=True) / C
    rstd = (var + eps) ** -0.5
    norm = xshift * rstd
    out = norm * gamma + beta
    return out.to(dt)
