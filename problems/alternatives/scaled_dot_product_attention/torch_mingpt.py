"""Source: https://github.com/karpathy/minGPT/blob/37baab71b9abea1b76ab957409a1cc2fbfba8a26/mingpt/model.py#L58
Expect: pass
Why: minGPT's manual attention (q @ k^T * 1/sqrt(d), masked_fill(mask == 0, -inf), softmax, @ v) with the causal buffer replaced by the given mask; half computed in float32 and cast back.
"""
import math
import torch
import torch.nn.functional as F


def scaled_dot_product_attention(q, k, v, mask=None):
    dt = q.dtype
    if dt in (torch.float16, torch.bfloat16):
        q, k, v = q.float(), k.float(), v.float()
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    if mask is not None:
        att = att.masked_fill(mask == 0, float('-inf'))
    att = F.softmax(att, dim=-1)
    y = att @ v
    return y.to(dt)
