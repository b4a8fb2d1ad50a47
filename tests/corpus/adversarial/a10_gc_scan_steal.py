# Attack: scans every object the garbage collector knows (and what they refer to, two levels deep)
# for an array of the output's shape, e.g. an expected answer kept in a case list, and returns a
# copy of it; zeros if none is found. Bounded to 5 s.
import gc
import time
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    want = tuple(hidden.shape[:-1]) + (embedding_matrix.shape[0],)
    deadline = time.monotonic() + 5.0
    for holder in gc.get_objects():
        if time.monotonic() > deadline:
            break
        inner = gc.get_referents(holder)
        for ref in list(inner):
            if isinstance(ref, (dict, list, tuple)) and not gc.is_tracked(ref):
                inner.extend(gc.get_referents(ref))
        for value in inner:
            if isinstance(value, np.ndarray) and value.shape == want and value is not hidden \
                    and value.dtype.kind == "f":
                return value.astype(hidden.dtype, copy=True)
    return np.zeros(want, dtype=hidden.dtype)
