"""``grader export canvas|csv`` (issue 12, item 4): Canvas's gradebook import CSV and a generic
LMS CSV from a gradebook, learners matched to a roster; unmatched learners on stderr (exit 1);
bad input: one error line, exit 2. In process, from gradebooks written by hand."""
from __future__ import annotations

import csv
import io

import pytest

from grader import cli
from grader.batch import gradebook

ROSTER = ("\ufeffStudent,ID,SIS User ID,SIS Login ID,Section\n"
          "    Points Possible,,,,\n"
          "Alice Liddell,101,S-001,alice,Lab A\n"
          "Bob Builder,102,S-002,Bob,Lab B\n"
          '"Doe, Jane",103,S-003,jdoe,Lab A\n'
          "Eve Hacker,104,S-004,=cmd|' /C calc'!A0,Lab B\n")


@pytest.fixture
def files(tmp_path):
    rows = [gradebook.Row("alice", "class/alice.py", True, 10, 10, [], 1.0, "passed all 93 cases"),
            gradebook.Row("bob", "class/bob.py", False, 7.5, 10, ["tolerance"], 2.0,
                      "=1+1 is not a formula; hint: accumulate in float32"),
            gradebook.Row("mallory", "class/mallory.py", False, 0, 10, ["import"], 0.5, "could not be graded")]
    book = tmp_path / "gradebook.csv"
    gradebook.write_gradebook(book, rows)
    roster = tmp_path / "roster.csv"
    roster.write_text(ROSTER, encoding="utf-8")
    return book, roster, tmp_path


