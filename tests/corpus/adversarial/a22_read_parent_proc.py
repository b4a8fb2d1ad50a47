# Attack: reads the parent's /proc/<ppid>/environ and a few KiB of /proc/<ppid>/mem (looking for
# secrets or answers); reports only byte counts, never the contents; returns zeros.
import os
import sys
import numpy as np


def _peek_parent():
    ppid = os.getppid()
    got = {}
    try:
        with open(f"/proc/{ppid}/environ", "rb") as f:
            got["environ"] = len(f.read(1 << 20))
    except OSError as e:
        got["environ"] = type(e).__name__
    try:
        with open(f"/proc/{ppid}/maps") as maps:
            first = next(line for line in maps if " r" in line[:30])
        start = int(first.split("-")[0], 16)
        with open(f"/proc/{ppid}/mem", "rb") as mem:
            mem.seek(start)
            got["mem"] = len(mem.read(4096))
    except (OSError, StopIteration, ValueError) as e:
        got["mem"] = type(e).__name__
    return got


def tied_lm_head(hidden, embedding_matrix):
    print("parent peek:", _peek_parent(), file=sys.stderr)
    return np.zeros(hidden.shape[:-1] + (embedding_matrix.shape[0],), dtype=hidden.dtype)
