# Correct (PyTorch): masked sum in float32 (or wider), divide by the clamped count, cast back.
import torch


def masked_mean_pool(embeddings, mask):
    acc = torch.promote_types(embeddings.dtype, torch.float32)
    weights = mask[..., None].to(acc)
    total = (embeddings.to(acc) * weights).sum(dim=-2)
    count = weights.sum(dim=-2)
    return (total / count.clamp(min=1)).to(embeddings.dtype)
