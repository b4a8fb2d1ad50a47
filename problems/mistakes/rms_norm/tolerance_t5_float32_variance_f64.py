"""Source: https://github.com/huggingface/transformers/blob/6b8b757dfcb582379a64f013cdce46c43629f2b0/src/transformers/models/t5/modeling_t5.py
Expect: tolerance
Why: T5LayerNorm always computes the variance in float32 (`hidden_states.to(torch.float32)`), so float64 inputs get only float32 accuracy (~1e-7 relative).
"""
import torch


def rms_norm(x, weight, eps=1e-6):
    variance = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
    hidden_states = x * torch.rsqrt(variance + eps)
    if weight.dtype in [torch.float16, torch.bfloat16]:
        hidden_states = hidden_states.to(weight.dtype)
    return weight * hidden_states
