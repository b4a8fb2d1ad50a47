"""NumPy submissions: inputs are ``numpy.ndarray``; graded in float16, float32, float64 (bfloat16
is not a NumPy dtype). The default framework: a submission that imports no other one is NumPy.

Loaded by path in the submission's process too (see ``grader.frameworks``): standard library
and NumPy only.
"""
NAME = "numpy"
LABEL = "NumPy"
#: top-level import names that make a submission this framework's (NumPy is the default)
MODULES = ("numpy",)
#: what to install when it is missing (NumPy is a dependency of the grader itself)
REQUIREMENT = "pip install numpy"
#: what a result may be
RESULT = "a numpy.ndarray"
#: address space (MiB) the submission's process needs to import it (below 256, `import numpy` breaks)
ADDRESS_SPACE_MIB = 256
#: how code is written in NumPy, for the wording of hints (``grader.words``): ``str.format``
#: templates filled with the hint's facts (``x``: a parameter's name, ``dtype``: a dtype's name)
CODE = {
    "array": "a numpy.ndarray",
    "noun": "an array",
    "as_array": "np.asarray",
    "cast": "{x}.astype(np.{dtype})",
    "cast_like": ".astype({x}.dtype)",
    "to_int": ".astype(int)",
    "transpose": "{x}.T",
    "swap_last": "{x}.T",
    "atleast_2d": "np.atleast_2d",
    "from_list": "np.array",
    "new_values": "operations that return new arrays",
    "ddof1": "ddof=1",
    "int_check": "np.issubdtype({x}.dtype, np.integer)",
    "x64_off": "",
    "reduce_axis": "axis={axis}, keepdims=True",
    "axis_kw": "axis={axis}",
    "minus_max": "{x} - {x}.max(axis={axis}, keepdims=True)",
    "other_framework": "or import jax.numpy at the top to be graded as JAX",
}


def setup(config: dict) -> dict:
    """Set the submission's process up for NumPy (nothing to do); the versions to report."""
    return {}


def to_framework(array):
    """The argument the submission receives for the NumPy input ``array``: the array itself."""
    return array


def sync(result) -> None:
    """Wait until ``result`` is computed (NumPy computes eagerly)."""


def to_numpy(result):
    """``(array, type name)`` for a result of this framework that is not a NumPy array, else None
    (NumPy arrays and scalars are handled by the caller)."""
    return None


def bind() -> None:
    """Nothing to import for conversions in this process (``grader.run.inprocess``)."""
