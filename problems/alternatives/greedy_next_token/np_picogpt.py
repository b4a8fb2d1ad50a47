"""Source: https://github.com/jaymody/picoGPT/blob/main/gpt2.py (generate: ``next_id = np.argmax(logits[-1])``), batched
Expect: pass
Why: picoGPT's greedy step over a batch: np.argmax of the last row, int64 on 64-bit platforms.
"""
import numpy as np


def greedy_next_token(logits):
    return np.argmax(logits[:, -1], axis=-1).astype(np.int64)
