#!/usr/bin/env bash
# Phase diagram by the paper's protocol (issue 11, item 5), reduced to about 7 CPU-hours:
# γ {0.3, 0.6, 1.0} × depth {2, 4} × seeds {0, 1, 2} × lr {5e-4, 1e-3, 2e-3} on the small-init
# preset (d_model 128, 50k sequences, 20 epochs), 54 runs. Cells take the best lr per mapping
# (--best-over train.lr), then mean ± std over the seeds; every run also records each pair's
# maximum over training. One run at a time on one thread, niced; resumable: rerun this script in a
# later session (finished runs are skipped, stopped runs resume from their resume points). JOBS=2 bash ...
# trains two runs at a time when the sweep has both cores (one thread each; the results do not depend on it;
# SIGTERM to the sweep stops both runs at a resume point). The run
# folders are git-ignored; `git add -f $(bash experiments/phase-diagram/carry.sh)` carries them to the next
# checkout without weights (config, metrics and card; a finished run counts as done from its metrics).
# The phase diagram so far, at any time (trains nothing; writes sweep.json and report.html):
#   bash experiments/phase-diagram/paper-protocol.sh --reduce-only && python experiments/phase-diagram/table.py experiments/phase-diagram/paper-protocol
# A slice of the grid on the other CPU kernel set (the verdicts must not hang on float noise), e.g.
#   ATEN_CPU_CAPABILITY=avx2 LAYERS=4 GAMMAS=0.6 NAME=paper-protocol-avx2 JOBS=2 bash experiments/phase-diagram/paper-protocol.sh
# (same runs, same ids, their own folder experiments/phase-diagram/NAME and log; `--reduce-only` with the same variables).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
name=${NAME:-paper-protocol}
sweep=(sweep --preset cpu-small-init
  --set "sweep.model.n_layers=${LAYERS:-2,4}" --set "sweep.init.gamma=${GAMMAS:-0.3,0.6,1.0}" --set sweep.train.seed=0,1,2
  --set sweep.train.lr=5e-4,1e-3,2e-3 --best-over train.lr --set train.resume_every=100
  --ensemble off --jobs "${JOBS:-1}" --out "$root/experiments/phase-diagram/$name" --quiet)
if [ "${1:-}" = --reduce-only ]; then
  exec "$root/.venv/bin/mechinit" "${sweep[@]}" --reduce-only
fi
echo 19 > /proc/self/autogroup 2>/dev/null || true  # background priority also across autogroups (setsid)
mkdir -p "$root/experiments/phase-diagram/logs"
OMP_NUM_THREADS=1 nice -n 19 "$root/.venv/bin/mechinit" "${sweep[@]}" >>"$root/experiments/phase-diagram/logs/$name.log" 2>&1
