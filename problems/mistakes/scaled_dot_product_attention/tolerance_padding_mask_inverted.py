"""Source: https://docs.pytorch.org/docs/stable/generated/torch.nn.MultiheadAttention.html
Expect: tolerance
Why: nn.MultiheadAttention / key_padding_mask use the opposite convention (True = NOT allowed to attend); code written for it passes masked_fill(mask, -inf) and so blocks exactly the allowed keys.
"""
import math
import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v
