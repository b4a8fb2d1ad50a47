# Attack: cancels any pending alarm, installs a SIGALRM handler that does nothing, and spins forever,
# defeating a grader that relies on signal.alarm for its timeout. (Unbounded on purpose.)
import signal
import numpy as np  # noqa: F401  (unused; marks the file as a NumPy submission)


def tied_lm_head(hidden, embedding_matrix):
    signal.signal(signal.SIGALRM, lambda signum, frame: None)
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.alarm(0)
    while True:
        pass
