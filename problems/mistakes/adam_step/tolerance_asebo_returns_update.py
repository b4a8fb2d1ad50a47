"""Source: https://github.com/jparkerholder/ASEBO/blob/master/asebo/optimizers.py (Adam)
Expect: tolerance
Why: returns ``(update, m, v)``, the step itself, where the new parameters are asked for: m and v are right, param is off.
"""
import numpy as np


def adam_step(param, grad, m, v, t, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
    if t < 1:
        raise ValueError("t must be >= 1")
    dx = grad
    m = beta1 * m + (1 - beta1) * dx
    mt = m / (1 - beta1 ** t)
    v = beta2 * v + (1 - beta2) * (dx ** 2)
    vt = v / (1 - beta2 ** t)
    update = lr * mt / (np.sqrt(vt) + eps)
    return (update, m, v)
