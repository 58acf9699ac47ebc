#!/usr/bin/env bash
# Installs TensorFlow's CPU wheel (PyPI: tensorflow-cpu, pinned) into a virtual environment
# under ~/.cache/braid, for braid's TensorFlow fallback engine (backends/tf), the tests that
# run it on the real library, and the generators that need TensorFlow. Prints the path of
# the C API library (site-packages/tensorflow/libtensorflow_cc.so.2) on stdout.
#
# Idempotent: a stamp file in the venv marks a complete install, and with it the script
# returns at once without touching the network. A venv that already holds the pinned wheel
# (installed by hand) is checked offline and stamped, not reinstalled. The wheel (~600 MB) is
# downloaded once: pip's cache lives under ~/.cache/braid/pip. An interrupted install leaves
# no stamp, so the next run completes it.
#
#   BRAID_TF_VERSION  tensorflow-cpu version (default 2.21.0)
#   BRAID_TF_VENV     the venv (default ~/.cache/braid/tf-venv: where braid looks by default;
#                     elsewhere, point BRAID_LIBTENSORFLOW at the printed path)
#   BRAID_TF_BASE_PYTHON   the interpreter that creates the venv (default: the first of python3.11,
#                     python3, /usr/bin/python3 that has venv and ensurepip)
#
# Nothing is committed: the venv and the cache live under ~/.cache/braid only.
set -euo pipefail

version="${BRAID_TF_VERSION:-2.21.0}"
cache="${HOME:?fetch_tf: HOME is not set}/.cache/braid"
venv="${BRAID_TF_VENV:-$cache/tf-venv}"
stamp="$venv/.braid-tensorflow-cpu-$version"

# The C API library of the venv (first python3.* directory that has it), or nothing.
find_lib() {
  local f
  for f in "$venv"/lib/python3.*/site-packages/tensorflow/libtensorflow_cc.so.2; do
    [ -s "$f" ] && [ -s "$(dirname "$f")/libtensorflow_framework.so.2" ] && { echo "$f"; return 0; }
  done
  return 1
}

# The installed tensorflow-cpu version, read from its metadata (no TensorFlow import, no network).
installed_version() {
  [ -x "$venv/bin/python" ] || return 1
  "$venv/bin/python" - <<'PY' 2>/dev/null
import importlib.metadata as m
print(m.version("tensorflow-cpu"))
PY
}

# Fast path: a stamped, complete install.
if [ -f "$stamp" ] && lib="$(find_lib)"; then
  echo "$lib"
  exit 0
fi

mkdir -p "$cache"
# One install at a time (setup.sh may run from several shells).
exec 9>"$cache/.fetch_tf.lock"
command -v flock >/dev/null && flock 9

if [ "$(installed_version || true)" = "$version" ] && lib="$(find_lib)"; then
  echo "fetch_tf: $venv already holds tensorflow-cpu $version; stamping it" >&2
  echo "$lib" >"$stamp"
  echo "$lib"
  exit 0
fi

pick_python() {
  local p
  for p in ${BRAID_TF_BASE_PYTHON:-} python3.11 python3 /usr/bin/python3; do
    command -v "$p" >/dev/null || continue
    "$p" -c 'import sys, venv, ensurepip; sys.exit(not ((3, 9) <= sys.version_info[:2] <= (3, 13)))' \
      2>/dev/null && { echo "$p"; return 0; }
  done
  return 1
}

if [ ! -x "$venv/bin/python" ]; then
  py="$(pick_python)" || {
    echo "fetch_tf: no Python 3.9-3.13 with the venv module (apt-get install python3-venv)" >&2
    exit 1
  }
  echo "fetch_tf: creating $venv with $py ($("$py" --version 2>&1))" >&2
  "$py" -m venv "$venv"
fi

echo "fetch_tf: pip install tensorflow-cpu==$version into $venv (a ~600 MB wheel, cached in $cache/pip)" >&2
PIP_CACHE_DIR="$cache/pip" PIP_DISABLE_PIP_VERSION_CHECK=1 \
  "$venv/bin/python" -m pip install --quiet --progress-bar off "tensorflow-cpu==$version" >&2

[ "$(installed_version || true)" = "$version" ] ||
  { echo "fetch_tf: pip finished but tensorflow-cpu $version is not in $venv" >&2; exit 1; }
lib="$(find_lib)" ||
  { echo "fetch_tf: tensorflow-cpu $version has no libtensorflow_cc.so.2 under $venv/lib" >&2; exit 1; }
echo "$lib" >"$stamp"
echo "fetch_tf: tensorflow-cpu $version -> $lib" >&2
echo "$lib"
