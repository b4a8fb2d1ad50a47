"""Mistake (shape): works through the vocabulary in blocks of 1024 and drops the tail.

Right for every vocab_size up to 1024 (one block); a vocabulary of 2085 loses its last 37 entries.
"""
import numpy as np

BLOCK = 1024


def tied_lm_head(hidden, embedding_matrix):
    vocab_size = embedding_matrix.shape[0]
    blocks = max(1, vocab_size // BLOCK)
    parts = [hidden @ embedding_matrix[b * BLOCK:(b + 1) * BLOCK].T for b in range(blocks)]
    return np.concatenate(parts, axis=-1)
