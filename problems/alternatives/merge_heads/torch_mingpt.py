"""Source: https://github.com/karpathy/minGPT/blob/master/mingpt/model.py (CausalSelfAttention.forward: ``y = y.transpose(1, 2).contiguous().view(B, T, C)``)
Expect: pass
Why: minGPT's re-assembly of the heads side by side.
"""
import torch  # noqa: F401 - graded as PyTorch


def merge_heads(x):
    B, nh, T, hs = x.size()
    return x.transpose(1, 2).contiguous().view(B, T, nh * hs)
