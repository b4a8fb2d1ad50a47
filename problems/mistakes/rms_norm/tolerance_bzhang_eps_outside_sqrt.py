"""Source: https://github.com/bzhangGo/rmsnorm/blob/2e726f1a3f106bb719056422f4f9b6aca03d3ce6/rmsnorm_torch.py
Expect: tolerance
Why: the RMSNorm paper's reference code computes rms = ||x|| / sqrt(d) and divides by (rms + eps), eps outside the sqrt, which differs when mean(x**2) is comparable to eps.
"""
import torch


def rms_norm(x, weight, eps=1e-6):
    norm_x = x.norm(2, dim=-1, keepdim=True)
    d_x = x.shape[-1]
    rms_x = norm_x * d_x ** (-1. / 2)
    x_normed = x / (rms_x + eps)
    return weight * x_normed
