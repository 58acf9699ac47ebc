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
cache="${HOME:?fetch_openvino: HOME is not set}/.cache/braid"
venv="${BRAID_OV_VENV:-$cache/ov-venv}"
stamp="$venv/.braid-openvino-$version"

if [ -f "$stamp" ] && [ -x "$venv/bin/python" ]; then
  echo "$venv/bin/python"
  exit 0
fi
mkdir -p "$cache"
exec 9>"$cache/.fetch_openvino.lock"
command -v flock >/dev/null && flock 9

if [ ! -x "$venv/bin/python" ]; then
  py=""
  for p in python3.11 python3 /usr/bin/python3; do
    command -v "$p" >/dev/null && "$p" -c 'import venv, ensurepip' 2>/dev/null && { py="$p"; break; }
  done
  [ -n "$py" ] || { echo "fetch_openvino: no Python with the venv module (apt-get install python3-venv)" >&2; exit 1; }
  echo "fetch_openvino: creating $venv with $py" >&2
  "$py" -m venv "$venv"
fi
echo "fetch_openvino: pip install openvino==$version numpy" >&2
PIP_CACHE_DIR="$cache/pip" "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  "openvino==$version" numpy >&2
"$venv/bin/python" -c 'import openvino, numpy; openvino.Core()' >&2
touch "$stamp"
echo "$venv/bin/python"
