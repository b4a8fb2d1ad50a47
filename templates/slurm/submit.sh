#!/usr/bin/env bash
# Grade a class on a Slurm cluster: a job array whose task i grades shard i+1 of N
# (`grader grade --shard`), and a merge job (`grader merge`) that starts once every task has
# succeeded (--dependency=afterok on the array).
#
#   usage: submit.sh SUBMISSIONS [OUT]      (OUT: ./grades; the class's results go to OUT/merged)
#
#   GRADER_SHARDS    8                      the number of array tasks (shards)
#   GRADER_PROBLEM   (unset)                the problem id; unset: the only problem the grader knows
#   GRADER_ARGS      (unset)                more `grader grade` flags, e.g. "--seed-secret /path/to/secret"
#   GRADER           python3 -I -m grader   the grader command (activate its venv before submitting;
#                                           the jobs inherit the environment)
#   SBATCH_ARGS      (unset)                more sbatch flags for both jobs, e.g. "--partition=short --account=cs101"
#
# Each task's resources are the #SBATCH lines of grade-shard.sbatch (a task grades its learners
# --jobs $SLURM_CPUS_PER_TASK at a time); edit them there or pass them in SBATCH_ARGS.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 SUBMISSIONS [OUT]" >&2
  exit 2
fi
here="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)"
[ -e "$1" ] || { echo "submit.sh: error: $1 does not exist" >&2; exit 2; }
shards="${GRADER_SHARDS:-8}"
case "$shards" in
  ''|*[!0-9]*|0) echo "submit.sh: error: GRADER_SHARDS must be a whole number of 1 or more, not '$shards'" >&2; exit 2 ;;
esac
GRADER_SUBMISSIONS="$(realpath -- "$1")"
GRADER_OUT="$(realpath -m -- "${2:-grades}")"
export GRADER_SUBMISSIONS GRADER_OUT
# The tasks resume (--resume), so folders of an earlier run with another GRADER_SHARDS would be
# refused by each task (and merge) anyway; say so now, before anything is queued.
for folder in "$GRADER_OUT"/shard-*; do
  [ -d "$folder" ] || continue
  k="${folder##*/shard-}"
  if ! [ "$k" -le "$shards" ] 2>/dev/null \
     || { [ -f "$folder/settings.json" ] && ! grep -qF "\"shard\": \"$k/$shards\"" "$folder/settings.json"; }; then
    echo "submit.sh: error: $folder is from a run with another GRADER_SHARDS than $shards; give a new OUT or remove $GRADER_OUT/shard-*" >&2
    exit 2
  fi
done
mkdir -p "$GRADER_OUT"
read -r -a extra <<< "${SBATCH_ARGS:-}"

# --parsable prints "jobid" or "jobid;cluster"
array="$(sbatch --parsable --export=ALL --array="0-$((shards - 1))" --chdir="$GRADER_OUT" "${extra[@]}" \
  "$here/grade-shard.sbatch")"
array="${array%%;*}"
merge="$(sbatch --parsable --export=ALL --dependency="afterok:$array" --chdir="$GRADER_OUT" "${extra[@]}" \
  "$here/merge.sbatch")"
merge="${merge%%;*}"
echo "submitted $shards shards as job $array and their merge as job $merge; the class's grades will be in $GRADER_OUT/merged"
