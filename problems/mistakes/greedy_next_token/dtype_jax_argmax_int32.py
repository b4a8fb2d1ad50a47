"""Source: https://github.com/huggingface/transformers/blob/v4.40.0/src/transformers/generation/flax_utils.py (``jnp.argmax(logits, axis=-1)``, then ``next_token.astype(jnp.int32)`` as Flax generation keeps its sequences int32)
Expect: dtype
Why: right indices in int32 where int64 is asked for.
"""
import jax.numpy as jnp


def greedy_next_token(logits):
    return jnp.argmax(logits[:, -1], axis=-1).astype(jnp.int32)
