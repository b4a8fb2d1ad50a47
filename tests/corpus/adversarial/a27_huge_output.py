# Attack: returns an array of 10**9 float64 elements (~8 GB if the grader copies or touches it);
# np.zeros is lazily backed, so the submission itself barely touches the memory.
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    return np.zeros(10**9, dtype=np.float64)
