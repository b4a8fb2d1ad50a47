"""Source: https://docs.pytorch.org/docs/stable/generated/torch.nn.functional.gelu.html
Expect: pass
Why: F.gelu with the default approximate='none' is the exact erf form (HF's GELUActivation delegates to it).
"""
import torch.nn.functional as F


def gelu(x):
    return F.gelu(x)
