#!/usr/bin/env bash
# Gradescope autograder set-up: install Python 3.11+ and the grader, once, when Gradescope builds
# the autograder image (as root; the autograder zip's files are then in /autograder/source).
#
#   AUTOGRADER_ROOT     /autograder
#   GRADER_SOURCE_DIR   $AUTOGRADER_ROOT/source      the unpacked autograder zip
#   GRADER_PIP_SPEC     what pip installs (below); a grader-*.whl or a grader-src/ folder in the zip wins
#   GRADER_PYTHON       the first of python3.13, python3.12, python3.11 found (apt installs 3.11 if none)
#
# The grader goes into a virtual environment, $AUTOGRADER_ROOT/venv, which run_autograder uses.
# Every Python runs in isolated mode (-I): nothing is imported from the working directory.
set -euo pipefail

ROOT="${AUTOGRADER_ROOT:-/autograder}"
SOURCE="${GRADER_SOURCE_DIR:-$ROOT/source}"
# Pin a tag or commit, so that every submission is graded by the same grader.
SPEC="${GRADER_PIP_SPEC:-grader @ git+https://github.com/YOUR-ORG/grader.git@v0.1.0}"
for wheel in "$SOURCE"/grader-*.whl; do
  if [ -f "$wheel" ]; then SPEC="$wheel"; fi
done
if [ -f "$SOURCE/grader-src/pyproject.toml" ]; then
  SPEC="$SOURCE/grader-src"
fi

PYTHON="${GRADER_PYTHON:-}"
if [ -z "$PYTHON" ]; then
  for candidate in python3.13 python3.12 python3.11; do
    if command -v "$candidate" >/dev/null 2>&1; then PYTHON="$candidate"; break; fi
  done
fi
if [ -z "$PYTHON" ]; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3.11 python3.11-venv git
  PYTHON=python3.11
fi
# ensurepip is a separate Debian package (python3.X-venv); install it when venv cannot bootstrap pip
if ! "$PYTHON" -I -c "import ensurepip" >/dev/null 2>&1; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$(basename "$PYTHON")-venv"
fi

"$PYTHON" -I -m venv "$ROOT/venv"
"$ROOT/venv/bin/python" -I -m pip install --upgrade pip
"$ROOT/venv/bin/python" -I -m pip install "$SPEC"
# fail the image build now, not at the first submission, if the install is broken
"$ROOT/venv/bin/python" -I -m grader problems
