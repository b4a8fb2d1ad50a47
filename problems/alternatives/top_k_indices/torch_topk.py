"""Source: https://docs.pytorch.org/docs/stable/generated/torch.topk.html
Expect: pass
Why: torch.topk(scores, k, dim=-1) returns (values, indices) sorted descending; the int64 indices are kept and k is range-checked first (topk accepts k=0).
"""
import torch


def top_k_indices(scores, k):
    n = scores.shape[-1]
    if not 1 <= k <= n:
        raise ValueError(f"k must be in [1, {n}]")
    return torch.topk(scores, k, dim=-1, largest=True, sorted=True).indices
