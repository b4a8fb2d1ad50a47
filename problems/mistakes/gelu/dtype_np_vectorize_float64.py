"""Source: https://github.com/huggingface/transformers/blob/00e12e7c54598e50e7bef1540db3408f81916de1/src/transformers/activations.py#L52
Expect: dtype
Why: the BERT erf formula with np.vectorize(math.erf), which returns float64 whatever the input dtype, and no cast back.
"""
import math
import numpy as np

_erf = np.vectorize(math.erf)


def gelu(x):
    return x * 0.5 * (1.0 + _erf(x / math.sqrt(2.0)))
