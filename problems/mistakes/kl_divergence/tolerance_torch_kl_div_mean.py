"""Source: https://docs.pytorch.org/docs/stable/generated/torch.nn.functional.kl_div.html (``reduction="mean"``, which the docs warn "doesn't return the true KL divergence value")
Expect: tolerance
Why: "mean" divides by N * C where the batch mean ("batchmean") divides by N: C times too small.
"""
import torch  # noqa: F401 - graded as PyTorch
import torch.nn.functional as F


def kl_divergence(p_logits, q_logits):
    return F.kl_div(F.log_softmax(q_logits, dim=-1), F.log_softmax(p_logits, dim=-1), reduction="mean",
                    log_target=True)
