"""Source: https://github.com/facebookresearch/Mask-Predict/blob/11c753526ebbbf5b946d1305a613b830f4f29232/fairseq/modules/simple_sinusoidal_positional_embedding.py
Expect: tolerance
Why: fairseq/tensor2tensor style: frequencies exp(-i * log(10000) / (half_dim - 1)) and torch.cat([sin, cos]) halves, so both the exponent and the layout differ from the paper's interleaved 10000**(2i/d).
"""
import math
import torch


def sinusoidal_positional_encoding(seq_len, d_model):
    half_dim = d_model // 2
    emb = math.log(10000) / (half_dim - 1)
    emb = torch.exp(torch.arange(half_dim, dtype=torch.float) * -emb)
    emb = torch.arange(seq_len, dtype=torch.float).unsqueeze(1) * emb.unsqueeze(0)
    emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=1).view(seq_len, -1)
    if d_model % 2 == 1:
        emb = torch.cat([emb, torch.zeros(seq_len, 1)], dim=1)
    return emb
