"""Source: https://github.com/karpathy/minGPT/blob/master/mingpt/model.py (CausalSelfAttention: ``assert config.n_embd % config.n_head == 0``; ``view(B, T, self.n_head, C // self.n_head).transpose(1, 2)``)
Expect: raises
Why: the split is right, but a bad head count stops on an assert (AssertionError), not the ValueError the statement asks for.
"""
import torch  # noqa: F401 - graded as PyTorch (the framework is told by the imports)


def split_heads(x, n_heads):
    B, T, C = x.size()
    assert n_heads > 0 and C % n_heads == 0
    return x.view(B, T, n_heads, C // n_heads).transpose(1, 2)
