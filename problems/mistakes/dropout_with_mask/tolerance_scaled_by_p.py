"""Source: the keep probability and the drop probability confused, ``x * mask / p`` (p read as the keep probability, the ``keep_prob`` argument of TensorFlow 1's tf.nn.dropout; a pattern, no single file cited)
Expect: tolerance
Why: scales by 1 / p instead of 1 / (1 - p): right only where p = 0.5.
"""
import numpy as np


def dropout_with_mask(x, keep, p):
    return (x * keep / p).astype(x.dtype)
