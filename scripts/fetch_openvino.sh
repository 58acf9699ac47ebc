#!/usr/bin/env bash
# Installs OpenVINO (PyPI openvino, pinned) and numpy into a virtual environment under
# ~/.cache/braid, for the zoo benchmark's second peer (bench/zoo/ov_bench.py). Prints the
# venv's python on stdout.
#
# Idempotent: a stamp file marks a complete install; with it the script returns at once
# without the network (so it reruns offline once cached). pip's cache lives under
# ~/.cache/braid/pip.
#
#   BRAID_OPENVINO_VERSION  default 2026.4.1
#   BRAID_OV_VENV           default ~/.cache/braid/ov-venv
#
# Nothing is committed: the venv lives under ~/.cache/braid only.
set -euo pipefail

version="${BRAID_OPENVINO_VERSION:-2026.4.1}"
. "$(dirname "$0")/lib/pip_venv.sh"
pip_venv fetch_openvino "${BRAID_OV_VENV:-$HOME/.cache/braid/ov-venv}" "openvino-$version" 'import openvino, numpy; openvino.Core()' "openvino==$version" numpy
