"""Source: https://github.com/karpathy/minGPT/blob/master/mingpt/model.py (CausalSelfAttention.forward: ``k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)``), with a ValueError for a bad head count
Expect: pass
Why: the view and transpose of minGPT; a non-contiguous view is fine as a result.
"""
import torch  # noqa: F401 - graded as PyTorch (the framework is told by the imports)


def split_heads(x, n_heads):
    B, T, C = x.size()
    if n_heads < 1 or C % n_heads:
        raise ValueError("n_heads must divide D")
    return x.view(B, T, n_heads, C // n_heads).transpose(1, 2)
