"""Correct: a private helper, a module constant and debug prints (prints are allowed)."""
import numpy as np

FEATURE_AXIS = -1


def _scores(vectors, table):
    # one score per table row: contract the feature axis of both
    return np.einsum("...i,ji->...j", vectors, table)


def tied_lm_head(hidden, embedding_matrix):
    print(f"[debug] hidden {hidden.shape} {hidden.dtype}, table {embedding_matrix.shape}")
    out = _scores(hidden, embedding_matrix)
    print("[debug] logits", out.shape)
    return out
