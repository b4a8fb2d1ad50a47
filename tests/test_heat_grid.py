"""The coarse error grid of a large tolerance failure (``failure.data.grid``,
grader.compare.error_grid) and its heat map in check(fn)'s HTML (grader.notebook_check): where a
large output is off, without its values in the report."""
from __future__ import annotations

import base64
import io
import json
import re

import numpy as np
import pytest

from grader import compare
from grader.cases import Case
from grader.compare import GRID_BLOCKS, Expected, error_grid
from grader.reports.notebook_html import heat_map_png, render_html
from grader.results import CallOutcome

RNG = np.random.default_rng(3)
H = RNG.standard_normal((3, 40, 8))
E = RNG.standard_normal((50, 8))


def failing(worst=(2, 17, 33)):
    """A float32 case of output (3, 40, 50) whose element ``worst`` is off by far."""
    c = Case(name="big[float32]", group="g", dtype="float32",
             inputs={"hidden": H.astype(np.float32), "embedding_matrix": E.astype(np.float32)},
             sizes={}, compare="tolerance")
    ref = H @ E.T
    got = ref.astype(np.float32)
    got[worst] += 1.0
    f = compare.compare(c, CallOutcome(status="ok", result=got), Expected(ref=ref, scale=np.abs(H) @ np.abs(E).T, n=8))
    return f


def ratios(grid):
    return np.array([[float(v) for v in row.split()] for row in grid["max_ratio"]])


