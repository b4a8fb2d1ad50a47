"""Source: https://github.com/huggingface/transformers/blob/00e12e7c54598e50e7bef1540db3408f81916de1/src/transformers/activations.py#L52
Expect: pass
Why: HF's GELUActivation._gelu_python, the original BERT `input * 0.5 * (1.0 + torch.erf(input / math.sqrt(2.0)))`; half computed in float32.
"""
import math
import torch


def gelu(x):
    dt = x.dtype
    input = x.float() if dt in (torch.float16, torch.bfloat16) else x
    return (input * 0.5 * (1.0 + torch.erf(input / math.sqrt(2.0)))).to(dt)
