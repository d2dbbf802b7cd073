#!/usr/bin/env bash
# Create .venv (if missing) and install mechinit with its test extra. On a machine without an NVIDIA
# GPU, torch comes as the CPU build — a local "+cpu" wheel when pip's find-links has one, else from
# PyTorch's CPU index — so no multi-GB CUDA build is ever pulled there.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
pip() { .venv/bin/python -m pip --disable-pip-version-check -q "$@"; }
if .venv/bin/python -c "import torch" 2>/dev/null; then
  :
elif command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  pip install "torch>=2.6"
else
  wheels=$(mktemp -d)
  if pip download --no-index --no-deps --only-binary=:all: -d "$wheels" "torch>=2.6" 2>/dev/null && ls "$wheels"/torch-*+cpu*.whl >/dev/null 2>&1; then
    pip install "$wheels"/torch-*+cpu*.whl
  else
    pip install "torch>=2.6" --index-url https://download.pytorch.org/whl/cpu --extra-index-url https://pypi.org/simple
  fi
  rm -rf "$wheels"
fi
pip install -e ".[dev]"
