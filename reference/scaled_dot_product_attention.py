"""Reference solution of ``scaled_dot_product_attention`` (problems/scaled_dot_product_attention.yaml)."""
import jax
import jax.numpy as jnp


def scaled_dot_product_attention(q, k, v, mask=None):
    """``softmax(q k^T / sqrt d) v`` with masked-out scores left out: (..., Tq, dv)."""
    q, k, v = jnp.asarray(q), jnp.asarray(k), jnp.asarray(v)
    scores = jnp.einsum("...qd,...kd->...qk", q, k) / jnp.sqrt(jnp.asarray(q.shape[-1], q.dtype))
    if mask is not None:
        scores = jnp.where(jnp.asarray(mask, dtype=bool), scores, -jnp.inf)
    return jnp.einsum("...qk,...kv->...qv", jax.nn.softmax(scores, axis=-1), v)
