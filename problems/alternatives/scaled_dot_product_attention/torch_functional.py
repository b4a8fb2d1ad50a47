"""Source: https://docs.pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html
Expect: pass
Why: the built-in nanoGPT uses; a bool attn_mask means True = take part in attention, the default scale is 1/sqrt(d).
"""
import torch.nn.functional as F


def scaled_dot_product_attention(q, k, v, mask=None):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
