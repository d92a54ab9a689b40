#!/usr/bin/env bash
# Benchmark (not a test): builds the wasm module and measures, in headless Chromium, the
# slider-to-redraw latency of every widget, the time of the exact enumeration and the per-call
# latency of the LikesWorld models on flex, ndarray and WebGPU.
#   bash scripts/bench.sh [--moves N] [--peer]
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$repo/scripts/setup.sh"
ensure_rust
ensure_browser
# With --peer, the peer of shared/peers (onnxruntime-web on the same decoder sizes) runs right
# after ours, in the same minute, so that the two can be compared as ratios.
peer=0
args=()
for arg in "$@"; do
  if [ "$arg" = --peer ]; then peer=1; else args+=("$arg"); fi
done
bash "$repo/scripts/build-wasm.sh"
node "$repo/tests/bench.mjs" "${args[@]}"
# Model-free drafting: one suffix-index lookup against the index size, and demo 05.1 natively.
cargo build --release -p specdec --bin specdec --quiet
specdec="${CARGO_TARGET_DIR:-$repo/target}/release/specdec"
printf '\nSuffix index: one lookup (match + a 16-node tree) against index size:\n'
"$specdec" suffix-bench
printf '\nDemo 05.1 natively (flex):\n'
time "$specdec" modelfree table
if [ "$peer" = 1 ]; then
  peers="$repo/../shared/peers"
  [ -d "$peers/ort-web" ] || { echo "bench.sh --peer: no $peers/ort-web beside the repository" >&2; exit 2; }
  if ! ls "$peers"/onnx/*.onnx >/dev/null 2>&1; then
    echo "bench.sh --peer: $peers/onnx has no .onnx models (only what is listed there), so the peer cannot run; compare with the figures in $peers/README.md" >&2
    exit 2
  fi
  work="${TMPDIR:-/tmp}/specdec-peers"
  rm -rf "$work" && cp -r "$peers" "$work" && chmod -R u+w "$work"
  (cd "$work/ort-web" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund --silent)
  printf '\nThe peer, onnxruntime-web 1-thread wasm (and WebGPU on SwiftShader), same machine, same minute:\n'
  (cd "$work/ort-web" && node run.mjs --runs wasm:1:wasm,webgpu:1:gpu --models target,draft-a,draft-b --workloads decode1,chain5,tree31)
fi
