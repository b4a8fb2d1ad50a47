"""A correct NumPy submission in two files: the projection lives in helper.py, beside this file
(issue 11, multi-file submissions: the grader takes the siblings it imports along)."""
from helper import project_onto_rows


def tied_lm_head(hidden, embedding_matrix):
    return project_onto_rows(hidden, embedding_matrix)
