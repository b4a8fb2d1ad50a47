"""Source: https://github.com/FortiLeiZhang/cs231n/blob/master/code/cs231n/assignment3/cs231n/optim.py (adam; the in-place ``x -=`` made a copy, and ``np.sqrt(1 - beta2 ** t)`` written ``(1 - beta2 ** t) ** 0.5``: NumPy 2 makes a float32 step float64 with an np.float64 scalar, which would fail on dtype first)
Expect: tolerance
Why: the paper's "epsilon hat" form ``alpha = lr * sqrt(1 - beta2**t) / (1 - beta1**t)``, ``x - alpha * m / (sqrt(v) + eps)`` adds eps to sqrt(v), not to sqrt(v_hat): the same only where eps is negligible (tiny gradients, a large eps).
"""
import numpy as np


def adam_step(param, grad, m, v, t, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
    if t < 1:
        raise ValueError("t must be >= 1")
    x, dx = param, grad
    m = beta1 * m + (1 - beta1) * dx
    v = beta2 * v + (1 - beta2) * (dx * dx)
    alpha = lr * (1 - beta2 ** t) ** 0.5 / (1 - beta1 ** t)
    x = x - alpha * (m / (np.sqrt(v) + eps))
    return x, m, v