def test_error_grid_is_the_blockwise_maximum():
    r = RNG.random((3, 50, 70))
    g = error_grid(r, (1, 10, 65))
    assert g["shape"] == [150, 70] and g["blocks"] == [GRID_BLOCKS, GRID_BLOCKS] and g["worst"] == [60, 65]
    flat = r.reshape(150, 70)
    want = np.array([[flat[i * 150 // 16:(i + 1) * 150 // 16, j * 70 // 16:(j + 1) * 70 // 16].max()
                      for j in range(16)] for i in range(16)])
    np.testing.assert_allclose(ratios(g), want, rtol=0.06)  # 2 significant digits
    # fewer rows or columns than blocks: one block each; a 1-D output is one row
    assert error_grid(RNG.random((5, 30)))["blocks"] == [5, 16]
    assert error_grid(RNG.random(100), (7,))["worst"] == [0, 7] and error_grid(RNG.random(100))["shape"] == [1, 100]
    # no allowance (inf) and NaN become inf, which float() reads back
    assert set(error_grid(np.full((9, 9), np.nan))["max_ratio"][0].split()) == {"inf"}
    # small outputs (their values are in the report) and scalars get none
    assert error_grid(RNG.random((8, 8))) is None and error_grid(np.float64(3.0)) is None


def test_grid_stays_small_in_indented_json():
    g = error_grid(RNG.random((64, 2085)) * 1e5, (1, 2))
    assert len(json.dumps(g, indent=2)) < 2500 and len(json.dumps(g, indent=2).splitlines()) <= 40


def test_tolerance_failure_carries_the_grid_and_it_shows_the_bad_block():
    f = failing()
    grid = f.data["grid"]
    assert grid["shape"] == [120, 50] and grid["worst"] == [2 * 40 + 17, 33]
    r = ratios(grid)
    i = next(k for k in range(16) if k * 120 // 16 <= 97 < (k + 1) * 120 // 16)
    j = next(k for k in range(16) if k * 50 // 16 <= 33 < (k + 1) * 50 // 16)
    assert r[i, j] > 1 and (np.delete(r.ravel(), i * 16 + j) <= 1).all()
    assert r[i, j] == pytest.approx(f.data["ratio"], rel=0.06)
    json.dumps(f.data, allow_nan=False)  # a report can carry it


def decode(png_b64: str):
    from PIL import Image
    return Image.open(io.BytesIO(base64.b64decode(png_b64)))


def test_heat_map_of_a_large_case_draws_the_grid():
    f = failing()
    case = {"name": "big[float32]", "status": "failed", "group": "g", "visibility": "visible",
            "inputs": {"hidden": {"shape": [3, 40, 8], "dtype": "float32"}},
            "failure": {"kind": "tolerance", "message": f.message, "details": f.details, "data": f.data}}
    png = heat_map_png(case)
    assert png and decode(png).size[0] > 300
    page = render_html({"passed": False, "problem": "tied_lm_head", "score": 0, "max_score": 1, "cases": [case]})
    src = re.search(r'<img alt="error per output element of big\[float32\]" src="data:image/png;base64,([^"]+)"',
                    page)
    assert src and decode(src.group(1)).size == decode(png).size
    assert "per block of the output" in page
    # no values and no grid: no picture
    del case["failure"]["data"]["grid"]
    assert heat_map_png(case) is None and "<img" not in render_html(
        {"passed": False, "problem": "p", "score": 0, "max_score": 1, "cases": [case]})


def test_case_names_in_heat_maps_are_not_mathtext():
    f = failing()
    case = {"name": "$\\nosuchcommand{x}$ and $y^$", "failure": {"kind": "tolerance", "data": f.data}}
    assert heat_map_png(case)  # as mathtext, this name raises ValueError when drawn


def test_the_page_lists_cases_in_the_text_reports_order_degenerate_ones_last():
    """The notebook's HTML once led with an all-zero shrunk case, which the text report
    deliberately pushes down: the page now orders cases as the text report does."""
    def case(name, shape, values=None, shrunk=False):
        return {"name": name, "status": "failed", "group": "shrunk" if shrunk else "g", "visibility": "visible",
                "shrunk": shrunk, "inputs": {"hidden": {"shape": shape, "dtype": "float32"}}, "values": values,
                "failure": {"kind": "tolerance", "message": f"{name} is off", "details": [], "data": {}}}
    zero = case("shrunk:gen3[float32]", [2, 2], {"hidden": [[0.0, 0.0], [0.0, 0.0]]}, shrunk=True)
    real = case("batch[float32]", [4, 8])
    one = case("d_model_1[float32]", [3, 1])
    page = render_html({"passed": False, "problem": "tied_lm_head", "score": 0, "max_score": 1,
                        "cases": [zero, one, real]})
    order = re.findall(r"<code>([^<]+)</code> \(", page)
    assert order[0] == "batch[float32]" and set(order[1:]) == {"shrunk:gen3[float32]", "d_model_1[float32]"}
    # a shrunk case of non-zero values leads, an axis of 1 or not (it is the smallest failing input)
    small = case("shrunk:gen4[float32]", [1, 2], {"hidden": [[0.5, -1.0]]}, shrunk=True)
    page = render_html({"passed": False, "problem": "tied_lm_head", "score": 0, "max_score": 1,
                        "cases": [zero, one, real, small]})
    assert re.findall(r"<code>([^<]+)</code> \(", page)[0] == "shrunk:gen4[float32]"


def test_a_long_case_name_is_broken_to_the_figures_width():
    from matplotlib.figure import Figure
    from grader.reports.notebook_html import _fit_title
    name = "long_case_name_with_many_words_basis_times_minus_half_and_more_words[bfloat16]"
    lines = _fit_title(name, Figure(figsize=(4.5, 3))).split("\n")
    assert len(lines) == 2 and "".join(lines) == name and max(map(len, lines)) <= 4.5 * 72 / (0.62 * 9)
    assert _fit_title("batch[float32]", Figure(figsize=(4.5, 3))) == "batch[float32]"


def test_a_feedback_page_shows_unsafe_characters_as_escapes():
    """A learner's file name that is not UTF-8 (``caf\\xe9.py``) stopped grader grade from writing
    every learner's pages: the page must encode, with the byte, an ESC and a bidi override shown
    as visible escapes."""
    from grader.reports.notebook_html import feedback_page
    from grader.results import Failure, GroupScore, Report
    r = Report(problem="tied_lm_head", title="T", submission="caf\udce9\u202e.py", passed=False, score=0.0,
               max_score=1.0, failure=Failure(kind="import", message="ValueError: \x1b[31mred"), cases=[],
               groups=[GroupScore(group="g", points=1, earned=0, passed=0, total=0)], summary=[], environment={},
               output={"stdout": "", "stderr": ""},
               seconds=0.1)
    page = feedback_page(r)
    page.encode("utf-8")
    assert "\\xe9" in page and "\\u202e" in page and "\\x1b[31m" in page
    assert "\x1b" not in page and "\u202e" not in page


def test_the_pages_hidden_count_leaves_out_shrunk_cases():
    hidden = [{"name": f"h{i}", "status": "passed" if i else "failed", "group": "g", "visibility": "hidden"}
              for i in range(3)]
    shrunk = {"name": "shrunk:h0", "status": "failed", "group": "shrunk", "visibility": "hidden", "shrunk": True}
    page = render_html({"passed": False, "problem": "p", "score": 0, "max_score": 1, "cases": hidden + [shrunk]})
    assert "hidden cases: 2 of 3 passed" in page


def test_the_colour_bar_of_a_grid_has_plain_number_labels(monkeypatch):
    """Issue 37: the log colour bar's labels were mathtext ($\\mathdefault{10^{2}}$), shown raw
    where math text is off; they are plain numbers now."""
    from grader.reports import notebook_html
    seen = []
    monkeypatch.setattr(notebook_html, "_png_of", lambda fig: seen.append(fig) or "")
    case = {"name": "gen000[float16]", "failure": {"kind": "tolerance", "data": {"grid": {
        "shape": [60, 76], "blocks": [2, 2], "max_ratio": ["1.7e+02 3.8e+02", "2.6e+02 0.5"], "worst": [0, 40]}}}}
    notebook_html.heat_map_png(case)
    (fig,) = seen
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    FigureCanvasAgg(fig).draw()      # tick labels are made when the figure is drawn
    bar = fig.axes[-1]
    labels = [t.get_text() for t in bar.get_yticklabels() if t.get_text()]
    assert labels and not any("$" in t or "mathdefault" in t for t in labels)
    assert "100" in labels and "1" in labels


def test_the_heat_map_of_a_1d_output_is_one_strip_without_a_row_axis(monkeypatch):
    """A newcomer's trial: the heat map of masked_mean_pool's (3,) output had a row axis with
    ticks from -0.5 to 0.5; a 1-D output is one strip, its axis the index, no row ticks. A 2-D
    output keeps its integer row ticks."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from grader.reports import notebook_html
    seen = []
    monkeypatch.setattr(notebook_html, "_png_of", lambda fig: seen.append(fig) or "")
    one = {"name": "single_sequence[float32]", "values": {"got": [1.0, 2.5, 3.0], "expected": [1.0, 2.0, 3.0]},
           "failure": {"kind": "tolerance", "data": {"worst_index": [1]}}}
    two = {"name": "batch[float32]", "values": {"got": [[1.0, 2.5], [0.0, 1.0]], "expected": [[1.0, 2.0], [0.0, 1.0]]},
           "failure": {"kind": "tolerance", "data": {"worst_index": [0, 1]}}}
    notebook_html.heat_map_png(one)
    notebook_html.heat_map_png(two)
    for fig in seen:
        FigureCanvasAgg(fig).draw()
    strip, rows = seen[0].axes[0], seen[1].axes[0]
    assert [t.get_text() for t in strip.get_yticklabels()] == [] and strip.get_ylabel() == ""
    assert strip.get_xlabel() == "index"
    low, high = sorted(rows.get_ylim())
    assert [t for t in rows.get_yticks() if low <= t <= high] == [0, 1] and rows.get_ylabel() == "row"


def test_a_small_failing_case_card_shows_its_values_as_the_text_report_does():
    """A newcomer's trial: the HTML case cards left out the small inputs, expected and got
    values the text report prints; they are there now, written as Python writes them (nan,
    -inf, True), one per line."""
    from grader.batch.gradebook import report_from_json
    from grader.reports import text
    report = {"passed": False, "problem": "masked_mean_pool", "title": "Masked mean pool", "submission": "s.py",
              "score": 0, "max_score": 10, "environment": {}, "groups": [], "summary": [], "cases": [
        {"name": "shrunk:gen000[float16]", "status": "failed", "group": "shrunk", "shrunk": True,
         "inputs": {"embeddings": {"shape": [2, 1], "dtype": "float16"}, "mask": {"shape": [2], "dtype": "bool"}},
         "values": {"embeddings": [[1.5], [2.0]], "mask": [True, False], "expected": [1.5], "got": ["nan"]},
         "failure": {"kind": "non_finite", "message": "1 / 1 elements are NaN or infinite"}}]}
    page = render_html(report)
    block = page.split("shrunk:gen000[float16]", 1)[1]
    assert "embeddings = [[1.5], [2.0]]\nmask = [True, False]\nexpected = [1.5]\ngot = [nan]" in block, block
    assert "got = [nan]" in text.render(report_from_json(report))
