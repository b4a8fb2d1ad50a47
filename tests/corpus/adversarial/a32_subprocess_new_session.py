# Attack: spawns `sleep 120` in a new session (escapes process-group kills, keeps stdout/stderr
# open); at most one alive at a time (pid file in /tmp); returns zeros.
import os
import subprocess
import numpy as np

PIDFILE = "/tmp/tied_lm_head_a32_sleep.pid"
_spawned = False


def _still_sleeping():
    try:
        with open(PIDFILE) as f:
            os.kill(int(f.read().strip()), 0)
        return True
    except (OSError, ValueError):
        return False


def tied_lm_head(hidden, embedding_matrix):
    global _spawned
    if not _spawned and not _still_sleeping():
        _spawned = True
        proc = subprocess.Popen(["sleep", "120"], start_new_session=True)
        with open(PIDFILE, "w") as f:
            f.write(str(proc.pid))
    return np.zeros(hidden.shape[:-1] + (embedding_matrix.shape[0],), dtype=hidden.dtype)
