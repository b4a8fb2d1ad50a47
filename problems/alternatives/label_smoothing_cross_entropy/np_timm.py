"""Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/loss/cross_entropy.py (LabelSmoothingCrossEntropy: ``confidence * nll_loss + smoothing * smooth_loss`` with ``smooth_loss = -logprobs.mean(dim=-1)``), in NumPy
Expect: pass
Why: timm's decomposition: (1 - smoothing) times the NLL of the target plus smoothing times the mean -log p over classes.
"""
import numpy as np


def label_smoothing_cross_entropy(logits, targets, smoothing=0.1):
    confidence = 1.0 - smoothing
    s = logits - np.max(logits, axis=-1, keepdims=True)
    logprobs = s - np.log(np.sum(np.exp(s), axis=-1, keepdims=True))
    nll_loss = -np.take_along_axis(logprobs, targets[:, None].astype(np.int64), axis=-1)[:, 0]
    smooth_loss = -logprobs.mean(axis=-1)
    loss = confidence * nll_loss + smoothing * smooth_loss
    return loss.mean().astype(logits.dtype)
