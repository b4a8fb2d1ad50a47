#!/usr/bin/env bash
# PrairieLearn external grader entrypoint: grade the student's file with `grader` and write
# /grade/results/results.json (PrairieLearn's "External Grading" page, "Grading results").
#
# PrairieLearn copies the student's files to /grade/student, the question's tests/ to
# /grade/tests and serverFilesCourse to /grade/serverFilesCourse, runs this script, and reads
# /grade/results/results.json afterwards (it does not create /grade/results). Every path and
# setting below can be changed with an environment variable (the question's
# externalGradingOptions.environment), so that the script also runs outside PrairieLearn
# (tests/test_templates.py runs it with a temporary PL_GRADE_ROOT).
#
#   PL_GRADE_ROOT           /grade
#   GRADER_PROBLEM          tied_lm_head       the problem id (`grader problems`)
#   GRADER_ASSIGNMENT       (unset)            an assignment instead (a name or path): every problem
#                                              of it, from one file (README.md, "Assignments")
#   GRADER_SUBMISSION_FILE  (unset)            the student's file to grade; by default the one .py or
#                                              .ipynb file submitted (the pl-file-editor's file-name)
#   GRADER_BIN              "$GRADER_PYTHON -I -m grader" (a command with arguments; keep the -I)
#   GRADER_PYTHON           python3            also writes results.json when the grader cannot
#   GRADER_ARGS             (unset)            more `grader check` flags, e.g. "--timeout 20"
#   GRADER_MEMORY_MB        (unset)            the submission's --memory-mb; by default three quarters of
#                                              the container's memory limit (cgroup v2 memory.max, or v1
#                                              memory/memory.limit_in_bytes, under GRADER_CGROUP_DIR,
#                                              /sys/fs/cgroup), so a memory bomb is a clear "memory"
#                                              failure before the kernel kills the container; none
#                                              without a limit (the grader's default, 4096)
#   GRADER_SEED_SECRET_FILE $PL_GRADE_ROOT/serverFilesCourse/grader/seed_secret  used when it exists;
#                                              else a secret made for this run alone (mode 0600)
#
# Every Python started here runs isolated (-I), from an empty folder of its own, never from the
# folder of the student's files; a submitted symbolic link or special file is refused, never
# followed or read.
set -uo pipefail

ROOT="${PL_GRADE_ROOT:-/grade}"
STUDENT="$ROOT/student"
RESULTS_DIR="$ROOT/results"
WORK="$ROOT/work"
PROBLEM="${GRADER_PROBLEM:-tied_lm_head}"
ASSIGNMENT="${GRADER_ASSIGNMENT:-}"
CHOSEN="${GRADER_SUBMISSION_FILE:-}"
PY="${GRADER_PYTHON:-python3}"
if [ -n "${GRADER_BIN:-}" ]; then
  read -r -a GRADER <<< "$GRADER_BIN"
else
  GRADER=("$PY" -I -m grader)
fi
read -r -a EXTRA <<< "${GRADER_ARGS:-}"
SECRET_FILE="${GRADER_SEED_SECRET_FILE:-$ROOT/serverFilesCourse/grader/seed_secret}"
# none in the course: one made for this run (0600, readable by the grader's user only), never the
# published seed, whose cases and answers a learner can tabulate with one local run, and never
# one baked into the image (an image in a registry publishes it; round five)
if [ -z "${GRADER_SEED_SECRET_FILE:-}" ] && [ ! -e "$SECRET_FILE" ]; then
  SECRET_FILE="$(umask 077 && mktemp "${TMPDIR:-/tmp}/grader-seed-secret.XXXXXX")"
  "$PY" -I -c "import secrets; print(secrets.token_hex(32))" > "$SECRET_FILE"
  trap 'rm -f "$SECRET_FILE"' EXIT
fi
SECRET=()
[ -e "$SECRET_FILE" ] && SECRET=(--seed-secret "$SECRET_FILE")
MEMORY=()
if [ -n "${GRADER_MEMORY_MB:-}" ]; then
  MEMORY=(--memory-mb "$GRADER_MEMORY_MB")
