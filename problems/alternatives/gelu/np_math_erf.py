"""Source: https://github.com/huggingface/transformers/blob/00e12e7c54598e50e7bef1540db3408f81916de1/src/transformers/activations.py#L52
Expect: pass
Why: the BERT erf formula in NumPy, which has no erf: math.erf vectorised (float64), then cast back to the input dtype.
"""
import math
import numpy as np

_erf = np.vectorize(math.erf, otypes=[np.float64])


def gelu(x):
    xf = x.astype(np.float64)
    return (xf * 0.5 * (1.0 + _erf(xf / math.sqrt(2.0)))).astype(x.dtype)
