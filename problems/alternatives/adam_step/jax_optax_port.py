"""Source: https://github.com/google-deepmind/optax/blob/main/optax/_src/transform.py (scale_by_adam: update_moment, bias_correction, mu_hat / (sqrt(nu_hat + eps_root) + eps)) and alias.adam's scale_by_learning_rate
Expect: pass
Why: optax's Adam, ported (optax is not installed in the sandbox): the moments as (1 - decay) * g + decay * t, the corrections as divisions, the learning rate applied last as a negative scale; returned as a dict-free tuple.
"""
import jax.numpy as jnp


def adam_step(param, grad, m, v, t, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
    if t < 1:
        raise ValueError("t must be >= 1")
    mu = (1 - beta1) * grad + beta1 * m
    nu = (1 - beta2) * (grad ** 2) + beta2 * v
    mu_hat = mu / (1 - beta1 ** t)
    nu_hat = nu / (1 - beta2 ** t)
    updates = mu_hat / (jnp.sqrt(nu_hat + 0.0) + eps)
    return param + (-lr) * updates, mu, nu
