#!/usr/bin/env bash
# Install (scripts/install.sh) and run the whole test suite. The report tests render HTML in headless
# Chromium (Debian's chromium and chromium-driver); on a machine without them they are deselected here,
# with a warning, rather than failed (.ci/run installs them and runs everything).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then
  .venv/bin/python -m pytest "$@"
else
  echo "[test] WARNING: chromium / chromedriver not found: the browser tests are deselected (apt-get install chromium chromium-driver)"
  .venv/bin/python -m pytest -m "not browser" "$@"
fi
