"""Source: https://github.com/maciejsikora2302/PINN_IGA_Masters/blob/main/adam_solution.py (AdamOptim.update)
Expect: type
Why: the moments live in the optimiser object, so ``update`` returns only ``w``: one array where the tuple (param, m, v) is due.
"""
import numpy as np


def adam_step(param, grad, m, v, t, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
    if t < 1:
        raise ValueError("t must be >= 1")
    m_dw = beta1 * m + (1 - beta1) * grad
    v_dw = beta2 * v + (1 - beta2) * (grad ** 2)
    m_dw_corr = m_dw / (1 - beta1 ** t)
    v_dw_corr = v_dw / (1 - beta2 ** t)
    w = param - lr * (m_dw_corr / (np.sqrt(v_dw_corr) + eps))
    return w
