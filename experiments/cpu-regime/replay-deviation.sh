#!/usr/bin/env bash
# The `deviation` probe (train-split keys, as the authors log it) on every snapshot of the authors'-seed
# replay that has none yet; each result to experiments/probes/authors-seed-replay/step{N}.json, read by
# progress.py's replay table beside their logged "Deviation Distribution". One thread, niced (the replay
# itself may still be training). usage: bash experiments/cpu-regime/replay-deviation.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
run="$root/experiments/cpu-regime/paper-width/g0.8-authors-seed"
dest="$root/experiments/probes/authors-seed-replay"
mkdir -p "$dest"
shopt -s nullglob
for snap in "$run"/checkpoints/step*.safetensors "$run/model.safetensors"; do
  [ -f "$snap" ] || continue
  name=$(basename "$snap" .safetensors)
  [ "$name" = model ] && name=step$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])["step"])' "$run/metrics.jsonl")  # the final weights: the last step
  [ -f "$dest/$name.json" ] && continue
  tmp=$(mktemp -d)
  OMP_NUM_THREADS=1 nice -n 10 "$root/.venv/bin/mechinit" probe "$snap" --probe deviation --out "$tmp/out" --quiet >/dev/null
  mv "$tmp/out/results.json" "$dest/$name.json"
  rm -rf "$tmp"
  echo "$name: $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(next(iter(r.values()))["deviation"]["headline"])' "$dest/$name.json")"
done
