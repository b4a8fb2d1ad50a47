import numpy as np

def _erf(z):
    # Abramowitz & Stegun 7.1.26 (max abs error 1.5e-7): no scipy needed
    s = np.sign(z); a = np.abs(z)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * np.exp(-a * a)
    return s * y

def gelu(x):
    x64 = x.astype(np.float64)
    out = 0.5 * x64 * (1.0 + _erf(x64 / np.sqrt(2.0)))
    return out.astype(x.dtype)
