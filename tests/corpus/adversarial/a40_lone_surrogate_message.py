# Attack: an exception message holding a lone surrogate (valid in JSON, impossible in UTF-8), which
# made the grader exit 2 "internal error" while writing a text report (issue 9, class 10).
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    raise ValueError("lone surrogate \ud800 and a low one \udcff")
