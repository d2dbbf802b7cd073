#!/usr/bin/env bash
# The files that carry the paper-protocol sweep to the next checkout (its run folders are git-ignored):
# every run's config.json, metrics.jsonl and README.md (a finished run counts as done from its metrics
# alone: mechinit.sweeps.grid.finished), and the resume point of a run that is not finished (d_model 128:
# a few MB). Weights and snapshots stay behind (about 100 MB for the 54 runs).
# usage, after pausing the sweep (pkill -TERM -f "mechinit sweep"):
#   git add -f $(bash experiments/phase-diagram/carry.sh)
# NAME=paper-protocol-avx2 (say) carries a slice run into its own folder by paper-protocol.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
name=${NAME:-paper-protocol}
for run in experiments/phase-diagram/$name/runs/*/; do
  [ -f "$run/config.json" ] || continue
  for f in config.json metrics.jsonl README.md; do [ -f "$run/$f" ] && echo "$run$f"; done
  if [ ! -f "$run/model.safetensors" ] && [ -f "$run/resume/state.safetensors" ]; then
    echo "${run}resume/state.json"; echo "${run}resume/state.safetensors"
  fi
done
[ -f "experiments/phase-diagram/$name/sweep.json" ] && echo "experiments/phase-diagram/$name/sweep.json"
exit 0
