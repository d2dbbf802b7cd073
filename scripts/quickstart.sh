#!/usr/bin/env bash
# Install, train the small-init reference model on CPU and print its (4,3) verdict.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
out=runs/quickstart-small-init
if [ -f "$out/model.safetensors" ]; then
  echo "already trained: $out (delete it to train again)"
else
  [ -d "$out" ] && .venv/bin/mechinit train --resume "$out" || .venv/bin/mechinit train --preset small-init --out "$out"
fi
.venv/bin/python - "$out" <<'PY'
import sys
from mechinit.runs import read_metrics
row = read_metrics(sys.argv[1])[-1]
p = row["pairs"]["4,3"]
print(f"(4,3) verdict: {p['label']}  (inferential acc {p['inferential']:.3f}, symmetric acc {p['symmetric']:.3f}, "
      f"seen-pair test acc {row['seen_test_acc']:.3f})")
PY
# the zoo ships the reference pair: probe small vs large init side by side (offline)
.venv/bin/mechinit probe small-init large-init --out runs/quickstart-probes --quiet
