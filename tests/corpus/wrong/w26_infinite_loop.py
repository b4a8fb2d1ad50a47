# Mistake: never returns (infinite loop); the grader has to kill it.
import numpy as np  # noqa: F401  (unused; marks the file as a NumPy submission)


def tied_lm_head(hidden, embedding_matrix):
    while True:
        pass
