# a newcomer's: a correct NumPy file with an unused import torch is graded as PyTorch (0/10, no hint)
import numpy as np
import torch   # only used for a quick comparison below


def masked_mean_pool(embeddings, mask):
    m = np.asarray(mask)[..., None].astype(np.float64)
    s = (np.asarray(embeddings).astype(np.float64) * m).sum(axis=-2)
    return (s / np.maximum(m.sum(axis=-2), 1)).astype(embeddings.dtype)


if __name__ == "__main__":
    print(masked_mean_pool(np.ones((3, 2), np.float32), np.array([True, True, False])))
