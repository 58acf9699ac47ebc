#!/usr/bin/env bash
# Generate braid's reference models (ONNX + PyTorch inputs/outputs) into the model cache,
# ${BRAID_MODEL_CACHE:-~/.cache/braid/models}. Cached: a second run returns at once.
#   scripts/gen_models.sh [--bench] [--only NAME ...] [--out DIR] [--force] [--list]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec /usr/bin/python3 "$here/../tests/runtime/models/gen_models.py" "$@"
