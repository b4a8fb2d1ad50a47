"""Source: https://docs.scipy.org/doc/scipy/reference/generated/scipy.special.rel_entr.html (KL as the sum of rel_entr(p, q) = p * log(p / q), 0 where p = 0), written in log space with NumPy
Expect: pass
Why: log-softmax of both, p * (log p - log q) with p = 0 giving 0, summed per row and averaged.
"""
import numpy as np


def kl_divergence(p_logits, q_logits):
    def log_softmax(x):
        s = x - np.max(x, axis=-1, keepdims=True)
        return s - np.log(np.sum(np.exp(s), axis=-1, keepdims=True))
    log_p, log_q = log_softmax(p_logits), log_softmax(q_logits)
    p = np.exp(log_p)
    terms = np.where(p > 0, p * (log_p - log_q), 0.0).astype(p.dtype)
    return np.mean(np.sum(terms, axis=-1))
