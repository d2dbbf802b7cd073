#!/usr/bin/env bash
# Create .venv (if missing) and install mechinit with its test extra. On a machine without an NVIDIA
# GPU, torch comes as the CPU build — a local "+cpu" wheel when pip's find-links has one, else from
# PyTorch's CPU index — so no multi-GB CUDA build is ever pulled there.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
say() { echo "[install] $*"; }
say "1/3 virtual environment .venv"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
# pip's own progress lines (one per package) show what it is doing; the first install takes minutes. While
# it unpacks packages it prints nothing (45 s for the whole set), so a line every 15 s says it is still at work.
pip() {
  local t0 beat status
  t0=$(date +%s)
  ( while sleep 15 && kill -0 $$ 2>/dev/null; do say "    pip is still at work ($(( $(date +%s) - t0 )) s)"; done ) &
  beat=$!
  set +e
  .venv/bin/python -m pip --disable-pip-version-check "$@" --progress-bar off 2>&1 \
    | grep -v -E --line-buffered '^(Requirement already satisfied|WARNING: Location|  Using cached|  Downloading|  Obtaining)'
  status=${PIPESTATUS[0]}
  set -e
  kill "$beat" 2>/dev/null || true
  wait "$beat" 2>/dev/null || true
  return "$status"
}
say "2/3 torch (CPU build unless an NVIDIA GPU is present)"
if .venv/bin/python -c "import torch" 2>/dev/null; then
  say "    torch already installed: $(.venv/bin/python -c 'import torch; print(torch.__version__)')"
elif command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  pip install "torch>=2.6"
else
  wheels=$(mktemp -d)
  if .venv/bin/python -m pip download -q --disable-pip-version-check --no-index --no-deps --only-binary=:all: -d "$wheels" "torch>=2.6" 2>/dev/null && ls "$wheels"/torch-*+cpu*.whl >/dev/null 2>&1; then
    pip install "$wheels"/torch-*+cpu*.whl
  else
    pip install "torch>=2.6" --index-url https://download.pytorch.org/whl/cpu --extra-index-url https://pypi.org/simple
  fi
  rm -rf "$wheels"
fi
say "3/3 mechinit and its dependencies (TransformerLens, plotly, ...; the first time takes a few minutes)"
pip install -e ".[dev]"
.venv/bin/python -c "import mechinit" || { say "installation failed"; exit 1; }
say "done. Run the CLI as .venv/bin/mechinit (or 'source .venv/bin/activate' first, then 'mechinit --help')"
