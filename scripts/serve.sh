#!/usr/bin/env bash
# Builds the playground and serves it on http://127.0.0.1:$PORT/ (default 8000). The page is
# served as soon as the lecture's module (crate/math: no burn, under a minute) is built: its
# analytic widgets run at once. The models' CPU module (its one-thread build, then its threaded
# and FMA builds), the WebGPU module and the training module are built meanwhile, in the
# background (log: $TMPDIR/specdec-gpu-build.log). Until the CPU module exists, a model widget
# says its engine could not be loaded, with a Retry; until each other build exists, the page runs
# on the best build that does (pkg/builds.json) and says so, choosing WebGPU runs on the CPU and
# says so, and the training widget says its module is being built.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$repo/scripts/setup.sh"
ensure_rust
bash "$repo/scripts/build-wasm.sh" math
log="${TMPDIR:-/tmp}/specdec-gpu-build.log"
# The CPU module's builds, the WebGPU module, then the training module, in the background. Each
# goes on whether or not the one before it failed.
(bash "$repo/scripts/build-wasm.sh" cpu1 || true; bash "$repo/scripts/build-wasm.sh" cpu-more || true
  bash "$repo/scripts/build-wasm.sh" gpu || true; bash "$repo/scripts/build-wasm.sh" train) > "$log" 2>&1 &
gpu=$!
trap 'kill "$gpu" 2>/dev/null || true' EXIT
echo "specdec-playground: building the models' CPU module (one thread, then threaded and FMA), the WebGPU and the training modules in the background (log: $log)"
node "$repo/scripts/serve.mjs"
