# Mistake: written for (batch, seq, d_model) input only; it flattens the two leading axes with a reshape
# that is wrong for any other rank ("cannot reshape array of size 8 into shape (8,8)" for one vector).
# Nothing about the table is wrong: the hint must not say "the table needs a transpose".
import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    batch = hidden.shape[0]
    seq = hidden.shape[-2] if hidden.ndim >= 2 else 1
    d_model = embedding_matrix.shape[1]
    flat = hidden.reshape(batch * seq, d_model)
    logits = flat @ embedding_matrix.T
    return logits.reshape(batch, seq, embedding_matrix.shape[0])
