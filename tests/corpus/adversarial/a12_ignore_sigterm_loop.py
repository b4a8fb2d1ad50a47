# Attack: ignores SIGTERM, SIGINT, SIGHUP and SIGQUIT, then spins forever; only SIGKILL stops it.
# (Unbounded on purpose: the grader's timeout must end it.)
import signal
import numpy as np  # noqa: F401  (unused; marks the file as a NumPy submission)


def tied_lm_head(hidden, embedding_matrix):
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_IGN)
    while True:
        pass
