# Mistake: a NumPy submission (no import statement names jax) that loads jax.numpy at run time and returns
# a JAX array; NumPy submissions must return numpy.ndarray. The hint must say what came back.
import importlib

import numpy as np


def tied_lm_head(hidden, embedding_matrix):
    jnp = importlib.import_module("jax.numpy")
    return jnp.asarray(np.asarray(hidden) @ np.asarray(embedding_matrix).T)
