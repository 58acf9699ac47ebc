#!/usr/bin/env bash
# Installs the Node.js gRPC client the e2e suite uses as braidd's second-language client
# (npm @grpc/grpc-js and @grpc/proto-loader, pinned) under ~/.cache/braid/node-client.
# tests/e2e/test_node_client.py runs tests/e2e/node/infer_client.js with it. Prints the
# node_modules directory on stdout.
#
# Idempotent: a stamp file marks a complete install; with it the script returns at once
# without the network. npm's cache lives under ~/.cache/braid/npm.
#
#   BRAID_GRPC_JS_VERSION        default 1.14.7
#   BRAID_PROTO_LOADER_VERSION   default 0.8.1
#
# Nothing is committed: the packages live under ~/.cache/braid only.
set -euo pipefail

grpc_js="${BRAID_GRPC_JS_VERSION:-1.14.7}"
loader="${BRAID_PROTO_LOADER_VERSION:-0.8.1}"
cache="${HOME:?fetch_node_client: HOME is not set}/.cache/braid"
dir="$cache/node-client"
stamp="$dir/.braid-grpc-js-$grpc_js-proto-loader-$loader"

if [ -f "$stamp" ] && [ -d "$dir/node_modules/@grpc/grpc-js" ]; then
  echo "$dir/node_modules"
  exit 0
fi
command -v npm >/dev/null || { echo "fetch_node_client: npm not found (scripts/setup.sh installs it)" >&2; exit 1; }
mkdir -p "$dir"
exec 9>"$cache/.fetch_node_client.lock"
command -v flock >/dev/null && flock 9

echo "fetch_node_client: npm install @grpc/grpc-js@$grpc_js @grpc/proto-loader@$loader" >&2
# a package.json of its own, so npm installs here and not in a parent folder's project
[ -f "$dir/package.json" ] || echo '{"name": "braid-node-client", "private": true}' > "$dir/package.json"
npm install --prefix "$dir" --cache "$cache/npm" --no-audit --no-fund --loglevel=error \
  --save-exact "@grpc/grpc-js@$grpc_js" "@grpc/proto-loader@$loader" >&2
node -e 'require(process.argv[1] + "/@grpc/grpc-js"); require(process.argv[1] + "/@grpc/proto-loader")' \
  "$dir/node_modules" >&2
touch "$stamp"
echo "$dir/node_modules"
