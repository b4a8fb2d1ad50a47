"""Source: https://github.com/DylanTombs/TradingTransformer/blob/3e5cf373cf82b45c6fae1dca61b7fcea99495392/Transformer/LayerNorm.py
Expect: tolerance
Why: `(x - mean) / (x.std(-1) + eps)` uses the biased std but adds eps after the sqrt, which is visibly off once the variance is comparable to eps (near-constant rows, or a large eps).
"""
import numpy as np


def layer_norm(x, gamma, beta, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    std = x.std(axis=-1, keepdims=True)
    return gamma * (x - mean) / (std + eps) + beta
