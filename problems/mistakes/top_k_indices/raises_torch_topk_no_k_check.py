"""Source: https://docs.pytorch.org/docs/stable/generated/torch.topk.html
Expect: raises
Why: bare torch.topk accepts k=0 (an empty result) and raises RuntimeError, not ValueError, for k > n.
"""
import torch


def top_k_indices(scores, k):
    return torch.topk(scores, k, dim=-1).indices
