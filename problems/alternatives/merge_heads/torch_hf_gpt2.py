"""Source: https://github.com/huggingface/transformers/blob/v4.40.0/src/transformers/models/gpt2/modeling_gpt2.py (GPT2Attention._merge_heads)
Expect: pass
Why: permute(0, 2, 1, 3).contiguous(), then view to (..., num_heads * attn_head_size).
"""
import torch  # noqa: F401 - graded as PyTorch


def merge_heads(tensor):
    num_heads, attn_head_size = tensor.size(1), tensor.size(-1)
    tensor = tensor.permute(0, 2, 1, 3).contiguous()
    new_shape = tensor.size()[:-2] + (num_heads * attn_head_size,)
    return tensor.view(new_shape)
