"""Source: https://docs.pytorch.org/docs/stable/generated/torch.nn.functional.kl_div.html (``F.kl_div(input=log q, target=log p, reduction="batchmean", log_target=True)``)
Expect: pass
Why: PyTorch's KL with the batch mean and log-space target: KL(p || q) per row, summed and divided by N.
"""
import torch  # noqa: F401 - graded as PyTorch
import torch.nn.functional as F


def kl_divergence(p_logits, q_logits):
    return F.kl_div(F.log_softmax(q_logits, dim=-1), F.log_softmax(p_logits, dim=-1), reduction="batchmean",
                    log_target=True)
