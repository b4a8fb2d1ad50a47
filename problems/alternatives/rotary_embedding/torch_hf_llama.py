"""Source: https://github.com/huggingface/transformers/blob/main/src/transformers/models/llama/modeling_llama.py (LlamaRotaryEmbedding, rotate_half, apply_rotary_pos_emb), with inv_freq in float64 for float64 inputs (HF computes it in float32)
Expect: pass
Why: the LLaMA port: emb = cat(freqs, freqs), q * cos + rotate_half(q) * sin, cos/sin cast to the input dtype.
"""
import torch


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rotary_embedding(x, base=10000.0):
    dim, seq = x.shape[-1], x.shape[-2]
    if dim % 2:
        raise ValueError("d must be even")
    wide = torch.float64 if x.dtype == torch.float64 else torch.float32
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(wide) / dim))
    t = torch.arange(seq, dtype=wide)
    freqs = torch.outer(t, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    return (x * cos) + (rotate_half(x) * sin)
