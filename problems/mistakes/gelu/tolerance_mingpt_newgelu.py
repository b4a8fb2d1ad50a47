"""Source: https://github.com/karpathy/minGPT/blob/37baab71b9abea1b76ab957409a1cc2fbfba8a26/mingpt/model.py#L21
Expect: tolerance
Why: minGPT's NewGELU (HF gelu_new) is the tanh approximation, not 0.5 x (1 + erf(x / sqrt 2)).
"""
import math
import torch


def gelu(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))
