# JAX: checks the concrete values, looks up with jnp, returns a NumPy array of the table's dtype.
import jax.numpy as jnp
import numpy as np


def embedding_lookup(token_ids, embedding_matrix):
    ids = np.asarray(token_ids)
    if ids.dtype.kind not in "iu":
        raise TypeError("integer ids only")
    if ids.size and (ids.min() < 0 or ids.max() >= embedding_matrix.shape[0]):
        raise IndexError("token id out of range")
    return np.asarray(jnp.asarray(embedding_matrix)[jnp.asarray(ids)])
