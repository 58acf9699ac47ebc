#!/usr/bin/env bash
# Installs ONNX Runtime's Python package (its quantizer, onnxruntime.quantization), onnx and sympy
# (the quantizer's pre-processing: symbolic shape inference),
# pinned, into a virtual environment under ~/.cache/braid, for the int8 zoo
# (bench/zoo/gen_zoo_int8.py: static QDQ and dynamic quantization of FP32 zoo models, and
# ONNX Runtime's outputs on them as the reference). Prints the venv's python on stdout.
#
# Idempotent: a stamp file marks a complete install; with it the script returns at once
# without the network. pip's cache lives under ~/.cache/braid/pip.
#
#   BRAID_ORT_PY_VERSION   default 1.32.0
#   BRAID_ONNX_PY_VERSION  default 1.23.2
#   BRAID_QUANT_VENV       default ~/.cache/braid/quant-venv
#
# Nothing is committed: the venv lives under ~/.cache/braid only.
set -euo pipefail

version="${BRAID_ORT_PY_VERSION:-1.32.0}"
onnx_version="${BRAID_ONNX_PY_VERSION:-1.23.2}"
. "$(dirname "$0")/lib/pip_venv.sh"
pip_venv fetch_quant "${BRAID_QUANT_VENV:-$HOME/.cache/braid/quant-venv}" "quant-$version-$onnx_version-sympy" \
  'import onnxruntime.quantization, onnx, numpy, sympy' "onnxruntime==$version" "onnx==$onnx_version" numpy sympy
