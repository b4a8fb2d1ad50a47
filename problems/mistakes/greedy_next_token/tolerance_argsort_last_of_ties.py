"""Source: ``np.argsort(x)[..., -1]`` used as an argmax, the "sort and take the last" idiom (a pattern, no single file cited)
Expect: tolerance
Why: a stable ascending sort puts the largest index of equal maxima last: ties give the last index, not the first.
"""
import numpy as np


def greedy_next_token(logits):
    return np.argsort(logits[:, -1], axis=-1, kind="stable")[:, -1].astype(np.int64)
