"""Source: the positions and frequencies made in the input's dtype (``torch.arange(seq_len, dtype=x.dtype)``, ``inv_freq.to(x.dtype)``, a cast the LLaMA code avoids by computing them in float32 under autocast disabled: https://github.com/huggingface/transformers/blob/main/src/transformers/models/llama/modeling_llama.py)
Expect: tolerance
Why: in float16 / bfloat16 the position t itself rounds above 256 (bfloat16) or 2048 (float16), and t * inv_freq loses the angle: long sequences are rotated wrongly.
"""
import torch


def rotary_embedding(x, base=10000.0):
    T, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError("d must be even")
    inv_freq = (1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float32) / d))).to(x.dtype)
    t = torch.arange(T, dtype=x.dtype)
    emb = torch.cat([torch.outer(t, inv_freq)] * 2, dim=-1)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return x * emb.cos() + torch.cat((-x2, x1), dim=-1) * emb.sin()
