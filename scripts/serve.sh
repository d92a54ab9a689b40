#!/usr/bin/env bash
# Builds the playground and serves it on http://127.0.0.1:$PORT/ (default 8000). The page is
# served as soon as the CPU module is built; the WebGPU module is built meanwhile, in the
# background (log: $TMPDIR/specdec-gpu-build.log), and until it exists, choosing WebGPU runs on
# the CPU and says so.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$repo/scripts/setup.sh"
ensure_rust
bash "$repo/scripts/build-wasm.sh" cpu
log="${TMPDIR:-/tmp}/specdec-gpu-build.log"
# The WebGPU module, then the training module, in the background: until each exists, choosing
# WebGPU runs on the CPU and says so, and the training widget says its module is being built.
(bash "$repo/scripts/build-wasm.sh" gpu; bash "$repo/scripts/build-wasm.sh" train) > "$log" 2>&1 &
gpu=$!
trap 'kill "$gpu" 2>/dev/null || true' EXIT
echo "specdec-playground: building the WebGPU and training modules in the background (log: $log)"
node "$repo/scripts/serve.mjs"
