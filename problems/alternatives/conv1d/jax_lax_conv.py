"""Source: https://jax.readthedocs.io/en/latest/_autosummary/jax.lax.conv_general_dilated.html (NCH / OIH layout, window strides, explicit padding)
Expect: pass
Why: XLA's own convolution, as flax.linen.Conv calls it.
"""
import jax


def conv1d(x, w, stride=1, padding=0):
    if stride < 1:
        raise ValueError("stride must be >= 1")
    return jax.lax.conv_general_dilated(x, w, window_strides=(stride,), padding=[(padding, padding)],
                                        dimension_numbers=("NCH", "OIH", "NCH"))
