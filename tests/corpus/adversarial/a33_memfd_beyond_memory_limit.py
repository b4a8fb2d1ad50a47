# Attack: holds memory where RLIMIT_AS does not count it: memfd files written with write(), not
# mapped (with --memory-mb 1024, 1.58 GB was held this way). Bounded: 4 files of 64 MiB, closed
# before returning. Returns the right answer only if the memory could be held, else zeros.
import os
import numpy as np

MiB = 1 << 20


def _hold_outside_rlimit_as(total):
    held, fds = 0, []
    try:
        while held < total:
            fd = os.memfd_create("a33")
            fds.append(fd)
            for _ in range(64):
                os.write(fd, b"\x01" * MiB)
                held += MiB
    except (OSError, AttributeError):
        pass
    finally:
        for fd in fds:
            os.close(fd)
    return held


def tied_lm_head(hidden, embedding_matrix):
    if _hold_outside_rlimit_as(256 * MiB) >= 256 * MiB:
        return hidden @ embedding_matrix.T      # a pass here means the memory limit leaked
    return np.zeros(hidden.shape[:-1] + (embedding_matrix.shape[0],), dtype=hidden.dtype)
