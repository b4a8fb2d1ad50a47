"""Source: https://github.com/jparkerholder/ASEBO/blob/master/asebo/optimizers.py (Adam), returning the new parameters
Expect: raises
Why: right for every t >= 1, but t = 0 is not refused: 1 - beta1**0 = 0 and the step divides by zero (NaN/inf returned, no ValueError).
"""
import numpy as np


def adam_step(param, grad, m, v, t, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
    dx = grad
    m = beta1 * m + (1 - beta1) * dx
    mt = m / (1 - beta1 ** t)
    v = beta2 * v + (1 - beta2) * (dx ** 2)
    vt = v / (1 - beta2 ** t)
    return param - lr * mt / (np.sqrt(vt) + eps), m, v
