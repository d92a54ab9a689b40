#!/usr/bin/env bash
# Builds the page's two wasm modules with the size profile and generates them with wasm-bindgen:
#   pkg/          the CPU module (burn's flex and ndarray): the page and its workers load it
#   pkg/gpu/      the GPU module (burn's wgpu backend alone; a WebGPU job it cannot run goes to
#                 the CPU module): a worker loads it only when someone picks WebGPU, since wgpu
#                 and cubecl make it several times larger
#   pkg/train/    the training module (flex with burn's autodiff and optimizers): only the training
#                 widget's worker loads it, so that no other visitor downloads autodiff
#   pkg/weights/  the trained models' weights, which neither module embeds: the page downloads
#                 them once and hands them to every module it starts
# (No wasm-pack: it would try to download wasm-bindgen and wasm-opt, which fails here.)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
target_dir="${CARGO_TARGET_DIR:-$repo/target}"
# Which modules: cpu, gpu, train, or all (the default; the CPU module first: the page needs it,
# the GPU module only when someone picks WebGPU, the training module only when someone trains).
which="${1:-all}"
case "$which" in cpu|gpu|train|all) ;; *) echo "build-wasm.sh: expected cpu, gpu, train or all, got $which" >&2; exit 2 ;; esac

# name: the function-name section (8 MB in the GPU module); panics carry their own message.
# No wasm-opt: binaryen's -Os/-Oz cut the CPU module by a fifth but made it 7% larger gzipped (what
# is downloaded), and Debian's binaryen 108 breaks wasm-bindgen's externref table.
generate() {
  local profile="$1" out="$2"
  local wasm="$target_dir/wasm32-unknown-unknown/$profile/specdec.wasm"
  wasm-bindgen --target web --no-typescript --remove-name-section --out-dir "$out" "$wasm"
  printf '%s/specdec_bg.wasm: %s bytes (%s gzip)\n' "$out" "$(wc -c < "$out/specdec_bg.wasm")" "$(gzip -9c "$out/specdec_bg.wasm" | wc -c)"
}

mkdir -p pkg/weights
cp crate/assets/target.bpk crate/assets/draft-a.bpk crate/assets/draft-b.bpk pkg/weights/
# The drafts on the target's hidden states: downloaded only by the experiments that run them.
mkdir -p pkg/weights/hidden
cp crate/assets/medusa.bpk crate/assets/eagle.bpk crate/assets/eagle-ttt.bpk pkg/weights/hidden/
# The boost-tuned pools and their control (lecture §4.2): downloaded only by the widget that runs them.
mkdir -p pkg/weights/pool
cp crate/assets/pool/*.bpk pkg/weights/pool/
if [ "$which" = cpu ] || [ "$which" = all ]; then
  rm -f pkg/specdec.js pkg/specdec_bg.wasm
  cargo build --profile wasm --target wasm32-unknown-unknown --lib -p specdec --no-default-features --features flex,ndarray
  generate wasm pkg
fi
if [ "$which" = gpu ] || [ "$which" = all ]; then
  # Built beside the page into a temporary folder and moved in whole, so that a half-written
  # module is never served.
  rm -rf pkg/gpu pkg/gpu.partial
  # The same profile and features as the wasm tests (scripts/test.sh), so burn is compiled once
  # for both.
  cargo build --profile wasm-gpu --target wasm32-unknown-unknown --lib -p specdec --no-default-features --features wgpu
  generate wasm-gpu pkg/gpu.partial
  mv pkg/gpu.partial pkg/gpu
fi
if [ "$which" = train ] || [ "$which" = all ]; then
  rm -rf pkg/train pkg/train.partial
  cargo build --profile wasm-train --target wasm32-unknown-unknown --lib -p specdec --no-default-features --features flex,train
  generate wasm-train pkg/train.partial
  mv pkg/train.partial pkg/train
fi
