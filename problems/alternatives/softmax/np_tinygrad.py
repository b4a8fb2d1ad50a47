"""Source: https://github.com/tinygrad/tinygrad/blob/a9069c177a9da9cca18593edf55acd2e6073cca6/tinygrad/mixin/op.py#L666
Expect: pass
Why: tinygrad's Tensor.softmax (m = x - max; e = exp(m); e * reciprocal(sum e)) ported to NumPy, half upcast to float32 and cast back.
"""
import numpy as np


def softmax(logits, axis=-1):
    x = logits.astype(np.float32) if logits.dtype == np.float16 else logits
    m = x - x.max(axis=axis, keepdims=True)
    e = np.exp(m)
    return (e * np.reciprocal(e.sum(axis=axis, keepdims=True))).astype(logits.dtype)
