"""Source: https://github.com/meta-llama/llama/blob/main/llama/model.py (precompute_freqs_cis, apply_rotary_emb: ``torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))``)
Expect: tolerance
Why: Meta's own LLaMA pairs features (0, 1), (2, 3)... (interleaved), the statement's rotate_half pairs i with i + d/2: the same rotation of differently paired features.
"""
import torch


def rotary_embedding(x, base=10000.0):
    T, dim = x.shape[-2], x.shape[-1]
    if dim % 2:
        raise ValueError("d must be even")
    freqs = 1.0 / (base ** (torch.arange(0, dim, 2)[: (dim // 2)].double() / dim))
    t = torch.arange(T, dtype=torch.float64)
    freqs_cis = torch.polar(torch.ones(T, dim // 2, dtype=torch.float64), torch.outer(t, freqs))
    xq_ = torch.view_as_complex(x.double().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(xq_ * freqs_cis).flatten(-2).to(x.dtype)
