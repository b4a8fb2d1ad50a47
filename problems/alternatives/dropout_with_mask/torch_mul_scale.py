"""Source: https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/Dropout.cpp (_dropout_impl: ``input * noise`` with ``noise.bernoulli_(1 - p).div_(1 - p)``), the noise made from the given mask
Expect: pass
Why: ATen's dropout: a noise tensor of 1 / (1 - p) and 0, multiplied in.
"""
import torch


def dropout_with_mask(x, keep, p):
    noise = keep.to(x.dtype)
    if p < 1:
        noise = noise.div_(1 - p)
    return x * noise
