"""Source: https://github.com/pytorch/pytorch/blob/main/torch/optim/adam.py (_single_tensor_adam: exp_avg.lerp_, exp_avg_sq.mul_().addcmul_())
Expect: mutation
Why: the optimiser's own state update, in place: the moments handed in are overwritten (right values, changed inputs).
"""
import math

import torch


def adam_step(param, grad, m, v, t, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
    if t < 1:
        raise ValueError("t must be >= 1")
    exp_avg, exp_avg_sq = m, v
    exp_avg.lerp_(grad, 1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad.conj(), value=1 - beta2)
    bias_correction1 = 1 - beta1 ** t
    bias_correction2 = 1 - beta2 ** t
    step_size = lr / bias_correction1
    denom = (exp_avg_sq.sqrt() / math.sqrt(bias_correction2)).add_(eps)
    return param.addcdiv(exp_avg, denom, value=-step_size), exp_avg, exp_avg_sq
