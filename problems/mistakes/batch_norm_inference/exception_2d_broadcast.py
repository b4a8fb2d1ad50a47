"""Source: the (N, D) test-time branch of CS231n assignment 2's batchnorm_forward (``x_hat = (x - running_mean) / np.sqrt(running_var + eps)``; ``out = gamma * x_hat + beta``), applied unchanged to (N, C, ...) inputs
Expect: exception
Why: right for 2-d x; with trailing axes the (C,) vectors broadcast against the last axis: a broadcast error, or wrong values where the last size happens to equal C.
"""
import numpy as np


def batch_norm_inference(x, running_mean, running_var, weight, bias, eps=1e-5):
    x_hat = (x - running_mean) / np.sqrt(running_var + eps)
    return weight * x_hat + bias
