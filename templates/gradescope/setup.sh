#!/usr/bin/env bash
# Gradescope autograder set-up: choose a Python 3.11+, install the grader into a virtual
# environment, and fill the grader's caches by grading the instructor's solutions once. Gradescope
# runs it once, as root, when it builds the autograder image (the zip's files are then in
# /autograder/source). Its base image is Ubuntu 22.04, whose python3 is 3.10: unless the image
# has a 3.11+, this installs python3.11 and python3.11-venv with apt (Ubuntu's own packages, else
# the deadsnakes PPA). The system python3 is left alone: Gradescope's harness runs on it.
#
#   AUTOGRADER_ROOT      /autograder
#   GRADER_SOURCE_DIR    $AUTOGRADER_ROOT/source      the unpacked autograder zip
#   GRADER_PIP_SPEC      what pip installs (below); a grader-*.whl or a grader-src/ folder in the zip wins
#   GRADER_PYTHON        an interpreter to try first; then python3.13, python3.12, python3.11, python3
#   GRADER_FRAMEWORKS    numpy jax                    the frameworks learners may use; with torch in it,
#                        torch (CPU build, GRADER_TORCH_SPEC from GRADER_TORCH_INDEX) and the grader's
#                        torch extra are installed
#   GRADER_TORCH_SPEC    torch==2.13.0
#   GRADER_TORCH_INDEX   https://download.pytorch.org/whl/cpu   (the CPU wheels; PyPI's are CUDA builds of GBs)
#   GRADER_CACHE_DIR     $AUTOGRADER_ROOT/cache       the grader's cache; run_autograder uses the same default
#   GRADER_WARMUP_DIR    $GRADER_SOURCE_DIR/solutions  correct solutions (one .py per framework), graded
#                        once here with run_autograder's settings so that the case cache and the JAX
#                        compile cache are warm for the first learner; each must get full marks
#   GRADER_RUN_USER      (unset)                      a user other than root who runs run_autograder:
#                        the caches are chowned to them
#   GRADER_SETUP_STEPS   "python install secret warm" the steps to run (tests run them one by one)
#
# The seed secret: without a seed_secret in the zip, the "secret" step makes one
# ($AUTOGRADER_ROOT/seed_secret, root's alone, outside the submission's sandbox view), which
# run_autograder then uses: a graded run never uses the published seed, whose cases and answers
# any learner can tabulate with one local run. Regrades on this image reproduce the cases.
#
# Every Python runs in isolated mode (-I): nothing is imported from the working directory.
set -euo pipefail

ROOT="${AUTOGRADER_ROOT:-/autograder}"
SOURCE="${GRADER_SOURCE_DIR:-$ROOT/source}"
VENV="$ROOT/venv"
STEPS=" ${GRADER_SETUP_STEPS:-python install secret warm} "
FRAMEWORKS="${GRADER_FRAMEWORKS:-numpy jax}"
export GRADER_CACHE_DIR="${GRADER_CACHE_DIR:-$ROOT/cache}"
# Pin a tag or commit, so that every submission is graded by the same grader.
SPEC="${GRADER_PIP_SPEC:-grader @ git+https://github.com/YOUR-ORG/grader.git@v0.2.0}"
for wheel in "$SOURCE"/grader-*.whl; do
  if [ -f "$wheel" ]; then SPEC="$wheel"; fi
done
if [ -f "$SOURCE/grader-src/pyproject.toml" ]; then
  SPEC="$SOURCE/grader-src"
fi

say() { echo "setup.sh: $*" >&2; }

# -- step "python": the first candidate that runs, is 3.11+ and makes a venv with pip ----------
# A candidate is tried by running it, never by its name alone: a python3.13 that is on PATH but
# does not start (a broken alternative, a missing library) is skipped, not an error.
make_venv() {
  local candidate
  for candidate in ${GRADER_PYTHON:-} python3.13 python3.12 python3.11 python3; do
    command -v "$candidate" >/dev/null 2>&1 || continue
    if ! "$candidate" -I -c 'import sys; assert sys.version_info >= (3, 11)' >/dev/null 2>&1; then
      say "skipping $candidate: it does not run, or is older than 3.11"
      continue
    fi
    rm -rf "$VENV"
    # the venv module without ensurepip (Debian's python3.X-venv) fails here: try the next
    if "$candidate" -I -m venv "$VENV" >/dev/null 2>&1 && "$VENV/bin/python" -I -m pip --version >/dev/null 2>&1; then
      say "using $candidate ($("$VENV/bin/python" -I -c 'import sys; print(sys.version.split()[0])')) for $VENV"
      return 0
    fi
    say "skipping $candidate: it cannot make a virtual environment with pip (no ${candidate##*/}-venv?)"
    rm -rf "$VENV"
  done
  return 1
}

