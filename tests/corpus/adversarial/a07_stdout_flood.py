# Attack: floods stdout with ~200 MB (once per process, bounded), then returns zeros.
import sys
import numpy as np

_done = False


def tied_lm_head(hidden, embedding_matrix):
    global _done
    if not _done:
        _done = True
        line = ("x" * 1023 + "\n") * 1024  # 1 MiB
        try:
            for _ in range(200):
                sys.stdout.write(line)
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
    return np.zeros(hidden.shape[:-1] + (embedding_matrix.shape[0],), dtype=hidden.dtype)
