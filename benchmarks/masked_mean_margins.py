"""Measured margins of the masked_mean tolerance model (docs/tolerance.md, "The masked mean").

Correct and wrong masked means over 12 arrays per dtype (4 rows, seq_len 7 to 4096, masks of
every structure); prints worst error / allowance per implementation, and at seq_len 4096 the
float32 summation error in units of u_acc * S. Run: python benchmarks/masked_mean_margins.py
"""
import numpy as np, ml_dtypes, os
os.environ["JAX_PLATFORMS"]="cpu"
import jax; jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
from grader.cases import Stream, mask_array
from grader.tolerance import masked_mean_allowed
from grader.dtypes import unit_roundoff

def ref_of(x, m):
    x = x.astype(np.float64); w = m[..., None].astype(np.float64)
    c = w.sum(-2)
    t = (x*w).sum(-2)  # pairwise float64: fine as reference here
    return np.where(c > 0, t/np.maximum(c,1), 0), np.where(c>0,(np.abs(x)*w).sum(-2)/np.maximum(c,1),0), c

def impls(dt):
    acc = np.promote_types(dt, np.float32) if dt != ml_dtypes.bfloat16 else np.float32
    def np_pairwise(x, m):
        w = m[..., None].astype(acc); return ((x.astype(acc)*w).sum(-2)/np.maximum(w.sum(-2),1)).astype(dt)
    def np_sequential(x, m):
        w = m[..., None].astype(acc); s = np.cumsum(x.astype(acc)*w, axis=-2)[..., -1, :]
        return (s/np.maximum(w.sum(-2),1)).astype(dt)
    def jax_sum(x, m):
        xx = jnp.asarray(x); a = jnp.promote_types(xx.dtype, jnp.float32)
        w = jnp.asarray(m)[..., None].astype(a)
        return np.asarray(((xx.astype(a)*w).sum(-2)/jnp.maximum(w.sum(-2),1)).astype(xx.dtype))
    def f64(x, m):
        w = m[..., None].astype(np.float64); return ((x.astype(np.float64)*w).sum(-2)/np.maximum(w.sum(-2),1)).astype(dt)
    def divide_first(x, m):
        w = m[..., None].astype(acc); c = np.maximum(w.sum(-2, keepdims=True),1)
        return ((x.astype(acc)*w/c).sum(-2)).astype(dt)
    return dict(np_pairwise=np_pairwise, np_sequential=np_sequential, jax_sum=jax_sum, f64=f64, divide_first=divide_first)

def wrongs(dt):
    def half_running(x, m):
        t = np.zeros(x.shape[:-2]+x.shape[-1:], dt)
        xs = np.where(m[...,None], x, 0).astype(dt)
        for i in range(x.shape[-2]): t = (t + xs[..., i, :]).astype(dt)
        with np.errstate(all="ignore"): return (t/np.maximum(m.sum(-1)[...,None],1)).astype(dt)
    def seq_len_div(x, m):
        return ((x.astype(np.float64)*m[...,None]).sum(-2)/x.shape[-2]).astype(dt)
    return dict(half_running_sum=half_running, divide_by_seq_len=seq_len_div)

rows = []
for name, dt in [("float16", np.float16), ("bfloat16", ml_dtypes.bfloat16), ("float32", np.float32), ("float64", np.float64)]:
    worst = {}; worst_u = {}; wr = {}
    for trial in range(12):
        st = Stream(7, name, trial)
        L = [4096, 1000, 64, 7][trial % 4]
        shape = (4, L, 16)
        lo, hi = [(16, 32), (-1, 1), (-3, 5)][trial % 3]
        x = st.uniform(lo, hi, shape).astype(np.float32).astype(dt)
        m = mask_array(st, shape[:-1], {"rows": "mixed"})
        r, s, c = ref_of(x, m)
        allowed = masked_mean_allowed(name, r, s, c)
        u = unit_roundoff(name) if name != "float64" else 2**-53
        for k, f in impls(dt).items():
            g = np.asarray(f(x, m)).astype(np.float64)
            err = np.abs(g - r)
            with np.errstate(all="ignore"):
                ratio = np.where(allowed > 0, err/np.where(allowed>0, allowed, 1), np.where(err>0, np.inf, 0))
            worst[k] = max(worst.get(k, 0), float(ratio.max()))
            if L == 4096:
                uacc = 2**-24 if name != "float64" else 2**-53
                sub = np.where(c > 0, err - unit_roundoff(name)*np.abs(r), 0)
                worst_u[k] = max(worst_u.get(k, 0), float(np.max(np.where(s>0, np.maximum(sub,0)/(uacc*np.where(s>0,s,1)), 0))))
        for k, f in wrongs(dt).items():
            g = np.asarray(f(x, m)).astype(np.float64)
            err = np.abs(g - r)
            with np.errstate(all="ignore"):
                ratio = np.where(allowed > 0, err/np.where(allowed>0, allowed, 1), np.where(err>0, np.inf, 0))
            ratio = np.where(np.isfinite(g), ratio, np.inf)
            wr[k] = min(wr.get(k, np.inf), float(ratio.max()))
    print(name, "correct worst/allowed:", {k: round(v, 4) for k, v in worst.items()})
    print(name, "  at L=4096, (err - u_out|ref|)/(u_acc*S):", {k: round(v, 2) for k, v in worst_u.items()})
    print(name, "  wrong, smallest worst ratio over trials:", {k: (round(v, 1) if np.isfinite(v) else "inf") for k, v in wr.items()})
