"""Source: https://docs.pytorch.org/docs/stable/generated/torch.optim.Adam.html (torch.optim.Adam with its state set to the given step and moments)
Expect: pass
Why: PyTorch's own optimiser: state['step'] = t - 1 (it counts the step before updating), exp_avg = m, exp_avg_sq = v, on copies.
"""
import torch


def adam_step(param, grad, m, v, t, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
    if t < 1:
        raise ValueError("t must be >= 1")
    p = torch.nn.Parameter(param.detach().clone())
    p.grad = grad.detach().clone()
    opt = torch.optim.Adam([p], lr=lr, betas=(beta1, beta2), eps=eps, foreach=False)
    opt.state[p] = {"step": torch.tensor(float(t - 1)), "exp_avg": m.detach().clone(),
                    "exp_avg_sq": v.detach().clone()}
    opt.step()
    state = opt.state[p]
    return p.detach(), state["exp_avg"], state["exp_avg_sq"]
