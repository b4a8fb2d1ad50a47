"""Source: https://github.com/huggingface/transformers/blob/v4.40.0/src/transformers/generation/flax_utils.py (FlaxGenerationMixin._greedy_search: ``next_token = jnp.argmax(logits, axis=-1)`` of ``logits[:, -1]``)
Expect: pass
Why: the Flax greedy step; cast to int64 as the statement asks (JAX's argmax gives int32 without x64).
"""
import jax.numpy as jnp


def greedy_next_token(logits):
    logits = logits[:, -1]
    return jnp.argmax(logits, axis=-1).astype(jnp.int64)