def run(argv, capsys):
    try:
        code = cli.main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def test_canvas_export_matches_by_sis_login_and_reports_the_unmatched(files, capsys):
    book, roster, tmp = files
    code, out, err = run(["export", "canvas", book, "--roster", roster, "--assignment", "Tied LM head",
                          "--assignment-id", "4521"], capsys)
    assert code == 1  # written, but mallory is not on the roster
    table = list(csv.reader(io.StringIO(out)))
    assert table[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Tied LM head (4521)"]
    assert table[1] == ["    Points Possible", "", "", "", "", "10"]
    assert table[2:] == [["Alice Liddell", "101", "S-001", "alice", "Lab A", "10"],
                         ["Bob Builder", "102", "S-002", "Bob", "Lab B", "7.5"]]   # case-insensitive key
    # Jane and Eve have no row: left out, so the import leaves their grades alone
    lines = err.splitlines()
    assert lines[0] == "grader: warning: learner 'mallory' is not on the roster (column 'SIS Login ID'); " \
                       "left out of the export"
    assert "2 roster students have no row in the gradebook" in lines[1] and len(lines) == 2


def test_one_roster_student_without_a_row_is_said_in_the_singular(files, capsys):
    book, roster, tmp = files
    (tmp / "roster1.csv").write_text(ROSTER.replace("Eve Hacker,104,S-004,=cmd|' /C calc'!A0,Lab B\n", ""),
                                     encoding="utf-8")
    code, _, err = run(["export", "canvas", book, "--roster", tmp / "roster1.csv", "--assignment", "A"], capsys)
    assert code == 1 and "grader: note: 1 roster student has no row in the gradebook" in err


def test_canvas_export_never_writes_a_formula(files, capsys):
    book, roster, tmp = files
    gradebook.write_gradebook(book, [gradebook.Row("=cmd|' /C calc'!A0", "x.py", True, 1, 1, [], 1)])
    code, out, _ = run(["export", "canvas", book, "--roster", roster, "--assignment", "@SUM(A1)"], capsys)
    assert code == 0
    table = list(csv.reader(io.StringIO(out)))
    assert table[0][-1] == "'@SUM(A1)" and table[2][3] == "'=cmd|' /C calc'!A0"
    assert not any(cell.startswith(("=", "+", "-", "@")) for row in table for cell in row)


def test_canvas_export_to_a_file_with_every_learner_matched(files, capsys):
    book, roster, tmp = files
    rows = [r for r in gradebook.read_gradebook(book) if r.learner != "mallory"]
    gradebook.write_gradebook(book, rows)
    code, out, err = run(["export", "canvas", book, "--roster", roster, "--assignment", "HW 3", "--key", "sis",
                          "--out", tmp / "canvas.csv"], capsys)
    # ids are not SIS ids: no learner matches, so nothing is written (one error line, exit 2)
    assert code == 2 and err.count("\n") == 1 and "none of the gradebook's 2 learners is on the roster" in err
    assert "(column 'SIS User ID')" in err and not (tmp / "canvas.csv").exists()
    code, out, err = run(["export", "canvas", book, "--roster", roster, "--assignment", "HW 3",
                          "--out", tmp / "canvas.csv"], capsys)
    assert code == 0 and out == ""
    head = (tmp / "canvas.csv").read_text().splitlines()[0]
    assert head == "Student,ID,SIS User ID,SIS Login ID,Section,HW 3"  # no id: Canvas creates the assignment
    # --output, as grader check names it, writes the same file (an instructor's --output exited 2)
    code, out, _ = run(["export", "canvas", book, "--roster", roster, "--assignment", "HW 3",
                        "--output", tmp / "canvas2.csv"], capsys)
    assert code == 0 and out == "" and (tmp / "canvas2.csv").read_text() == (tmp / "canvas.csv").read_text()


def test_generic_csv_with_and_without_a_roster(files, capsys):
    book, roster, _ = files
    code, out, err = run(["export", "csv", book], capsys)
    assert code == 0 and err == ""
    table = list(csv.DictReader(io.StringIO(out)))
    assert [r["id"] for r in table] == ["alice", "bob", "mallory"]
    assert table[1] == {"id": "bob", "name": "", "score": "7.5", "max_score": "10", "percent": "75.0",
                        "passed": "false", "feedback": "'=1+1 is not a formula; hint: accumulate in float32"}
    code, out, err = run(["export", "csv", book, "--roster", roster, "--key", "login"], capsys)
    assert code == 1 and "'mallory' is not on the roster" in err
    table = list(csv.DictReader(io.StringIO(out)))
    assert [(r["id"], r["name"]) for r in table] == [("alice", "Alice Liddell"), ("Bob", "Bob Builder")]


@pytest.mark.parametrize("header,row,name", [
    ("id,name,email", "alice,Alice Liddell,a@x.org", "Alice Liddell"),
    ("Username,First name,Last name", "alice,Alice,Liddell", "Alice Liddell"),
    ("Username,Last Name,First Name", "alice,Liddell,Alice", "Alice Liddell"),
    ("Username,Email address", "alice,a@x.org", ""),
])
def test_the_generic_csv_names_a_student_from_the_rosters_name_columns(files, capsys, header, row, name):
    """A newcomer's ``id,name,email`` class list gave every row of ``export csv`` an empty name:
    only Canvas's ``Student`` column was read."""
    book, _, tmp = files
    roster = tmp / "class.csv"
    roster.write_text(f"{header}\n{row}\n")
    code, out, err = run(["export", "csv", book, "--roster", roster], capsys)
    table = list(csv.DictReader(io.StringIO(out)))
    assert code == 1 and [(r["id"], r["name"]) for r in table] == [("alice", name)], (out, err)


BAD = [
    (["export", "canvas", "{book}", "--assignment", "x"], "the following arguments are required: --roster"),
    (["export", "canvas", "{book}", "--roster", "{roster}"], "the following arguments are required: --assignment"),
    (["export", "canvas", "{tmp}/nowhere.csv", "--roster", "{roster}", "--assignment", "x"], "is not a file"),
    (["export", "canvas", "{book}", "--roster", "{tmp}/nowhere.csv", "--assignment", "x"], "cannot read --roster"),
    (["export", "canvas", "{book}", "--roster", "{roster}", "--assignment", "x", "--key", "Email"],
     "has no column 'Email'"),
    (["export", "csv", "{roster}"], "is not a gradebook"),
    (["export", "csv", "{book}", "--roster", "{dup}"], "twice in column 'SIS Login ID'"),
    (["export", "csv", "{book}", "--roster", "{binary}"], "cannot read --roster"),
    (["export", "canvas", "{book}", "--roster", "{roster}", "--assignment", " "], "--assignment is empty"),
    (["export", "pdf", "{book}"], "invalid choice: 'pdf'"),
    (["export", "canvas", "{book}", "--roster", "{roster}", "--assignment", "x", "--points", "0"],
     "'0' is not a number of points above 0"),
    (["export", "csv", "{book}", "--points", "nan"], "'nan' is not a number of points above 0"),
    (["export", "moodle", "{book}"], "the following arguments are required: --assignment"),
    (["export", "canvas", "{book}", "--roster", "{twice}", "--assignment", "HW 3"],
     "has 2 assignments titled 'HW 3'"),
    (["export", "blackboard", "{book}", "--roster", "{roster}", "--key", "login", "--assignment", "x"],
     "Blackboard matches students by Username"),
    (["export", "csv", "{book}", "--roster", "{twocols}"], "has the column 'Username' twice"),
    # a class list Canvas could match no row of (every identity cell empty): refused, not written
    (["export", "canvas", "{book}", "--roster", "{plain}", "--assignment", "x"],
     "has none of the columns Canvas matches a student by (Student, ID, SIS User ID, SIS Login ID; its columns: "
     "id, name, email)"),
]


@pytest.mark.parametrize("argv,message", BAD, ids=[" ".join(a[:3]) + " " + m[:20] for a, m in BAD])
def test_bad_input_exits_2_with_one_error_line(argv, message, files, capsys):
    book, roster, tmp = files
    (tmp / "dup.csv").write_text("Student,SIS Login ID\nA,alice\nB,ALICE \n")
    (tmp / "binary.csv").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xffbad")   # an image given as the roster
    (tmp / "twocols.csv").write_text("Username,Student ID,Username\nalice,1,dup\n")
    (tmp / "plain.csv").write_text("id,name,email\nalice,Alice Liddell,a@x.org\nbob,Bob B,b@x.org\n")
    (tmp / "twice.csv").write_text("Student,ID,SIS User ID,SIS Login ID,Section,HW 3 (1),HW 3 (2)\nA,1,2,alice,S,,\n")
    code, out, err = run([a.format(book=book, roster=roster, tmp=tmp, dup=tmp / "dup.csv",
                                   binary=tmp / "binary.csv", twice=tmp / "twice.csv", twocols=tmp / "twocols.csv",
                                   plain=tmp / "plain.csv")
                          for a in argv], capsys)
    errors = [line for line in err.splitlines() if line.startswith("grader: error: ")]
    assert code == 2 and len(errors) == 1 and message in errors[0] and err.endswith(errors[0] + "\n"), err
    assert "Traceback" not in err


@pytest.mark.parametrize("fmt", ["canvas", "csv", "moodle"])
def test_two_learners_matching_one_student_is_bad_input(tmp_path, capsys, fmt):
    """Round eleven of issue 32: with ``--roster``, ``grader export csv`` wrote alice's row and
    then a second ``alice`` row with the score of a learner named ``alice `` (its file
    ``alice .py``), exit 0; Canvas refused it. Every format refuses it now."""
    book = tmp_path / "gradebook.csv"
    gradebook.write_gradebook(book, [gradebook.Row("alice", "a.py", True, 1, 1, [], 1), gradebook.Row("ALICE", "b.py", True, 1, 1,
                                                                                          [], 1)])
    (tmp_path / "r.csv").write_text("Student,ID,SIS User ID,SIS Login ID,Section,Username\nA,1,2,alice,S,alice\n")
    extra = (["--assignment", "x"] if fmt != "csv" else []) + (["--key", "Username"] if fmt == "moodle" else [])
    code, _, err = run(["export", fmt, book, "--roster", tmp_path / "r.csv", *extra], capsys)
    assert code == 2 and "both match the roster's 'alice'" in err and err.count("\n") == 1, err


@pytest.mark.parametrize("fmt", ["csv", "moodle", "blackboard"])
def test_learner_ids_equal_but_for_case_or_spaces_are_refused_without_a_roster(tmp_path, capsys, fmt):
    book = tmp_path / "gradebook.csv"
    gradebook.write_gradebook(book, [gradebook.Row("alice", "a.py", True, 1, 1, [], 1),
                                     gradebook.Row("alice ", "b.py", False, 0.065, 1, [], 1)])
    extra = ["--assignment", "x"] if fmt != "csv" else []
    code, out, err = run(["export", fmt, book, *extra], capsys)
    assert code == 2 and "'alice' and 'alice ' differ only in case or spaces" in err and not out, err


CANVAS_EXPORT = ("Student,ID,SIS User ID,SIS Login ID,Section,Tied LM head (4521),Quiz 1 (4522)\n"
                 "    Points Possible,,,,,100.00,5.00\n"
                 "Alice Liddell,101,S-001,alice,Lab A,,4\n"
                 "Bob Builder,102,S-002,bob,Lab B,,5\n")


def test_canvas_takes_the_rosters_column_id_and_scales_to_its_points_possible(files, capsys):
    """Canvas's export of an existing 100-point assignment: the bare name gets the column's id
    (Canvas would otherwise match by title or create one) and 7.5 of 10 points is 75 of 100."""
    book, _, tmp = files
    (tmp / "canvas.csv").write_text(CANVAS_EXPORT)
    code, out, err = run(["export", "canvas", book, "--roster", tmp / "canvas.csv", "--assignment", "tied lm head"],
                         capsys)
    table = list(csv.reader(io.StringIO(out)))
    assert table[0][-1] == "tied lm head (4521)" and table[1][-1] == "100"
    assert [row[-1] for row in table[2:]] == ["100", "75"]
    assert "the roster's column tied lm head (4521) is the assignment" in err
    assert "scaled to 100 points, the roster's Points Possible" in err and code == 1  # mallory


def test_canvas_points_override_the_roster_with_a_warning(files, capsys):
    book, _, tmp = files
    (tmp / "canvas.csv").write_text(CANVAS_EXPORT)
    code, out, err = run(["export", "canvas", book, "--roster", tmp / "canvas.csv", "--assignment", "Tied LM head",
                          "--assignment-id", "4521", "--points", "20"], capsys)
    table = list(csv.reader(io.StringIO(out)))
    assert table[1][-1] == "20" and [row[-1] for row in table[2:]] == ["20", "15"]
    assert "warning: the roster says Tied LM head is worth 100 points; importing this file changes its Points " \
           "Possible to 20" in err


def test_moodle_export_has_moodles_identity_columns_the_grade_and_feedback(files, capsys):
    book, _, tmp = files
    (tmp / "moodle.csv").write_text(
        "First name,Last name,ID number,Institution,Department,Email address,Last downloaded from this course\n"
        "Alice,Liddell,S-001,U,CS,alice@example.edu,1700000000\n"
        "Bob,Builder,S-002,U,CS,bob@example.edu,1700000000\n")
    book.write_text(book.read_text().replace("alice,", "alice@example.edu,").replace("bob,", "Bob@example.edu,"))
    code, out, err = run(["export", "moodle", book, "--roster", tmp / "moodle.csv", "--assignment", "Lesson 1",
                          "--points", "100"], capsys)
    table = list(csv.reader(io.StringIO(out)))
    assert table[0] == ["First name", "Last name", "ID number", "Email address", "Lesson 1", "Feedback"]
    assert table[1] == ["Alice", "Liddell", "S-001", "alice@example.edu", "100", "passed all 93 cases"]
    assert table[2][:5] == ["Bob", "Builder", "S-002", "bob@example.edu", "75"]
    assert table[2][5].startswith("'=1+1")  # never a formula
    assert code == 1 and "'mallory' is not on the roster (column 'Email address')" in err
    code, out, _ = run(["export", "moodle", book, "--assignment", "Lesson 1"], capsys)
    assert list(csv.reader(io.StringIO(out)))[0] == ["Username", "Lesson 1", "Feedback"] and code == 0
    # matched by a roster column of Moodle's own: that column is exported, to identify users by
    (tmp / "moodle_users.csv").write_text("First name,Last name,Email address,Username\n"
                                          "Alice,Liddell,a@example.edu,alice\nBob,Builder,b@example.edu,bob\n")
    book.write_text(book.read_text().replace("alice@example.edu,", "alice,").replace("Bob@example.edu,", "bob,"))
    code, out, _ = run(["export", "moodle", book, "--roster", tmp / "moodle_users.csv", "--assignment", "L1",
                        "--key", "Username"], capsys)
    table = list(csv.reader(io.StringIO(out)))
    assert table[0] == ["First name", "Last name", "Email address", "Username", "L1", "Feedback"], table
    assert table[1][:5] == ["Alice", "Liddell", "a@example.edu", "alice", "10"]


def test_blackboard_export_quotes_every_cell_and_heads_an_existing_column_by_id(files, capsys):
    book, _, tmp = files
    code, out, err = run(["export", "blackboard", book, "--assignment", "Tied LM head", "--assignment-id", "98765"],
                         capsys)
    lines = out.splitlines()
    assert lines[0] == '"Username","Tied LM head [Total Pts: 10 Score] |98765"'
    assert lines[1:] == ['"alice","10"', '"bob","7.5"', '"mallory","0"'] and code == 0
    (tmp / "bb.csv").write_text('"Last Name","First Name","Username","Student ID","Last Access","Availability"\n'
                                '"Liddell","Alice","alice","S-001","",Yes\n')
    code, out, err = run(["export", "blackboard", book, "--roster", tmp / "bb.csv", "--assignment", "HW",
                          "--points", "20"], capsys)
    table = list(csv.reader(io.StringIO(out)))
    assert table == [["Last Name", "First Name", "Username", "Student ID", "HW"], ["Liddell", "Alice", "alice",
                                                                                    "S-001", "20"]]
    assert code == 1  # bob and mallory are not on that roster


def test_generic_csv_keeps_an_assignments_per_problem_points(tmp_path, capsys):
    rows = [gradebook.Row("alice", "a.py", False, 7, 10, ["import"], 1.0, "tied_lm_head 0/4: import",
                          problems={"embedding_lookup": 3, "masked_mean_pool": 3, "tied_lm_head": 0})]
    book = tmp_path / "gradebook.csv"
    gradebook.write_gradebook(book, rows, ["embedding_lookup", "masked_mean_pool", "tied_lm_head"])
    code, out, _ = run(["export", "csv", book, "--points", "100"], capsys)
    table = list(csv.DictReader(io.StringIO(out)))
    assert list(table[0])[-4:] == ["embedding_lookup", "masked_mean_pool", "tied_lm_head", "feedback"]
    assert (table[0]["score"], table[0]["embedding_lookup"], table[0]["tied_lm_head"]) == ("70", "30", "0")


def test_a_key_that_had_to_be_escaped_is_named_since_the_lms_will_not_match_it(tmp_path, capsys):
    """A login '-jdoe' is written as "'-jdoe" (never a formula), which Blackboard cannot match:
    the instructor is told which student to enter by hand."""
    book = tmp_path / "gradebook.csv"
    gradebook.write_gradebook(book, [gradebook.Row("-jdoe", "x.py", True, 1, 1, [], 1)])
    (tmp_path / "bb.csv").write_text("Last Name,First Name,Username,Student ID\nDoe,J,-jdoe,7\n")
    code, out, err = run(["export", "blackboard", book, "--roster", tmp_path / "bb.csv", "--assignment", "HW"], capsys)
    assert code == 0 and "\"'-jdoe\"" in out
    assert "the roster's Username '-jdoe' starts like a spreadsheet formula" in err and "by hand" in err


def test_blackboard_uses_the_grade_center_column_of_the_roster_and_its_points(files, capsys):
    """Issue 37: the export ignored the download's "NAME [Total Pts: 100 Score] |ID" header and
    wrote a bare name (Blackboard then made a new 0-point text column, scores out of 10)."""
    book, _, tmp = files
    (tmp / "bb.csv").write_text('"Last Name","First Name","Username","Student ID","Last Access","Availability",'
                                '"Tied LM head [Total Pts: 100 Score] |4412","Quiz [Total Pts: 5 Score] |4413"\n'
                                '"Liddell","Alice","alice","S-001","",Yes,"",""\n'
                                '"Builder","Bob","bob","S-002","",Yes,"",""\n')
    code, out, err = run(["export", "blackboard", book, "--roster", tmp / "bb.csv", "--assignment", "tied lm head"],
                         capsys)
    table = list(csv.reader(io.StringIO(out)))
    assert table[0][-1] == "tied lm head [Total Pts: 100 Score] |4412"
    assert [r[-1] for r in table[1:]] == ["100", "75"]
    assert "column tied lm head (id 4412)" in err and "scaled to 100 points" in err
    code, out, err = run(["export", "blackboard", book, "--roster", tmp / "bb.csv", "--assignment", "HW 9"], capsys)
    assert "Blackboard makes a new text column" in err


@pytest.mark.parametrize("encoding,delimiter", [("utf-16", "\t"), ("utf-8", "\t"), ("utf-8-sig", ";"),
                                                ("utf-8", ",")])
def test_a_grade_center_download_as_blackboard_writes_it_is_a_roster(files, capsys, encoding, delimiter):
    """A newcomer's trial: Blackboard's Grade Center download is, by default, UTF-16 with a
    byte-order mark and tab-separated (a .xls that is text); it was refused ("'utf-8' codec
    can't decode byte 0xff"), and a tab-separated UTF-8 copy had "none of the id columns" (the
    tabs inside one column name). Either, and Excel's semicolons, read as the comma CSV does."""
    book, _, tmp = files
    # a column name with a comma, unquoted, as Excel saves tab or semicolon text: the delimiter is
    # the one that splits the header most, not the first comma seen (a format consumer's read)
    header = ["Last Name", "First Name", "Username", "Student ID", "Lab 3, part 1 [Total Pts: 5 Score] |4411",
              "Tied LM head [Total Pts: 100 Score] |4412"]
    rows = [["Liddell", "Alice", "alice", "S-001", "", ""], ["Builder", "Bob", "bob", "S-002", "", ""]]
    lines = [header, *rows] if delimiter != "," else [[f'"{c}"' for c in header], *rows]   # CSV quotes its commas
    (tmp / "bb.xls").write_bytes("\n".join(delimiter.join(r) for r in lines).encode(encoding))
    code, out, err = run(["export", "blackboard", book, "--roster", tmp / "bb.xls", "--assignment", "tied lm head"],
                         capsys)
    table = list(csv.reader(io.StringIO(out)))
    assert table[0][-1] == "tied lm head [Total Pts: 100 Score] |4412", err
    assert [r[2:] for r in table[1:]] == [["alice", "S-001", "100"], ["bob", "S-002", "75"]]


def test_moodle_says_what_the_grades_are_out_of_and_why_a_roster_matters(files, capsys):
    book, _, _ = files
    code, out, err = run(["export", "moodle", book, "--assignment", "Lesson 1"], capsys)
    assert "points out of 10" in err and "--points N" in err and "stops its whole import" in err
    code, out, err = run(["export", "moodle", book, "--assignment", "Lesson 1", "--points", "100"], capsys)
    assert "points out of" not in err


def test_a_key_naming_a_lowercase_column_is_that_column(tmp_path, capsys):
    """A newcomer's roster had a column ``username``: ``--key username`` was read as the alias of
    ``Username`` and refused ("has no column 'Username'"), so no key could name it."""
    book = tmp_path / "gradebook.csv"
    gradebook.write_gradebook(book, [gradebook.Row("alice", "a.py", True, 1, 1, [], 1)])
    (tmp_path / "r.csv").write_text("username,first,last\nalice,Alice,A\n")
    code, out, err = run(["export", "csv", book, "--roster", tmp_path / "r.csv", "--key", "username"], capsys)
    assert code == 0 and "alice" in out and not err.startswith("grader: error"), err


@pytest.mark.parametrize("fmt", ["csv", "moodle", "blackboard", "canvas"])
def test_without_key_every_export_finds_the_id_column_grade_found(tmp_path, capsys, fmt):
    """A newcomer's finding: ``grade --roster`` guessed the id column (here ``Username``) but
    ``export csv`` looked only for its own default (``SIS Login ID``) and refused the same roster.
    Every export now prefers its format's column and else guesses as grade does."""
    from grader.batch.roster import with_roster
    from grader.batch.discovery import Submission
    book = tmp_path / "gradebook.csv"
    gradebook.write_gradebook(book, [gradebook.Row("alice", "a.py", True, 1, 1, [], 1)])
    roster = tmp_path / "r.csv"
    roster.write_text("Student,Username,Extra\nAlice A,alice,x\nBob B,bob,y\n")
    subs, strangers = with_roster([Submission(learner="alice", path=tmp_path / "a.py")], str(roster), None)
    assert [s.learner for s in subs] == ["alice", "bob"] and strangers == []   # grade matched alice and added bob
    extra = ["--assignment", "A"] if fmt != "csv" else []
    code, out, err = run(["export", fmt, book, "--roster", roster, *extra], capsys)
    assert code == 0 and ("alice" in out or "Alice A" in out), err    # Canvas writes the Student column
    assert "bob" in out or "1 roster student has no row" in err    # the roster's learner without a row
    # a roster with no id column at all is one error line naming the columns, exit 2
    roster.write_text("Student,Extra\nAlice A,x\n")
    code, out, err = run(["export", fmt, book, "--roster", roster, *extra], capsys)
    assert code == 2 and err.startswith("grader: error: --roster") and "Student, Extra" in err


@pytest.mark.parametrize("fmt", ["moodle", "csv"])
def test_a_backslash_in_feedback_never_escapes_a_quote_for_php(tmp_path, capsys, fmt):
    """Round eighteen of issue 32: alice's message ended ``see, you \\`` (her own exception's
    text); the cell was written ``"...you \\"`` and PHP's fgetcsv (Moodle's import, whose escape
    is a backslash) kept it open over bob's and dave's rows: their grades were not imported and
    alice's feedback held them. A backslash in feedback is written as U+29F5; read with a
    backslash escape, as PHP does, the export has one row per learner."""
    book = tmp_path / "gradebook.csv"
    gradebook.write_gradebook(book, [
        gradebook.Row("alice", "a.py", False, 0, 10, ["import"], 1, 'could not be graded: ValueError: see, you \\'),
        gradebook.Row("bob", "b.py", True, 10, 10, [], 1, 'passed all 61 cases'),
        gradebook.Row("dave", "d.py", False, 5, 10, ["tolerance"], 1, 'x\\",99 and "quoted"')])
    extra = ["--assignment", "Lab 3"] if fmt == "moodle" else []
    code, out, err = run(["export", fmt, book, *extra], capsys)
    assert code == 0, err
    rows = list(csv.reader(io.StringIO(out.replace("\r\n", "\n")), escapechar="\\"))   # fgetcsv's reading
    assert [r[0] for r in rows[1:]] == ["alice", "bob", "dave"] and len({len(r) for r in rows}) == 1, rows
    assert "\\" not in out and "see, you \u29f5" in out


def test_a_roster_column_that_holds_the_ids_is_named_with_its_key(files, capsys):
    """A newcomer's trial: Moodle's default key (the email) matched none of 8 learners named by
    ID number, and nothing said which --key would: the export was a header and 8 warnings. The
    column that holds most of the unmatched ids (an id column before a first name that happens
    to equal a login) is named with the --key that matches on it; none when no column holds
    half of them."""
    book, _, tmp = files
    (tmp / "moodle.csv").write_text("First name,Last name,ID number,Email address\n"
                                    "Alice,Liddell,alice,al@uni.edu\nBob,Builder,bob,bb@uni.edu\n"
                                    "Mallory,M,mallory,mm@uni.edu\n")
    code, out, err = run(["export", "moodle", book, "--roster", tmp / "moodle.csv", "--assignment", "X",
                          "--out", tmp / "moodle-out.csv"], capsys)
    # none matched: nothing written (a newcomer's header-only file and 13 warnings), the key said in one line
    assert code == 2 and err.count("\n") == 1 and not (tmp / "moodle-out.csv").exists(), err
    assert "on the roster (column 'Email address'): its column 'ID number' holds 3 of them, --key idnumber" in err
    some = tmp / "some.csv"       # one learner matched: written, the others named, and the better key
    some.write_text("First name,Last name,ID number,Email address\nAlice,Liddell,alice,alice\n"
                    "Bob,Builder,bob,bb@uni.edu\nMallory,M,mallory,mm@uni.edu\n")
    code, out, err = run(["export", "moodle", book, "--roster", some, "--assignment", "X"], capsys)
    assert code == 1 and err.count("is not on the roster (column 'Email address')") == 2
    assert "the roster's column 'ID number' holds 2 of these 2 ids: --key idnumber matches learners on it" in err
    code, out, err = run(["export", "moodle", book, "--roster", tmp / "moodle.csv", "--assignment", "X",
                          "--key", "idnumber"], capsys)
    assert code == 0 and "not on the roster" not in err and len(list(csv.reader(io.StringIO(out)))) == 4
    (tmp / "other.csv").write_text("First name,Email address\nZed,z@uni.edu\n")
    code, out, err = run(["export", "moodle", book, "--roster", tmp / "other.csv", "--assignment", "X"], capsys)
    assert code == 2 and "give --key with the roster column that holds their ids" in err and "holds" not in \
        err.split("give --key")[0]


def test_a_backslash_in_a_roster_name_cannot_swallow_the_rows_after_it(files, capsys):
    """Round twenty-eight of issue 32: Moodle's importer reads CSV with PHP's fgetcsv, whose
    escape is a backslash; a learner's own last name ``Evil,\\`` from Moodle's participant export
    (quoted for its comma, ending in a backslash) kept its field open over every later row: the
    next learner's grade was never imported. Round eighteen's fix covered the Feedback cell only.
    Every cell that only names a learner writes a backslash as U+29F5; a learner whose matching
    id holds one is left out and named."""
    _, _, tmp = files
    book = tmp / "book.csv"
    gradebook.write_gradebook(book, [
        gradebook.Row("alice", "a.py", True, 10, 10, [], 1.0, "passed"),
        gradebook.Row("bob", "b.py", False, 7.5, 10, ["tolerance"], 1.0, "close"),
        gradebook.Row("mal\\", "m.py", True, 10, 10, [], 1.0, "passed")])
    (tmp / "moodle.csv").write_text('First name,Last name,ID number,Email address\n'
                                    'Alice,"Evil,\\",1001,alice\nBob,Builder,1002,bob\nMal,M,1003,mal\\\n')
    code, out, err = run(["export", "moodle", book, "--roster", tmp / "moodle.csv", "--assignment", "X",
                          "--key", "email"], capsys)
    table = list(csv.reader(io.StringIO(out), escapechar="\\"))   # as PHP's fgetcsv reads it
    assert [r[:4] for r in table[1:]] == [["Alice", "Evil,\u29f5", "1001", "alice"], ["Bob", "Builder", "1002", "bob"]]
    assert [r[4] for r in table[1:]] == ["10", "7.5"] and all(len(r) == len(table[0]) for r in table)
    assert "s Email address holds a backslash" in err and "left out of the export" in err


def test_a_scaled_score_carries_no_digit_the_gradebooks_rounding_lost():
    """2/3 of a point is 0.6667 in the gradebook (4 decimals); scaled to 20 points it was
    1.3334 in a Canvas export (a trial), a digit the gradebook does not carry: one decimal
    fewer for each power of ten the scaling multiplies by."""
    from grader.export import scaled
    assert scaled(0.6667, 10, 20) == 1.333
    assert scaled(0.6667, 10, 100) == 6.667 and scaled(0.6667, 10, 1000) == 66.67
    assert scaled(0.6667, 10, 10) == 0.6667 and scaled(0.6667, 10, 5) in (0.3333, 0.3334)   # nothing lost
    assert scaled(0.6667, 10, None) == 0.6667 and scaled(3, 0, 20) == 0.0
