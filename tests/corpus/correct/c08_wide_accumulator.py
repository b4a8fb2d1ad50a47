# Correct: accumulate in at least float32 (matmul's dtype=), then round once to the input dtype.
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    acc = np.result_type(hidden.dtype, np.float32)  # float16 -> float32, float64 stays float64
    out = np.matmul(hidden, embedding_matrix.T, dtype=acc)
    return out.astype(hidden.dtype, copy=False)
