"""Source: the LabelSmoothingLoss widely copied from PyTorch forum answers and repositories (``true_dist.fill_(self.smoothing / (self.cls - 1))``, ``true_dist.scatter_(1, target, self.confidence)``; a pattern, no single file cited)
Expect: tolerance
Why: puts smoothing / (C - 1) on the other classes and 1 - smoothing on the target: another distribution than torch's smoothing / C everywhere.
"""
import torch
import torch.nn.functional as F


def label_smoothing_cross_entropy(logits, targets, smoothing=0.1):
    pred = F.log_softmax(logits, dim=-1)
    cls = logits.shape[-1]
    true_dist = torch.zeros_like(pred)
    true_dist.fill_(smoothing / (cls - 1) if cls > 1 else 0.0)
    true_dist.scatter_(1, targets.long().unsqueeze(1), 1.0 - smoothing)
    return torch.mean(torch.sum(-true_dist * pred, dim=-1))
