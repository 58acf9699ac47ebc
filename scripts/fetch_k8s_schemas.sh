#!/usr/bin/env bash
# The validators of deploy/'s manifests (tests/deploy/validate_manifests.py), cached under
# ~/.cache/braid/k8s-venv so the test runs offline:
#   - PyPI kubernetes-validate (pinned): Kubernetes' JSON schemas, strict variants, for every
#     release 1.25 to 1.37, and the jsonschema validator they run on;
#   - PyPI dockerfile (pinned): Docker's own Dockerfile parser (BuildKit's, in Go) for Python,
#     which reads deploy/Dockerfile as `docker build` would;
#   - PyPI kserve (pinned, the wheel only, not installed): KServe's Python SDK, from which
#     tests/deploy/kserve_schema.py writes a JSON schema of KServe's resources
#     (kserve-<version>.schema.json beside the venv's python), since no registry ships
#     KServe's CRDs themselves.
# Prints the venv's python on stdout. Idempotent: a stamp marks a complete install and the
# script then returns at once without the network; an interrupted run leaves no stamp.
#
#   BRAID_K8S_VALIDATE_VERSION  kubernetes-validate version (default 1.37.0)
#   BRAID_KSERVE_VERSION        kserve SDK version (default 0.21.0)
#   BRAID_DOCKERFILE_VERSION    dockerfile parser version (default 3.4.0)
set -euo pipefail

kv="${BRAID_K8S_VALIDATE_VERSION:-1.37.0}"
ks="${BRAID_KSERVE_VERSION:-0.21.0}"
df="${BRAID_DOCKERFILE_VERSION:-3.4.0}"
cache="${HOME:?fetch_k8s_schemas: HOME is not set}/.cache/braid"
venv="$cache/k8s-venv"
stamp="$venv/.braid-k8s-$kv-kserve-$ks-dockerfile-$df"
here="$(cd "$(dirname "$0")" && pwd)"

if [ -f "$stamp" ] && [ -x "$venv/bin/python" ] && [ -s "$venv/kserve-$ks.schema.json" ]; then
  echo "$venv/bin/python"
  exit 0
fi

mkdir -p "$cache"
exec 9>"$cache/.fetch_k8s_schemas.lock"
command -v flock >/dev/null && flock 9

[ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv" >&2
"$venv/bin/pip" install -q --disable-pip-version-check --cache-dir "$cache/pip" \
  "kubernetes-validate==$kv" "dockerfile==$df" >&2
mkdir -p "$venv/wheels"
"$venv/bin/pip" download -q --disable-pip-version-check --cache-dir "$cache/pip" --no-deps \
  -d "$venv/wheels" "kserve==$ks" >&2
wheel="$(ls "$venv"/wheels/kserve-"$ks"-*.whl | head -n 1)"
defs="$("$venv/bin/python" -c '
import os, kubernetes_validate as k
print(os.path.join(os.path.dirname(k.__file__), "kubernetes-json-schema", "v'"$kv"'-local-strict", "_definitions.json"))')"
"$venv/bin/python" "$here/../tests/deploy/kserve_schema.py" "$wheel" "$defs" \
  "$venv/kserve-$ks.schema.json" >&2
touch "$stamp"
echo "$venv/bin/python"
