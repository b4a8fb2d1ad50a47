"""Source: https://github.com/orris27/deeplearning-simple-implementation/blob/300f299baf586ebd3c08f214a13061109320880f/utils.py
Expect: tolerance
Why: the common StackOverflow softmax normalises along axis 0 with a global max, ignoring `axis`, so 2-D and 3-D inputs get wrong values.
"""
import numpy as np


def softmax(logits, axis=-1):
    e_x = np.exp(logits - np.max(logits))  # Same result as np.exp(x) while avoiding overflow
    return e_x / e_x.sum(axis=0)
