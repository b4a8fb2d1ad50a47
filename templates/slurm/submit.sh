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
read -r -a extra <<< "${SBATCH_ARGS:-}"
# A task that asks for more CPUs than any node has is never scheduled: the array would wait
# forever while this script said "submitted". Ask sinfo for the nodes' CPUs (of the partition
# SBATCH_ARGS names) and refuse before anything is queued.
want="$(sed -n 's/^#SBATCH --cpus-per-task=\([0-9][0-9]*\).*/\1/p' "$here/grade-shard.sbatch" | head -n 1)"
part=()
for ((i = 0; i < ${#extra[@]}; i++)); do
  a="${extra[$i]}"; next="${extra[$((i + 1))]:-}"
  case "$a" in
    --cpus-per-task=*) want="${a#*=}" ;;
    --cpus-per-task|-c) want="$next" ;;
    -c[0-9]*) want="${a#-c}" ;;
    --partition=*) part=(--partition "${a#*=}") ;;
    --partition|-p) part=(--partition "$next") ;;
    -p?*) part=(--partition "${a#-p}") ;;
  esac
done
if [ -n "$want" ] && command -v sinfo >/dev/null 2>&1; then
  if cpus="$(sinfo -h -N -o %c "${part[@]}" 2>/dev/null)" && [ -n "$cpus" ]; then
    most="$(printf '%s\n' "$cpus" | tr -dc '0-9\n' | sort -n | tail -n 1)"
    if [ -n "$most" ] && [ "$want" -gt "$most" ] 2>/dev/null; then
      where="${part[1]:+partition ${part[1]}}"
      echo "submit.sh: error: each task asks for $want CPUs (--cpus-per-task) but no node of ${where:-the cluster} has more than $most, so the array would never start; pass SBATCH_ARGS=\"--cpus-per-task=$most\" or edit grade-shard.sbatch" >&2
      exit 2
    fi
  else
    echo "submit.sh: note: sinfo did not answer; not checked that a node has the $want CPUs a task asks for" >&2
  fi
fi
mkdir -p "$GRADER_OUT"

# --parsable prints "jobid" or "jobid;cluster"
array="$(sbatch --parsable --export=ALL --array="0-$((shards - 1))" --chdir="$GRADER_OUT" "${extra[@]}" \
  "$here/grade-shard.sbatch")"
array="${array%%;*}"
merge="$(sbatch --parsable --export=ALL --dependency="afterok:$array" --chdir="$GRADER_OUT" "${extra[@]}" \
  "$here/merge.sbatch")"
merge="${merge%%;*}"
echo "submitted $shards shards as job $array and their merge as job $merge; the class's grades will be in $GRADER_OUT/merged"
