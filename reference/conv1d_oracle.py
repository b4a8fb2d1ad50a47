"""An independent check of reference/conv1d.py for ``grader validate``: a loop over the kernel taps."""
import numpy as np


def conv1d(x, w, stride=1, padding=0):
    """``out[b, o, i] = sum_k sum_c xp[b, c, i*stride + k] w[o, c, k]``, one tap at a time (float64)."""
    x, w = np.asarray(x, dtype=np.float64), np.asarray(w, dtype=np.float64)
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding)))
    k = w.shape[-1]
    l_out = (xp.shape[-1] - k) // stride + 1
    out = np.zeros((x.shape[0], w.shape[0], l_out))
    for tap in range(k):
        cols = xp[:, :, tap:tap + stride * (l_out - 1) + 1:stride]   # (B, C_in, L_out)
        out += np.tensordot(w[:, :, tap], cols, axes=([1], [1])).transpose(1, 0, 2)
    return out
