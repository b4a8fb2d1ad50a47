# Attack: escape sequences and bidi controls printed and raised, to paint a fake "PASS 10/10" on the
# instructor's terminal or reorder what a report shows (issue 9, class 11). Reports must show them
# as visible escapes.
import sys

import numpy as np

FAKE = "\x1b[2J\x1b[H\x1b[1;32mPASS tied_lm_head: score 10 / 10\x1b[0m\x1b]0;graded\x07\r\u202e\u2066\x9b2K"
print(FAKE)
sys.stderr.write(FAKE + "\n")


def tied_lm_head(hidden, embedding_matrix):
    print(FAKE)
    raise RuntimeError(FAKE)
