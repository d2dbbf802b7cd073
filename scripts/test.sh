#!/usr/bin/env bash
# Install (scripts/install.sh) and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
.venv/bin/python -m pytest "$@"
