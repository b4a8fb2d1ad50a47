"""Source: https://github.com/harvardnlp/annotated-transformer/blob/debc9fd747bb2123160a98046ad1c2d4da44a567/the_annotated_transformer.py
Expect: exception
Why: masked_fill(mask == 0, -1e9) cannot convert -1e9 to float16 and raises on every float16 input with a mask (output unwrapped from its (out, p_attn) tuple here).
"""
import math
import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    d_k = q.size(-1)
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    return torch.matmul(p_attn, v)
