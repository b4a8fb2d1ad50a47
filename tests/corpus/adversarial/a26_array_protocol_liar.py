# Attack: returns a non-array object: __array__ gives zeros of the right shape and dtype, while
# shape/dtype attributes look right and __len__/__getitem__ lie (huge length, every item is itself).
import numpy as np


class FakeLogits:
    def __init__(self, shape, dtype):
        self.shape = shape
        self.dtype = np.dtype(dtype)
        self.ndim = len(shape)

    def __array__(self, dtype=None, copy=None):
        return np.zeros(self.shape, dtype=dtype or self.dtype)

    def __len__(self):
        return 10**6

    def __getitem__(self, index):
        if isinstance(index, int) and index >= 10**6:
            raise IndexError(index)
        return self

    def __eq__(self, other):
        return True

    def __repr__(self):
        return f"array(<{self.shape} {self.dtype}>)"


def tied_lm_head(hidden, embedding_matrix):
    return FakeLogits(hidden.shape[:-1] + (embedding_matrix.shape[0],), hidden.dtype)
