# Correct: the work is done by a small class; the required function wraps it.
import numpy as np


class TiedHead:
    def __init__(self, table):
        self.table = table

    @property
    def vocab_size(self):
        return self.table.shape[0]

    def __call__(self, hidden):
        return np.matmul(hidden, self.table.transpose())


def tied_lm_head(hidden, embedding_matrix):
    head = TiedHead(embedding_matrix)
    return head(hidden)
