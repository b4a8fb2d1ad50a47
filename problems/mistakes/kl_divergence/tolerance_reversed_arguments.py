"""Source: ``F.kl_div(log_p, q)`` with the arguments in the order of the math, KL(p || q) -> kl_div(p, q); F.kl_div(input, target) computes KL(target || input) (https://docs.pytorch.org/docs/stable/generated/torch.nn.functional.kl_div.html)
Expect: tolerance
Why: computes KL(q || p): KL is not symmetric, so right only where p = q.
"""
import torch  # noqa: F401 - graded as PyTorch
import torch.nn.functional as F


def kl_divergence(p_logits, q_logits):
    return F.kl_div(F.log_softmax(p_logits, dim=-1), F.log_softmax(q_logits, dim=-1), reduction="batchmean",
                    log_target=True)
