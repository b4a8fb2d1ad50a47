"""The kind of test file a course writes for ``tied_lm_head``: hypothesis draws shapes and values,
the submission is compared with NumPy by ``assert_allclose`` with fixed tolerances.

It is the baseline of benchmarks/bench_check.py (the same number of cases as one ``grader check``),
not a test of the grader: pytest does not collect it (tests/ is the test path). Run it as

    BENCH_SUBMISSION=path/to/solution.py BENCH_EXAMPLES=28 python -m pytest -q benchmarks/naive_pytest_hypothesis.py

``BENCH_EXAMPLES`` is the number of examples per dtype (float16, float32, float64). Unlike the
grader, it runs the submission in the test's own process, with no time or memory limit, a
tolerance that ignores the inputs' size, and one line of feedback on failure.
"""
from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

SUBMISSION = os.environ.get("BENCH_SUBMISSION", "solution.py")
EXAMPLES = int(os.environ.get("BENCH_EXAMPLES", "28"))
DTYPES = (np.float16, np.float32, np.float64)
TOLERANCE = {np.float16: 1e-2, np.float32: 1e-5, np.float64: 1e-10}  # rtol = atol, as courses often do
WIDTH = {np.float16: 16, np.float32: 32, np.float64: 64}

_spec = importlib.util.spec_from_file_location("submission", SUBMISSION)
submission = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(submission)


@st.composite
def inputs(draw, dtype):
    lead = tuple(draw(st.lists(st.integers(1, 4), max_size=3)))
    d_model, vocab = draw(st.integers(1, 24)), draw(st.integers(1, 24))
    values = st.floats(-4, 4, width=WIDTH[dtype])
    return (draw(arrays(dtype, lead + (d_model,), elements=values)),
            draw(arrays(dtype, (vocab, d_model), elements=values)))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_matches_numpy(dtype, data):
    hidden, table = data.draw(inputs(dtype))
    got = np.asarray(submission.tied_lm_head(hidden, table))
    expected = hidden.astype(np.float64) @ table.astype(np.float64).T
    assert got.shape == expected.shape and got.dtype == dtype
    np.testing.assert_allclose(got.astype(np.float64), expected, rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype])
