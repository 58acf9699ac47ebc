# Sourced by the fetch scripts that pip-install a pinned tool into a virtual environment
# under ~/.cache/braid (fetch_openvino.sh, fetch_tritonclient.sh, fetch_quant.sh).
#
#   pip_venv TOOL VENV STAMP CHECK PACKAGE...
#
# Prints VENV's python on stdout. With VENV/.braid-STAMP present it returns at once, without
# the network (reruns work offline once cached); else, under a lock, it creates VENV with the
# first Python that has the venv module, pip-installs PACKAGEs (pip's cache:
# ~/.cache/braid/pip), runs the Python statement CHECK, and writes the stamp. Messages go to
# stderr, prefixed with TOOL; any failure exits the calling script.

pip_venv() {
  local tool="$1" venv="$2" stamp="$2/.braid-$3" check="$4"
  shift 4
  local cache="${HOME:?$tool: HOME is not set}/.cache/braid"
  if [ -f "$stamp" ] && [ -x "$venv/bin/python" ]; then
    echo "$venv/bin/python"
    return 0
  fi
  mkdir -p "$cache"
  exec 9>"$cache/.$tool.lock"
  command -v flock >/dev/null && flock 9
  if [ ! -x "$venv/bin/python" ]; then
    local py="" p
    for p in python3.11 python3 /usr/bin/python3; do
      command -v "$p" >/dev/null && "$p" -c 'import venv, ensurepip' 2>/dev/null && { py="$p"; break; }
    done
    [ -n "$py" ] || { echo "$tool: no Python with the venv module (apt-get install python3-venv)" >&2; exit 1; }
    echo "$tool: creating $venv with $py" >&2
    "$py" -m venv "$venv"
  fi
  echo "$tool: pip install $*" >&2
  PIP_CACHE_DIR="$cache/pip" "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@" >&2
  "$venv/bin/python" -c "$check" >&2
  touch "$stamp"
  echo "$venv/bin/python"
}
