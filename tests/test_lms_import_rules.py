"""Blackboard's and Moodle's grade imports, checked against their documented rules (issue 37):
each test below emulates the importer by the rules written out here, with their source, and
feeds it what ``grader export`` wrote from a class graded with a roster (learners with no
submission, and one learner who is not on the roster).

Blackboard Learn, Grade Center "Work Offline > Upload". Source: Blackboard Help for
Instructors, "Uploading or Downloading Grade Center Items for Working Offline"
(library.blackboard.com/ref/3ea64795-6ecc-4abd-b595-0a9a8dfdec94/Content/_instructor_grade_center/
grade_center_upload_download.htm):

* BB1 "Each data file uploaded to the Grade Center requires a header row with one record per
  line subsequently."
* BB2 "Data in each column of comma-delimited files (file extension of .csv) must be contained
  within a quote character, the most common being quotation marks."
* BB3 "The unique identifier used for each Student is the Student's User Name" (the Username column).
* BB4 "The unique identifier for each column is a Column ID number ... Columns that do not have
  Column ID numbers in an uploaded file will create new columns", "added as text columns with
  points possible equaling zero (0)". A Grade Center download heads a column
  ``NAME [Total Pts: N Score] |ID``.

Moodle, "Import grades from CSV file". Source: Moodle's importer,
grade/import/csv/classes/load_data.php (``prepare_import_grade_data``, ``map_user_data_with_value``,
``update_grade_item``), and docs.moodle.org/en/Grade_import:

* MO1 The first line holds the column names; the form maps one column to a user field (id,
  ID number, email address or username) and others to grade items or their feedback.
* MO2 A line whose user field is empty or matches no user: "User not found, abort whole
  import" (``usermappingerrorusernotfound``): no grade of the file is imported.
* MO3 A grade is ``''`` or ``'-'`` (no grade) or a number ``unformat_float`` reads (a plain
  decimal); anything else is ``badgrade`` and aborts the import.
* MO4 The grade is stored as written: the importer does not scale it to the grade item's maximum.
"""
from __future__ import annotations

import csv
import io
import re

import pytest

from grader.batch import gradebook

from .test_export import run

BB_COLUMN = re.compile(r"^(?P<name>.*) \[Total Pts: (?P<points>[0-9.]+)(?: \w+)?\] \|(?P<id>\d+)$")


class ImportAborted(Exception):
    """The importer rejected the whole file."""


def blackboard_upload(text: str, grade_center: dict[str, dict], users: set[str]) -> dict[str, tuple[str, float]]:
    """Blackboard's upload of ``text`` into a Grade Center whose columns are ``grade_center``
    (Column ID -> {"points": N}) for the course's ``users``: (column id, value) per username.
    A column without an id would be a new text column of 0 points: returned under ``"new:NAME"``."""
    lines = text.splitlines()
    assert lines, "BB1: a header row"
    quoted = re.compile(r'^"(?:[^"]|"")*"(?:,"(?:[^"]|"")*")*$')
    for line in lines:
        assert quoted.match(line), f"BB2: every value in quotation marks: {line!r}"
    table = list(csv.reader(io.StringIO(text)))
    head = table[0]
    assert "Username" in head, "BB3: students are identified by the Username column"
    user = head.index("Username")
    columns = {}
    for i, title in enumerate(head):
        if title in ("Last Name", "First Name", "Username", "Student ID", "Last Access", "Availability"):
            continue
        m = BB_COLUMN.match(title)
        columns[i] = m["id"] if m and m["id"] in grade_center else f"new:{title}"  # BB4
    out = {}
    for row in table[1:]:
        if row[user] not in users:
            raise ImportAborted(f"no user {row[user]!r}")
        for i, column in columns.items():
            out[row[user]] = (column, float(row[i]))
    return out


def moodle_import(text: str, user_column: str, grade_column: str, users: set[str]) -> dict[str, float | None]:
    """Moodle's CSV grade import of ``text``, users identified by ``user_column`` among ``users``,
    ``grade_column`` mapped to an existing grade item: the grade per user, as stored."""
    table = list(csv.reader(io.StringIO(text)))
    head = [h.strip() for h in table[0]]  # MO1 (trim_headers)
    u, g = head.index(user_column), head.index(grade_column)
    grades: dict[str, float | None] = {}
    for line in table[1:]:
        if len(line) <= 1:
            continue
        who = line[u].strip()
        if not who or who not in users:
            raise ImportAborted("usermappingerrorusernotfound")  # MO2: the whole import
        value = line[g].strip()
        if value in ("", "-"):
            grades[who] = None
        elif re.fullmatch(r"[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?", value):
            grades[who] = float(value)  # MO4: as written
        else:
            raise ImportAborted("badgrade")  # MO3
    return grades




