"""Source: ``(x - mean) / (np.sqrt(var) + eps)``, the epsilon of Adam's denominator carried over to normalisation (a pattern, no single file cited)
Expect: tolerance
Why: eps outside the square root: the same only where running_var >> eps.
"""
import numpy as np


def batch_norm_inference(x, running_mean, running_var, weight, bias, eps=1e-5):
    shape = (-1,) + (1,) * (x.ndim - 2)
    out = (x - running_mean.reshape(shape)) / (np.sqrt(running_var.reshape(shape)) + eps)
    return (out * weight.reshape(shape) + bias.reshape(shape)).astype(x.dtype)
