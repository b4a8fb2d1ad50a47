"""Source: https://github.com/ruziniuuuuu/niukb/blob/main/AI/Others/code/adam.py (Adam.update)
Expect: mutation
Why: ``params -= self.lr * m_hat / (np.sqrt(v_hat) + self.eps)`` writes the step into the caller's array; the values are right.
"""
import numpy as np


def adam_step(param, grad, m, v, t, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
    if t < 1:
        raise ValueError("t must be >= 1")
    m = beta1 * m + (1 - beta1) * grad
    v = beta2 * v + (1 - beta2) * (grad ** 2)
    m_hat = m / (1 - beta1 ** t)
    v_hat = v / (1 - beta2 ** t)
    param -= lr * m_hat / (np.sqrt(v_hat) + eps)
    return param, m, v