@pytest.fixture
def graded(tmp_path):
    """The gradebook of a class graded with a roster: ann and bob submitted, cal is on the roster
    with no submission (0), zed submitted but is not on the roster."""
    rows = [gradebook.Row("ann", "class/ann/a.py", True, 10, 10, [], 1.0, "passed"),
            gradebook.Row("bob", "class/bob/a.py", False, 7.5, 10, ["tolerance"], 1.0, "hint: float32"),
            gradebook.Row("cal", "", False, 0, 10, ["missing"], 0.0, "no submission"),
            gradebook.Row("zed", "class/zed/a.py", True, 10, 10, [], 1.0, "passed")]
    book = tmp_path / "gradebook.csv"
    gradebook.write_gradebook(book, rows)
    return book, tmp_path


def test_blackboard_lands_in_the_grade_center_column_scaled_to_its_points(graded, capsys):
    book, tmp = graded
    download = tmp / "bb.csv"   # a Grade Center download (Work Offline > Download), as Blackboard writes it
    download.write_text('"Last Name","First Name","Username","Student ID","Last Access","Availability",'
                        '"Lab 3 [Total Pts: 100 Score] |4412"\n'
                        '"A","Ann","ann","1","","Yes",""\n"B","Bob","bob","2","","Yes",""\n'
                        '"C","Cal","cal","3","","Yes",""\n')
    code, out, err = run(["export", "blackboard", book, "--roster", download, "--assignment", "Lab 3"], capsys)
    landed = blackboard_upload(out, {"4412": {"points": 100}}, users={"ann", "bob", "cal"})
    assert landed == {"ann": ("4412", 100.0), "bob": ("4412", 75.0), "cal": ("4412", 0.0)}
    assert code == 1 and "'zed' is not on the roster" in err and "warning" in err   # warned, left out
    assert "scaled to 100 points" in err
    # without the column in the download: said, since Blackboard would make a 0-point text column (BB4)
    code, out, err = run(["export", "blackboard", book, "--roster", download, "--assignment", "Lab 4"], capsys)
    assert all(col.startswith("new:") for col, _ in blackboard_upload(out, {"4412": {}}, {"ann", "bob", "cal"}).values())
    assert "new text column of 0 points" in err


def test_moodle_never_aborts_on_an_unknown_learner_and_lands_scaled(graded, capsys):
    book, tmp = graded
    participants = tmp / "moodle.csv"   # Moodle's grader report "Export to plain text file"
    participants.write_text("First name,Last name,ID number,Institution,Department,Email address\n"
                            "Ann,A,1,U,CS,ann\nBob,B,2,U,CS,bob\nCal,C,3,U,CS,cal\n")
    code, out, err = run(["export", "moodle", book, "--roster", participants, "--key", "Email address",
                          "--assignment", "Lab 3", "--points", "100"], capsys)
    grades = moodle_import(out, "Email address", "Lab 3", users={"ann", "bob", "cal"})   # no abort (MO2)
    assert grades == {"ann": 100.0, "bob": 75.0, "cal": 0.0}                              # scaled (MO4)
    assert code == 1 and "'zed' is not on the roster" in err
    # what the note warns of: without a roster, zed's line would abort Moodle's whole import
    code, out, err = run(["export", "moodle", book, "--assignment", "Lab 3", "--points", "100"], capsys)
    with pytest.raises(ImportAborted, match="usermappingerrorusernotfound"):
        moodle_import(out, "Username", "Lab 3", users={"ann", "bob", "cal"})
    assert "stops its whole import" in err
    # and without --points the grades land out of 10 in a 100-point item: said
    code, out, err = run(["export", "moodle", book, "--roster", participants, "--key", "Email address",
                          "--assignment", "Lab 3"], capsys)
    assert moodle_import(out, "Email address", "Lab 3", {"ann", "bob", "cal"})["bob"] == 7.5
    assert "points out of 10" in err and "--points N" in err