install_python() {
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  if ! apt-get install -y --no-install-recommends python3.11 python3.11-venv; then
    say "Ubuntu's python3.11 is not available here; trying the deadsnakes PPA"
    apt-get install -y --no-install-recommends software-properties-common
    add-apt-repository -y ppa:deadsnakes/ppa
    apt-get update
    apt-get install -y --no-install-recommends python3.11 python3.11-venv
  fi
}

if [[ "$STEPS" == *" python "* ]]; then
  if ! make_venv; then
    say "no Python 3.11+ with venv found; installing python3.11 with apt"
    install_python
    make_venv || { say "error: no usable Python 3.11+ even after installing python3.11"; exit 1; }
  fi
fi

# -- step "install": the grader (and torch when the course uses it) ------------------------------
with_extra() {  # $1 with the pip extra $2: "grader @ URL" -> "grader[torch] @ URL", a path -> "path[torch]"
  case "$1" in
    "grader @ "*) echo "grader[$2] @ ${1#grader @ }" ;;
    *) echo "$1[$2]" ;;
  esac
}

if [[ "$STEPS" == *" install "* ]]; then
  "$VENV/bin/python" -I -m pip install --upgrade pip
  if [[ " $FRAMEWORKS " == *" torch "* ]]; then
    "$VENV/bin/python" -I -m pip install "${GRADER_TORCH_SPEC:-torch==2.13.0}" \
      --index-url "${GRADER_TORCH_INDEX:-https://download.pytorch.org/whl/cpu}"
    SPEC="$(with_extra "$SPEC" torch)"
  fi
  "$VENV/bin/python" -I -m pip install "$SPEC"
  # fail the image build now, not at the first submission, if the install is broken
  "$VENV/bin/python" -I -m grader problems
fi

# -- step "secret": a seed secret when the zip brings none ---------------------------------------
if [[ "$STEPS" == *" secret "* ]] && [ ! -e "$SOURCE/seed_secret" ] && [ ! -e "$ROOT/seed_secret" ]; then
  (umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$ROOT/seed_secret")
  say "made a seed secret in $ROOT/seed_secret (the zip has none): learners cannot know the cases beforehand"
fi

# -- step "warm": grade each solution once, exactly as run_autograder grades a learner ------------
# The case cache (keyed by problem, seed, case count, dtypes and versions) and the compile caches
# are then filled for run_autograder's settings. Runs seeded from a seed secret are never cached
# (their cases are each learner's own): with seed_secret in the zip, only the compile caches help.
if [[ "$STEPS" == *" warm "* ]]; then
  WARMUP="${GRADER_WARMUP_DIR:-$SOURCE/solutions}"
  RUN="$SOURCE/run_autograder"
  [ -f "$RUN" ] || RUN="$(dirname -- "${BASH_SOURCE[0]}")/run_autograder"
  mkdir -p "$GRADER_CACHE_DIR"
  shopt -s nullglob
  solutions=("$WARMUP"/*.py)
  if [ ${#solutions[@]} -eq 0 ]; then
    say "note: no solutions in $WARMUP: the caches stay cold, and the first learner of each framework waits for them"
  fi
  for solution in "${solutions[@]}"; do
    scratch="$(mktemp -d)"
    mkdir -p "$scratch/submission"
    cp -- "$solution" "$scratch/submission/"
    GRADER_SUBMISSION_DIR="$scratch/submission" GRADER_RESULTS_DIR="$scratch/results" \
      GRADER_WORK_DIR="$scratch/work" bash "$RUN"
    if ! "$VENV/bin/python" -I -c '
import json, sys
r = json.load(open(sys.argv[1], encoding="utf-8"))
sys.exit(0 if r["tests"] and all(t.get("status") == "passed" for t in r["tests"]) else 1)' "$scratch/results/results.json"
    then
      say "error: the solution ${solution##*/} does not pass (see $scratch/results/results.json): fix it or remove it from $WARMUP"
      exit 1
    fi
    say "warmed the caches with ${solution##*/}"
    rm -rf "$scratch"
  done
  # Gradescope runs run_autograder as root, like this set-up, so the caches are its own. If another
  # user runs it, hand them over: never make them world-readable (the grader keeps its cache
  # folders 0700, docs/security.md)
  if [ -n "${GRADER_RUN_USER:-}" ]; then
    chown -R "$GRADER_RUN_USER" "$GRADER_CACHE_DIR"
  fi
fi
