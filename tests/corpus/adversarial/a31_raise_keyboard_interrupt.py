# Attack: raises KeyboardInterrupt (a BaseException, not an Exception) from the call, to slip past
# a grader that only catches Exception.
import numpy as np  # noqa: F401  (unused; marks the file as a NumPy submission)


def tied_lm_head(hidden, embedding_matrix):
    raise KeyboardInterrupt("submission interrupted itself")
