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
. "$(dirname "$0")/lib/pip_venv.sh"
pip_venv fetch_tritonclient "${BRAID_CLIENTS_VENV:-$HOME/.cache/braid/clients-venv}" "tritonclient-$version" 'import tritonclient.grpc, tritonclient.http' "tritonclient[grpc,http]==$version"