else
  CGROUP="${GRADER_CGROUP_DIR:-/sys/fs/cgroup}"
  limit=""
  for f in "$CGROUP/memory.max" "$CGROUP/memory/memory.limit_in_bytes"; do
    if [ -r "$f" ]; then limit="$(head -c 32 -- "$f" | tr -dc '0-9')"; break; fi
  done
  # "max" (v2) or a huge number (v1) is no limit; the rest of the limit is the grader's own
  if [ -n "$limit" ] && [ "${#limit}" -le 15 ]; then
    mb=$(( limit / 1048576 * 3 / 4 ))
    [ "$mb" -ge 256 ] || mb=256
    MEMORY=(--memory-mb "$mb")
  fi
fi
if [ -n "$ASSIGNMENT" ]; then
  WHAT=(--assignment "$ASSIGNMENT")
else
  WHAT=(--problem "$PROBLEM")
fi

mkdir -p "$RESULTS_DIR"
RESULTS="$RESULTS_DIR/results.json"
rm -f "$RESULTS"

# results.json that PrairieLearn shows as "invalid, not gradable": no points given or taken, no
# attempt used; $1 is the message (file names as visible escapes: they are the student's)
not_gradable() {
  "$PY" -I - "$RESULTS" "${1:0:8000}" <<'PYEOF'
import json, sys
text = "".join(c if c.isprintable() or c == "\n" else "\\x%02x" % ord(c) if ord(c) < 0x100 else "\\u%04x" % ord(c)
               for c in sys.argv[2])
with open(sys.argv[1], "w", encoding="utf-8") as fh:
    json.dump({"gradable": False, "format_errors": [text], "message": text}, fh, indent=2)
PYEOF
  echo "run.sh: $1" >&2
  exit 0
}

shopt -s nullglob
submitted=("$STUDENT"/*.py "$STUDENT"/*.ipynb)
[ ${#submitted[@]} -eq 0 ] && not_gradable "No .py file or .ipynb notebook was submitted."
for f in "${submitted[@]}"; do
  if [ -L "$f" ]; then
    not_gradable "$(basename -- "$f") is a symbolic link. Submit the file itself."
  elif [ ! -f "$f" ]; then
    not_gradable "$(basename -- "$f") is not a regular file. Submit the file itself."
  fi
done
if [ -n "$CHOSEN" ]; then
  target="$CHOSEN"
elif [ ${#submitted[@]} -eq 1 ]; then
  target="$(basename -- "${submitted[0]}")"
else
  not_gradable "Several files were submitted; the question's GRADER_SUBMISSION_FILE must name the one to grade (tell your instructor)."
fi
# a copy in a folder of its own (the helper modules beside it are taken along); the grader runs
# from an empty folder, given the copy's absolute path, and --shown names the file as submitted
rm -rf "$WORK"
mkdir -p "$WORK/submission" "$WORK/run"
cp -P -- "${submitted[@]}" "$WORK/submission"/
[ -f "$WORK/submission/$target" ] || not_gradable "The file $target was not submitted. Submit it under that name."
cd "$WORK/run" || not_gradable "cannot enter $WORK/run"
errors="$WORK/grader-stderr"
"${GRADER[@]}" check "${WHAT[@]}" --format prairielearn --output "$RESULTS" "${SECRET[@]}" "${MEMORY[@]}" "${EXTRA[@]}" \
  "--shown=$target" -- "$WORK/submission/$target" 2>"$errors"
status=$?
cat "$errors" >&2
# 0 passed, 1 failed: results.json is written; 2 with results.json: the file could not be read
# and results.json says why. Anything else: the grader itself could not run.
if [ $status -le 1 ] && [ -s "$RESULTS" ] || { [ $status -eq 2 ] && [ -s "$RESULTS" ]; }; then
  chmod 644 "$RESULTS"  # the grader writes its files private (0600); this one is for PrairieLearn to read
  exit 0
fi
why="$(grep '^grader' "$errors" | tail -n 1)"
not_gradable "The autograder could not grade this submission (exit $status): ${why:-no message}. Tell your instructor: it may be the autograder's fault."
