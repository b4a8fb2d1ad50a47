"""Wrong (crash): the process aborts during the call."""
import os


def tied_lm_head(hidden, embedding_matrix):
    os.abort()
