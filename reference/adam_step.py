"""Reference solution of ``adam_step`` (problems/adam_step.yaml), run by the grader in JAX."""
import jax.numpy as jnp


def adam_step(param, grad, m, v, t, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
    """One Adam step: ``(param, m, v)``, each shaped and typed like ``param``.

    Raises:
        ValueError: ``t < 1``.
    """
    if t < 1:
        raise ValueError(f"the step number t must be >= 1, not {t}")
    p, g = jnp.asarray(param), jnp.asarray(grad)
    m_new = beta1 * jnp.asarray(m) + (1 - beta1) * g
    v_new = beta2 * jnp.asarray(v) + (1 - beta2) * g * g
    m_hat = m_new / (1 - beta1 ** t)
    v_hat = v_new / (1 - beta2 ** t)
    return p - lr * m_hat / (jnp.sqrt(v_hat) + eps), m_new, v_new
