"""Source: https://github.com/google/flax/blob/2d32f287533999a125c9c94bf84d03b9460ae8d9/flax/linen/attention.py
Expect: pass
Why: flax.linen dot_product_attention_weights + dot_product_attention (query / sqrt(depth), einsum, jnp.where(mask, w, finfo.min), softmax, einsum with value) without the heads axis; half computed in float32.
"""
import jax
import jax.numpy as jnp


def scaled_dot_product_attention(q, k, v, mask=None):
    dt = q.dtype
    cdt = jnp.promote_types(dt, jnp.float32)
    query, key, value = q.astype(cdt), k.astype(cdt), v.astype(cdt)
    depth = query.shape[-1]
    query = query / jnp.sqrt(depth).astype(cdt)
    attn_weights = jnp.einsum('...qd,...kd->...qk', query, key)
    if mask is not None:
        big_neg = jnp.finfo(cdt).min
        attn_weights = jnp.where(mask, attn_weights, big_neg)
    attn_weights = jax.nn.softmax(attn_weights).astype(cdt)
    return jnp.einsum('...qk,...kd->...qd', attn_weights, value).astype(dt)
