"""Reference solution for problems/tied_lm_head.yaml.

The grader calls it with float64 inputs and ``jax_enable_x64`` on, on the CPU, and uses the
float64 result as the expected logits before they are compared in the submission's dtype.
``precision=HIGHEST`` keeps the matmul in full float64 (no TF32 or bfloat16 passes on
accelerators; see the JAX docs for ``jax.lax.Precision``).
"""
import jax
import jax.numpy as jnp


def tied_lm_head(hidden, embedding_matrix):
    """Logits of a tied output projection.

    Args:
        hidden: ``(..., d_model)`` float array.
        embedding_matrix: ``(vocab_size, d_model)`` float array of the same dtype.

    Returns:
        ``(..., vocab_size)`` array, ``hidden @ embedding_matrix.T``, in the inputs' dtype.
    """
    return jnp.matmul(hidden, embedding_matrix.T, precision=jax.lax.Precision.HIGHEST)
