#!/usr/bin/env bash
# Installs NVIDIA's Triton Python client (PyPI tritonclient[grpc,http], pinned) into a virtual
# environment under ~/.cache/braid, for the e2e tests that drive braidd with the real client,
# unchanged (tests/e2e/test_tritonclient.py). Prints the venv's python on stdout.
#
# Idempotent: a stamp file marks a complete install; with it the script returns at once
# without the network. pip's cache lives under ~/.cache/braid/pip.
#
#   BRAID_TRITONCLIENT_VERSION  default 2.73.0
#   BRAID_CLIENTS_VENV          default ~/.cache/braid/clients-venv
#
# Nothing is committed: the venv lives under ~/.cache/braid only.
set -euo pipefail

version="${BRAID_TRITONCLIENT_VERSION:-2.73.0}"
cache="${HOME:?fetch_tritonclient: HOME is not set}/.cache/braid"
venv="${BRAID_CLIENTS_VENV:-$cache/clients-venv}"
stamp="$venv/.braid-tritonclient-$version"

if [ -f "$stamp" ] && [ -x "$venv/bin/python" ]; then
  echo "$venv/bin/python"
  exit 0
fi
mkdir -p "$cache"
exec 9>"$cache/.fetch_tritonclient.lock"
command -v flock >/dev/null && flock 9

if [ ! -x "$venv/bin/python" ]; then
  py=""
  for p in python3.11 python3 /usr/bin/python3; do
    command -v "$p" >/dev/null && "$p" -c 'import venv, ensurepip' 2>/dev/null && { py="$p"; break; }
  done
  [ -n "$py" ] || { echo "fetch_tritonclient: no Python with the venv module (apt-get install python3-venv)" >&2; exit 1; }
  echo "fetch_tritonclient: creating $venv with $py" >&2
  "$py" -m venv "$venv"
fi
echo "fetch_tritonclient: pip install tritonclient[grpc,http]==$version" >&2
PIP_CACHE_DIR="$cache/pip" "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  "tritonclient[grpc,http]==$version" >&2
"$venv/bin/python" -c 'import tritonclient.grpc, tritonclient.http' >&2
touch "$stamp"
echo "$venv/bin/python"
