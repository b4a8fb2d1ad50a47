"""Source: https://github.com/harvardnlp/annotated-transformer/blob/debc9fd747bb2123160a98046ad1c2d4da44a567/the_annotated_transformer.py#L315
Expect: tolerance
Why: The Annotated Transformer's LayerNorm divides by x.std(-1) (unbiased, n-1) plus eps outside the sqrt, not by sqrt(biased var + eps).
"""
import torch


def layer_norm(x, gamma, beta, eps=1e-5):
    mean = x.mean(-1, keepdim=True)
    std = x.std(-1, keepdim=True)
    return gamma * (x - mean) / (std + eps) + beta
