#!/usr/bin/env bash
# For a machine with a real GPU (issue 31; nothing else needs one): the ×16 target's T(k) and the
# speedup of a separate draft and the §6 table natively on wgpu (Vulkan, Metal or DX12), with the
# draft models on the GPU beside the target and on the CPU (flex), then the same in the page where
# this machine's Chromium gets a hardware WebGPU adapter. Record what it prints in
# docs/performance.md.
#   bash scripts/gpu-bench.sh [--width 16] [--prompts 10] [--no-page] [--specdec PATH]
# --specdec runs a `specdec` built elsewhere (`cargo build --release -p specdec --bin specdec`) on
# a GPU machine that has no Rust and no registry; the page then needs --no-page too.
# Takes a few minutes on a GPU. Run nothing else meanwhile: it times this machine.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
usage() { echo "gpu-bench.sh: $1 (expected --width N, --prompts N, --no-page, --specdec PATH)" >&2; exit 2; }
count() { [[ "${2-}" =~ ^[1-9][0-9]*$ ]] || usage "$1 needs a positive whole number"; }
width=16
prompts=10
page=1
specdec=
while [ $# -gt 0 ]; do
  case "$1" in
    --width) count "$1" "${2-}"; width="$2"; shift 2 ;;
    --prompts) count "$1" "${2-}"; prompts="$2"; shift 2 ;;
    --no-page) page=0; shift ;;
    --specdec) [ -n "${2-}" ] || usage "--specdec needs a path"; specdec="$2"; shift 2 ;;
    *) usage "unknown option $1" ;;
  esac
done
if [ -n "$specdec" ]; then
  # Resolved before the cd below, so that a relative path means what it meant where it was typed.
  [ -f "$specdec" ] && [ -x "$specdec" ] || usage "--specdec $specdec is not an executable file"
  specdec="$(realpath -- "$specdec")"
  [ "$page" = 0 ] || usage "--specdec needs --no-page (the page is built with Rust here)"
fi
cd "$repo"
if [ -z "$specdec" ]; then
  source "$repo/scripts/setup.sh"
  ensure_rust
  cargo build --release -p specdec --bin specdec --quiet
  specdec="${CARGO_TARGET_DIR:-$repo/target}/release/specdec"
fi
if command -v nvidia-smi > /dev/null; then nvidia-smi -L; fi
printf '\n== Per-call latency of the three models (c = draft / target) ==\n'
"$specdec" model-bench --backend wgpu
printf '\n== The measured roofline of ×%s on wgpu: T(k)/T(1) ==\n' "$width"
"$specdec" roofline-measure --backend wgpu --width "$width" --k 1,2,4,5,8,16,32
for drafts in flex wgpu; do
  printf '\n== ×%s on wgpu, draft B chain, every γ, drafts on %s ==\n' "$width" "$drafts"
  "$specdec" likesworld speedup --backend wgpu --drafts-on "$drafts" --target-width "$width" \
    --draft b --gamma 1,2,3,4,6 --prompts "$prompts"
done
for drafts in flex wgpu; do
  printf '\n== The §6 table on ×%s on wgpu (8 nodes), every draft model on %s ==\n' "$width" "$drafts"
  "$specdec" likesworld methods --backend wgpu --drafts-on "$drafts" --target-width "$width" \
    --budget 8 --prompts "$prompts"
done
if [ "$page" = 1 ]; then
  # shellcheck source=setup.sh
  source "$repo/scripts/setup.sh"
  ensure_browser
  bash scripts/build-wasm.sh cpu1
  bash scripts/build-wasm.sh gpu
  printf '\n== In the page (Chromium with a hardware adapter where it gets one; the adapter is printed first) ==\n'
  # Vulkan for Chromium's WebGPU on Linux: without it headless Chromium falls back to SwiftShader.
  CHROMIUM_ARGS="--enable-features=Vulkan --use-angle=vulkan --ignore-gpu-blocklist" \
    node tests/bench-webgpu.mjs --width "$width" --prompts "$prompts" --table
fi
