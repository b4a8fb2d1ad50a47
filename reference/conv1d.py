"""Reference solution of ``conv1d`` (problems/conv1d.yaml), run by the grader in JAX."""
import jax
import jax.numpy as jnp


def conv1d(x, w, stride=1, padding=0):
    """Cross-correlation of ``x`` (B, C_in, L) with ``w`` (C_out, C_in, K): (B, C_out, L_out).

    Raises:
        ValueError: ``stride < 1``, ``padding < 0`` or a kernel longer than the padded signal.
    """
    x, w = jnp.asarray(x), jnp.asarray(w)
    k = w.shape[-1]
    if stride < 1 or padding < 0 or k > x.shape[-1] + 2 * padding:
        raise ValueError(f"stride {stride}, padding {padding}, kernel {k}, length {x.shape[-1]}")
    xp = jnp.pad(x, ((0, 0), (0, 0), (padding, padding)))
    l_out = (xp.shape[-1] - k) // stride + 1
    idx = jnp.arange(l_out)[:, None] * stride + jnp.arange(k)[None, :]   # (L_out, K)
    windows = xp[:, :, idx]                                                # (B, C_in, L_out, K)
    return jnp.einsum("bcik,ock->boi", windows, w, precision=jax.lax.Precision.HIGHEST)
