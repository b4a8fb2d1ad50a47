"""Wrong (memory): allocates far more than any limit allows (bounded at 64 GiB of address space)."""
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    hog = np.ones((8, 1024, 1024, 1024), dtype=np.float64)  # 64 GiB: fails under the memory limit
    return hidden @ embedding_matrix.T + hog[0, 0, 0, 0] * 0
