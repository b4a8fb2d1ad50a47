"""Source: https://github.com/huggingface/transformers/blob/6b8b757dfcb582379a64f013cdce46c43629f2b0/src/transformers/models/t5/modeling_t5.py
Expect: tolerance
Why: T5LayerNorm is an RMS norm (no mean subtraction, no bias), so used as a layer norm it is wrong whenever rows have a non-zero mean or beta != 0.
"""
import torch


def layer_norm(x, gamma, beta, eps=1e-5):
    variance = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
    hidden_states = x * torch.rsqrt(variance + eps)
    if gamma.dtype in [torch.float16, torch.bfloat16]:
        hidden_states = hidden_states.to(gamma.dtype)
    return gamma * hidden_states
