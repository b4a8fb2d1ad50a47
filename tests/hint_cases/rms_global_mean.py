import numpy as np


def rms_norm(x, weight, eps=1e-6):
    xf = x.astype(np.float32) if x.dtype == np.float16 else x
    ms = np.mean(xf * xf)                  # over every element, not per row
    return (xf / np.sqrt(ms + eps) * weight.astype(xf.dtype)).astype(x.dtype)
