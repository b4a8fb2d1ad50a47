"""Source: https://github.com/facebookresearch/fairseq/blob/806855bf660ea748ed7ffb42fe8dcc881ca3aca0/fairseq/modules/multihead_attention.py
Expect: mutation
Why: fairseq scales the query with `q *= self.scaling`; safe there because q is a fresh projection, but applied to the caller's q it scales the input in place.
"""
import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    q *= q.shape[-1] ** -0.5
    attn_weights = q @ k.transpose(-2, -1)
    if mask is not None:
        attn_weights = attn_weights.masked_fill(~mask, float("-inf"))
    attn_weights = torch.softmax(attn_weights, dim=-1)
    return attn_weights @ v
