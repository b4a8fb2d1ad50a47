#!/bin/bash
# Interleaved rounds of the two floors and a warm `grader check` of this tree and of another
# checkout (a git worktree of an older commit), so that both see the same load:
#   git worktree add /tmp/before <commit> && benchmarks/warm_interleaved.sh /tmp/before [rounds]
# Prints "what wall:user:sys" per run, then the load average.
set -u
BEFORE=${1:?usage: warm_interleaved.sh BEFORE_TREE [ROUNDS]}
ROUNDS=${2:-5}
HERE=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-$HERE/.venv/bin/python}
T="/usr/bin/time -f %e:%U:%S"
cd /tmp || exit 2
for _ in $(seq "$ROUNDS"); do
  echo -n "numpy_floor "; $T "$PY" -c "import numpy" 2>&1 | tail -1
  echo -n "jax_floor "; $T "$PY" -c "import jax, jax.numpy as jnp; jnp.ones(3).block_until_ready()" 2>&1 | tail -1
  echo -n "after "; (cd "$HERE" && $T "$PY" -m grader check submissions/correct_numpy.py -q 2>&1 >/dev/null | tail -1)
  echo -n "before "; (cd "$BEFORE" && $T "$PY" -m grader check submissions/correct_numpy.py -q 2>&1 >/dev/null | tail -1)
done
uptime
