# Attack: opens a TCP connection to 127.0.0.1:47913 (network use from a submission) and sends a
# line; returns zeros whether or not anything listens.
import socket
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    try:
        with socket.create_connection(("127.0.0.1", 47913), timeout=1.0) as conn:
            conn.sendall(b"hello from tied_lm_head\n")
    except OSError:
        pass
    return np.zeros(hidden.shape[:-1] + (embedding_matrix.shape[0],), dtype=hidden.dtype)
