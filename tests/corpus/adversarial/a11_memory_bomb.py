# Attack: memory bomb: grabs 256 MiB blocks and touches every page, up to 31 blocks (7.75 GiB, so
# the process stays under 8 GiB) per process, bounded so a grader without a memory limit survives;
# then returns zeros.
import numpy as np

BLOCK = 256 * 1024 * 1024
MAX_BLOCKS = 31  # 31 * 256 MiB = 7.75 GiB
_held = []


def tied_lm_head(hidden, embedding_matrix):
    while len(_held) < MAX_BLOCKS:
        block = bytearray(BLOCK)
        block[::4096] = b"\x01" * (BLOCK // 4096)  # one write per page so the memory is really used
        _held.append(block)
    return np.zeros(hidden.shape[:-1] + (embedding_matrix.shape[0],), dtype=hidden.dtype)
