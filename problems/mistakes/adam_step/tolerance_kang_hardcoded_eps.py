"""Source: https://github.com/kang9kang/DL-learning/blob/main/cnn/my_optimizer.py (Adam: ``self.eps = 1e-8`` fixed in __init__)
Expect: tolerance
Why: eps is hard-coded to 1e-8 and the one passed is ignored: right wherever eps = 1e-8 or does not matter, off where a case passes a larger eps.
"""
import numpy as np


def adam_step(param, grad, m, v, t, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
    if t < 1:
        raise ValueError("t must be >= 1")
    eps = 1e-8
    m = m + (1 - beta1) * (grad - m)
    v = v + (1 - beta2) * (grad ** 2 - v)
    m_hat = m / (1 - beta1 ** t)
    v_hat = v / (1 - beta2 ** t)
    return param - lr * m_hat / (np.sqrt(v_hat) + eps), m, v
