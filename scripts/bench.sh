#!/usr/bin/env bash
# Benchmark (not a test): builds the wasm module and measures, in headless Chromium, the
# slider-to-redraw latency of every widget and the time of the exact enumeration.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$repo/scripts/setup.sh"
ensure_rust
ensure_browser
bash "$repo/scripts/build-wasm.sh"
node "$repo/tests/bench.mjs" "$@"
