# Attack: floods stderr with ~200 MB (once per process, bounded), then returns zeros.
import os
import numpy as np

_done = False


def tied_lm_head(hidden, embedding_matrix):
    global _done
    if not _done:
        _done = True
        block = b"E" * (1 << 20)  # 1 MiB, written straight to fd 2
        try:
            for _ in range(200):
                view = memoryview(block)
                while view:
                    view = view[os.write(2, view):]
        except OSError:
            pass
    return np.zeros(hidden.shape[:-1] + (embedding_matrix.shape[0],), dtype=hidden.dtype)
