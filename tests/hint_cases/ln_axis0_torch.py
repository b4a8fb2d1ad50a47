# a newcomer's: the mean and variance along dim=0; its only feedback was "only from rank 2 on"
import torch

def layer_norm(x, gamma, beta, eps=1e-5):
    xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    mean = xf.mean(dim=0, keepdim=True)          # wrong axis
    var = xf.var(dim=0, keepdim=True, unbiased=False)
    y = (xf - mean) / torch.sqrt(var + eps) * gamma.to(xf.dtype) + beta.to(xf.dtype)
    return y.to(x.dtype)
