"""PyTorch submissions: inputs are CPU tensors (``torch.Tensor``: float16, bfloat16, float32,
float64; int32/int64 and bool for parameters of those kinds), graded in all four float dtypes;
a returned tensor is accepted (``requires_grad`` too: it is detached) and compared like any
other result. One thread, deterministic algorithms, a fixed seed.

torch is an optional extra (``pip install 'grader[torch]'``). Loaded by path in the submission's
process too (see ``grader.frameworks``): standard library, NumPy, ml_dtypes and torch only, torch
imported inside the functions (importing this module never imports torch).
"""
NAME = "torch"
LABEL = "PyTorch"
MODULES = ("torch",)
# the CPU build first: a plain install may pull a CUDA build of several GB (README, "Frameworks")
REQUIREMENT = ("pip install torch --index-url https://download.pytorch.org/whl/cpu (the CPU build; a plain "
               "install may pull a CUDA build of several GB), then pip install 'grader[torch]'")
#: the oldest release graded, and why: torch 2.1 has no float16 matmul on the CPU ("addmm_impl_cpu_"
#: not implemented for 'Half'), so every correct submission failed its float16 cases there
MIN_VERSION = ((2, 2), "float16 matmul on the CPU")
RESULT = "a torch.Tensor or a numpy.ndarray"
#: address space (MiB) the submission's process needs to import it. Measured with torch 2.13.0:
#: the real-size cases of all four dtypes pass at 736 MiB and fail at 704 (docs/security.md)
ADDRESS_SPACE_MIB = 736
#: how code is written in PyTorch, for the wording of hints (``grader.words``; keys as in
#: ``grader/frameworks/numpy.py``)
CODE = {
    "array": "a torch.Tensor",
    "noun": "a tensor",
    "as_array": "torch.as_tensor",
    "cast": "{x}.to(torch.{dtype})",
    "cast_like": ".to({x}.dtype)",
    "to_int": ".long()",
    "transpose": "{x}.T",
    "swap_last": "{x}.mT",
    "atleast_2d": "torch.atleast_2d",
    "from_list": "torch.tensor",
    "new_values": "operations that return new tensors, not in-place ones such as mul_ or +=",
    "ddof1": "correction=1 (unbiased=True), torch.std's and torch.var's default",
    "int_check": "{x}.dtype in (torch.int32, torch.int64)",
    "x64_off": "",
    "reduce_axis": "dim={axis}, keepdim=True",
    "axis_kw": "dim={axis}",
    "minus_max": "{x} - {x}.amax(dim={axis}, keepdim=True)",
    "other_framework": "or pass --framework jax to be graded as JAX",
}

_torch = None


def setup(config: dict) -> dict:
    """Import torch in the submission's process: one intra-op and one inter-op thread,
    deterministic algorithms, seed 0, gradients on as by default. The versions to report."""
    global _torch
    import torch
    _torch = torch
    torch.set_num_threads(1)
    if torch.get_num_interop_threads() != 1:
        # only once, before any inter-op work (nothing has run yet): a second call raises
        # RuntimeError in torch 2.13 but aborts the whole process in torch 2.1
        try:
            torch.set_num_interop_threads(1)
        except RuntimeError:
            pass
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(0)
    return {"torch": torch.__version__.split("+")[0]}


def to_framework(array):
    """The CPU tensor the submission receives for the NumPy input ``array``.

    It shares memory with ``array``, so the grader sees an input changed in place (kind
    ``mutation``). bfloat16 (ml_dtypes) goes through its 16-bit pattern.
    """
    if array.dtype.name == "bfloat16":
        import numpy as np
        return _torch.from_numpy(array.view(np.int16)).view(_torch.bfloat16)
    return _torch.from_numpy(array)


def sync(result) -> None:
    """Wait until ``result`` is computed (CPU tensors are computed eagerly)."""


def to_numpy(result):
    """``(numpy array, "torch.Tensor")`` for a tensor result, else None.

    The tensor is detached (``requires_grad`` is fine), made dense, contiguous and CPU, its
    conjugate and negative bits resolved; bfloat16 becomes ml_dtypes.bfloat16 through its
    16-bit pattern.

    Raises:
        TypeError: a tensor of a dtype NumPy has no equivalent for (``"array of dtype ..."``).
    """
    if not isinstance(result, _torch.Tensor):
        return None
    t = result.detach()
    if t.layout != _torch.strided:
        t = t.to_dense()
    t = t.cpu().resolve_conj().resolve_neg().contiguous()
    if t.dtype == _torch.bfloat16:
        import ml_dtypes
        return t.view(_torch.int16).numpy().view(ml_dtypes.bfloat16), "torch.Tensor"
    try:
        return t.numpy(), "torch.Tensor"
    except (TypeError, RuntimeError):
        raise TypeError(f"array of dtype {str(t.dtype)}") from None


def bind() -> None:
    """Import torch for :func:`to_framework` / :func:`to_numpy` in this process, changing none
    of its settings (``grader.run.inprocess``; :func:`setup` is the child's)."""
    global _torch
    import torch
    _torch = torch
