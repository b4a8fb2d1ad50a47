"""Source: https://github.com/huggingface/transformers/blob/5dd4a63548857797727ae73eeb6a6e886ea02a3e/src/transformers/models/llama/modeling_llama.py
Expect: pass
Why: LlamaRMSNorm.forward: upcast to float32, mean of squares, rsqrt(var + eps), cast back to the input dtype, times weight (float64 input is upcast to float64 here, see the mistake tolerance_t5_float32_variance_f64).
"""
import torch


def rms_norm(x, weight, eps=1e-6):
    input_dtype = x.dtype
    hidden_states = x.to(torch.promote_types(input_dtype, torch.float32))
    variance = hidden_states.pow(2).mean(-1, keepdim=True)
    hidden_states = hidden_states * torch.rsqrt(variance + eps)
    return weight * hidden_states.to(input_dtype)
