"""Wrong (timeout): never returns."""


def tied_lm_head(hidden, embedding_matrix):
    while True:
        pass
