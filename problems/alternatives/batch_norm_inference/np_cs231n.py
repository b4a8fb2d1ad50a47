"""Source: CS231n assignment 2's batchnorm_forward, test-time branch (``x_hat = (x - running_mean) / np.sqrt(running_var + eps)``, ``out = gamma * x_hat + beta``), with the vectors reshaped to broadcast along axis 1
Expect: pass
Why: the assignment's test-time normalisation, written for (N, C, ...) inputs.
"""
import numpy as np


def batch_norm_inference(x, running_mean, running_var, weight, bias, eps=1e-5):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    x_hat = (x - running_mean.reshape(shape)) / np.sqrt(running_var.reshape(shape) + eps)
    return weight.reshape(shape) * x_hat + bias.reshape(shape)
