"""Source: Kingma & Ba (2015), section 3: the update without the bias-correction step (m and v used as they are), as in RMSProp with momentum.
Expect: tolerance
Why: without dividing by 1 - beta**t the first steps are far too small (at t = 1 the step is lr * (1 - beta1) / sqrt(1 - beta2) of the right one); late steps are nearly right.
"""
import numpy as np


def adam_step(param, grad, m, v, t, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
    if t < 1:
        raise ValueError("t must be >= 1")
    m = beta1 * m + (1 - beta1) * grad
    v = beta2 * v + (1 - beta2) * grad ** 2
    return param - lr * m / (np.sqrt(v) + eps), m, v
