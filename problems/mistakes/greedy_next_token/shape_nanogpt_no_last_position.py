"""Source: https://github.com/karpathy/nanoGPT/blob/master/model.py (GPT.generate: ``logits = logits[:, -1, :] / temperature``) with the last-position slice left out
Expect: shape
Why: the argmax of every position, shape (B, T), where only the next token (B,) is asked for.
"""
import torch


def greedy_next_token(logits):
    return torch.argmax(logits, dim=-1)
