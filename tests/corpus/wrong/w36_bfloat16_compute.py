# Mistake (JAX): computes in bfloat16 "for speed" and casts back, losing precision for float32 and float64
# inputs (float16 inputs lose it too). The values are bfloat16 numbers, which in float16's range are also
# float16 numbers: the hint must say bfloat16.
import jax.numpy as jnp


def tied_lm_head(hidden, embedding_matrix):
    out = hidden.astype(jnp.bfloat16) @ embedding_matrix.astype(jnp.bfloat16).T
    return out.astype(hidden.dtype)
