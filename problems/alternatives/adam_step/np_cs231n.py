"""Source: https://github.com/jparkerholder/ASEBO/blob/master/asebo/optimizers.py (Adam), returning the new parameters instead of the update
Expect: pass
Why: Algorithm 1 of Kingma & Ba as written, in NumPy.
"""
import numpy as np


def adam_step(param, grad, m, v, t, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
    if t < 1:
        raise ValueError("t must be >= 1")
    m = beta1 * m + (1 - beta1) * grad
    mt = m / (1 - beta1 ** t)
    v = beta2 * v + (1 - beta2) * (grad ** 2)
    vt = v / (1 - beta2 ** t)
    return param - lr * mt / (np.sqrt(vt) + eps), m, v
