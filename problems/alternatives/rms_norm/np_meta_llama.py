"""Source: https://github.com/meta-llama/llama/blob/689c7f261b9c5514636ecc3c5fefefcbb3e6eed7/llama/model.py#L34
Expect: pass
Why: Meta's RMSNorm (`self._norm(x.float()).type_as(x) * self.weight`, _norm = x * rsqrt(mean(x**2) + eps)) ported to NumPy; .float() becomes float32 for float16 only.
"""
import numpy as np


def _norm(x, eps):
    return x * (1.0 / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps))


def rms_norm(x, weight, eps=1e-6):
    xf = x.astype(np.float32) if x.dtype == np.float16 else x
    output = _norm(xf, eps).astype(x.dtype)
    return output * weight
