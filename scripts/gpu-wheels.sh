#!/usr/bin/env bash
# Fetch, here, the wheels that the lent GPU machine lacks (its image has torch 2.11 on Python 3.12 and
# no network; docs/benchmarks.md): TransformerLens 3.9 and the packages it imports that the image
# does not hold. They land in .whl/ (ignored by git); carry it: device run with carry [".whl"] and
# the command `bash scripts/gpu-check.sh`, which installs them with --no-index --no-deps.
# Not yet exercised on a lent machine (none was lent when it was written).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .whl
python3 -m pip download -q --dest .whl --no-deps --only-binary=:all: --python-version 3.12 \
  --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 --platform any \
  "transformer-lens>=3.9,<4" beartype better-abc datasets dill multiprocess fancy-einsum plotly typeguard \
  transformers-stream-generator pydantic pydantic-core annotated-types typing-inspection wandb platformdirs sniffio tzdata
du -sh .whl
