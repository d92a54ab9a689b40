#!/usr/bin/env bash
# Benchmark (not a test): builds the wasm module and measures, in headless Chromium, the
# slider-to-redraw latency of every widget, the time of the exact enumeration, the per-call
# latency of the LikesWorld models on flex, ndarray and WebGPU, and the time of the decoding
# experiments 1–5 (in the page and natively).
#   bash scripts/bench.sh [--moves N] [--peer] [--json]
# With --json the output ends with one JSON line for scripts: {"rows":[{engine, backend, model,
# workload, median_us, dispatches}], "sizes":{cpu_module_gzip, gpu_module_gzip, weights_gzip}}
# (rows of the peer too, with --peer).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$repo/scripts/setup.sh"
ensure_rust
ensure_browser
# With --peer, the peer of shared/peers (onnxruntime-web on the same decoder sizes) runs right
# after ours, in the same minute, so that the two can be compared as ratios.
peer=0
json=0
args=()
for arg in "$@"; do
  case "$arg" in
    --peer) peer=1 ;;
    --json) json=1 ;;
    *) args+=("$arg") ;;
  esac
done
work="${TMPDIR:-/tmp}/specdec-bench"
rm -rf "$work" && mkdir -p "$work"
bash "$repo/scripts/build-wasm.sh"
node "$repo/tests/bench.mjs" "${args[@]}" --json "$work/ours.json"
# Model-free drafting: one suffix-index lookup against the index size, and demo 05.1 natively.
cargo build --release -p specdec --bin specdec --quiet
specdec="${CARGO_TARGET_DIR:-$repo/target}/release/specdec"
printf '\nSuffix index: one lookup (match + a 16-node tree) against index size:\n'
"$specdec" suffix-bench
printf '\nSpeculative decoding experiments 1–5 natively (goal: under 10 s in all on a CPU):\n'
"$specdec" decode-bench
printf '\nDemo 05.1 natively (flex):\n'
time "$specdec" modelfree table
if [ "$peer" = 1 ]; then
  peers="$repo/../shared/peers"
  [ -d "$peers/ort-web" ] || { echo "bench.sh --peer: no $peers/ort-web beside the repository" >&2; exit 2; }
  if ! ls "$peers"/onnx/*.onnx >/dev/null 2>&1; then
    echo "bench.sh --peer: $peers/onnx has no .onnx models (only what is listed there), so the peer cannot run; compare with the figures in $peers/README.md" >&2
    exit 2
  fi
  copy="$work/peers"
  cp -r "$peers" "$copy" && chmod -R u+w "$copy"
  (cd "$copy/ort-web" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund --silent)
  printf '\nThe peer, onnxruntime-web 1-thread wasm (and WebGPU on SwiftShader), same machine, same minute:\n'
  # The peer prints its table, then one JSON line (kept for --json).
  (cd "$copy/ort-web" && node run.mjs --runs wasm:1:wasm,webgpu:1:gpu --models target,draft-a,draft-b --workloads decode1,chain5,tree31) \
    | tee "$work/peer.out"
  tail -n 1 "$work/peer.out" > "$work/peer.json"
fi
if [ "$json" = 1 ]; then
  gz() { cat "$@" | gzip -9c | wc -c; }
  CPU_GZ="$(gz "$repo/pkg/specdec_bg.wasm")" GPU_GZ="$(gz "$repo/pkg/gpu/specdec_bg.wasm")" \
    WEIGHTS_GZ="$(gz "$repo"/pkg/weights/*.bpk)" node -e '
      const fs = require("fs");
      const [ours, peerFile] = process.argv.slice(1);
      const rows = JSON.parse(fs.readFileSync(ours, "utf8")).rows;
      if (fs.existsSync(peerFile)) {
        for (const r of JSON.parse(fs.readFileSync(peerFile, "utf8")).rows) {
          rows.push({ engine: "ort-web", backend: r.backend, model: r.model, workload: r.workload, median_us: r.median_us, dispatches: null });
        }
      }
      const sizes = { cpu_module_gzip: +process.env.CPU_GZ, gpu_module_gzip: +process.env.GPU_GZ, weights_gzip: +process.env.WEIGHTS_GZ };
      console.log(JSON.stringify({ rows, sizes }));
    ' "$work/ours.json" "$work/peer.json"
fi
