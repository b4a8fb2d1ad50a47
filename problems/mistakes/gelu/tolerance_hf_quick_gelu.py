"""Source: https://github.com/huggingface/transformers/blob/00e12e7c54598e50e7bef1540db3408f81916de1/src/transformers/activations.py#L69
Expect: tolerance
Why: QuickGELU (CLIP) is x * sigmoid(1.702 x), off by up to ~2e-2.
"""
import torch


def gelu(x):
    return x * torch.sigmoid(1.702 * x)
