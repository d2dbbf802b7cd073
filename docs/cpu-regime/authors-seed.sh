#!/usr/bin/env bash
# The authors' γ 0.8 run replayed with their seed (docs/cpu-regime/authors_seed.py): niced, one thread, in
# the background; resumable (rerun this script); stop with pkill -TERM -f "authors_seed.py train".
# Extra arguments go to the script, e.g. `--threads 2` when it has both cores to itself.
set -uo pipefail
echo 19 > /proc/self/autogroup 2>/dev/null || true
root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/docs/cpu-regime/paper-width/g0.8-authors-seed"
log="$root/docs/cpu-regime/logs/paper-width-g0.8-authors-seed.log"
mkdir -p "$root/docs/cpu-regime/logs"
if [ -f "$out/resume/state.json" ] && [ ! -f "$out/resume/state.safetensors" ]; then
  echo "g0.8-authors-seed: resume/state.safetensors is missing; restore it first" | tee -a "$log" >&2; exit 1
fi
resume=(); [ -f "$out/resume/state.json" ] && resume=(--resume)
[ ${#resume[@]} -eq 0 ] && rm -rf "$out"
OMP_NUM_THREADS=1 nice -n 19 "$root/.venv/bin/python" "$root/docs/cpu-regime/authors_seed.py" train "${resume[@]}" "$@" >>"$log" 2>&1
