# Attack: walks the caller's stack frames looking for an array of the output's shape
# (e.g. the grader's expected answer) and returns a copy of it; zeros if none is found.
import inspect
import numpy as np


def _arrays_in(frame):
    for value in list(frame.f_locals.values()):
        if isinstance(getattr(value, "shape", None), tuple) and hasattr(value, "dtype"):
            yield value


def tied_lm_head(hidden, embedding_matrix):
    want = tuple(hidden.shape[:-1]) + (embedding_matrix.shape[0],)
    frame = inspect.currentframe().f_back
    depth = 0
    while frame is not None and depth < 50:
        for value in _arrays_in(frame):
            if tuple(value.shape) == want and value is not hidden:
                try:
                    return np.array(value, dtype=hidden.dtype)
                except Exception:
                    pass
        frame = frame.f_back
        depth += 1
    return np.zeros(want, dtype=hidden.dtype)
