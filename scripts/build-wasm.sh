#!/usr/bin/env bash
# Builds the page's wasm modules with the size profile and generates them with wasm-bindgen:
#   pkg/math/     the lecture's module (crate/math: no burn): the page loads it first and alone,
#                 and its analytic widgets run on it; the models' modules below are fetched when
#                 a model widget wakes
#   pkg/          the CPU module (burn's flex and ndarray): the page and its workers load it, or
#                 one of its three other builds, which differ only in how the matmul runs:
#   pkg/fma/      with relaxed-SIMD fused multiply-adds (feature `relaxed`): for a browser that
#                 validates relaxed SIMD (the page asks with a tiny module first: a browser without
#                 it could not even parse this one)
#   pkg/mt/       threaded: shared memory and atomics (the pinned nightly, std rebuilt with them),
#                 a pool of helper workers splitting each large matmul by columns; for a page that
#                 is cross-origin isolated (SharedArrayBuffer), and only there
#   pkg/mt-fma/   both
#   pkg/gpu/      the GPU module (burn's wgpu backend, and flex for the drafts that run on the
#                 CPU beside a WebGPU target; a WebGPU job it cannot run goes to the CPU module):
#                 a worker loads it only when someone picks WebGPU, since wgpu and cubecl make it
#                 several times larger
#   pkg/train/    the training module (flex with burn's autodiff and optimizers): only the training
#                 widget's worker loads it, so that no other visitor downloads autodiff
#   pkg/weights/  the trained models' weights, which neither module embeds: the page downloads
#                 them once and hands them to every module it starts
# (No wasm-pack: it would try to download wasm-bindgen and wasm-opt, which fails here.)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
target_dir="${CARGO_TARGET_DIR:-$repo/target}"
# Which modules: math (the lecture's), cpu (the CPU module's four builds), cpu1 (its one-thread
# SIMD128 build alone), cpu-more (the other three: the dev server builds them after the page is
# up), gpu, train, or all (the default; the lecture's module first: the page needs it at once,
# the CPU module when a model widget wakes, the GPU module only when someone picks WebGPU, the
# training module only when someone trains).
which="${1:-all}"
case "$which" in math|cpu|cpu1|cpu-more|gpu|train|all) ;; *) echo "build-wasm.sh: expected math, cpu, cpu1, cpu-more, gpu, train or all, got $which" >&2; exit 2 ;; esac
source scripts/setup.sh

# name: the function-name section (8 MB in the GPU module); panics carry their own message.
# No wasm-opt: binaryen's -Os/-Oz cut the CPU module by a fifth but made it 7% larger gzipped (what
# is downloaded), and Debian's binaryen 108 breaks wasm-bindgen's externref table.
generate() {
  local profile="$1" out="$2" name="${3:-specdec}"
  local wasm="$target_dir/wasm32-unknown-unknown/$profile/$name.wasm"
  wasm-bindgen --target web --no-typescript --remove-name-section --out-dir "$out" "$wasm"
  printf '%s/%s_bg.wasm: %s bytes (%s gzip)\n' "$out" "$name" "$(wc -c < "$out/${name}_bg.wasm")" "$(gzip -9c "$out/${name}_bg.wasm" | wc -c)"
}

if [ "$which" = math ] || [ "$which" = all ]; then
  # Moved in whole, so that a half-written module is never served.
  rm -rf pkg/math.partial
  cargo build --profile wasm --target wasm32-unknown-unknown --lib -p specdec-math --features wasm
  generate wasm pkg/math.partial specdec_math
  rm -rf pkg/math
  mv pkg/math.partial pkg/math
  [ "$which" = math ] && exit 0
fi

mkdir -p pkg/weights
cp crate/assets/target.bpk crate/assets/draft-a.bpk crate/assets/draft-b.bpk pkg/weights/
# The drafts on the target's hidden states: downloaded only by the experiments that run them.
mkdir -p pkg/weights/hidden
cp crate/assets/medusa.bpk crate/assets/eagle.bpk crate/assets/eagle-ttt.bpk pkg/weights/hidden/
# The boost-tuned pools and their control (lecture §4.2): downloaded only by the widget that runs them.
mkdir -p pkg/weights/pool
cp crate/assets/pool/*.bpk pkg/weights/pool/
# pkg/builds.json: the CPU module's builds that exist now, rewritten as each is moved in, so that
# the page asks for the best one it can have without a 404 for one not built yet (www/threads.js).
manifest() {
  local dirs=()
  for d in "" fma/ mt/ mt-fma/; do [ -f "pkg/${d}specdec_bg.wasm" ] && dirs+=("\"$d\"")
  done
  printf '{"builds": [%s]}\n' "$(IFS=,; echo "${dirs[*]}")" > pkg/builds.json.partial
  mv pkg/builds.json.partial pkg/builds.json
}
# One build of the CPU module into folder $1 (moved in whole, so that a half-written module is
# never served); the rest of the arguments go to cargo, and $link to the linking of our crate alone.
link=()
cpu_build() {
  local out="$1" profile="$2"
  shift 2
  rm -rf "$out.partial"
  cargo "$@" rustc --profile "$profile" --target wasm32-unknown-unknown --lib -p specdec --no-default-features "${features[@]}" -- "${link[@]}"
  generate "$profile" "$out.partial"
  rm -rf "$out"
  mv "$out.partial" "$out"
  manifest
}
# The threaded builds: the nightly, std rebuilt with atomics and bulk memory; linked with a shared
# memory of at most 2 GiB (the ×16 target's weights and a job's tensors fit with room), imported
# (each helper instantiates the module on the same memory) and the thread-local storage symbols
# that wasm-bindgen's thread support sets up each thread with. Its own profile, so that its
# artefacts sit apart. Not linted: clippy's driver is stable's; the same code is linted in the
# stable builds, all but the few lines under `target_feature = "atomics"`.
threaded() {
  link=(-C link-arg=--shared-memory -C link-arg=--import-memory -C link-arg=--max-memory=2147483648
    -C link-arg=--export=__wasm_init_tls -C link-arg=--export=__tls_size -C link-arg=--export=__tls_align -C link-arg=--export=__tls_base)
  RUSTC_WORKSPACE_WRAPPER= CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS='--cfg getrandom_backend="wasm_js" -C target-feature=+simd128,+atomics,+bulk-memory,+mutable-globals -C link-arg=--max-memory=2147483648' \
    cpu_build "$1" wasm-mt "+$NIGHTLY" -Z build-std=panic_abort,std
  link=()
}
if [ "$which" = cpu ] || [ "$which" = cpu1 ] || [ "$which" = all ]; then
  # pkg/ itself holds the one-thread SIMD128 build's two files beside the other folders.
  rm -f pkg/specdec.js pkg/specdec_bg.wasm
  features=(--features flex,ndarray)
  cargo build --profile wasm --target wasm32-unknown-unknown --lib -p specdec --no-default-features "${features[@]}"
  generate wasm pkg
  manifest
fi
if [ "$which" = cpu ] || [ "$which" = cpu-more ] || [ "$which" = all ]; then
  ensure_nightly
  features=(--features flex,ndarray,relaxed)
  cpu_build pkg/fma wasm
  features=(--features flex,ndarray)
  threaded pkg/mt
  features=(--features flex,ndarray,relaxed)
  threaded pkg/mt-fma
fi
if [ "$which" = gpu ] || [ "$which" = all ]; then
  # Built beside the page into a temporary folder and moved in whole, so that a half-written
  # module is never served.
  rm -rf pkg/gpu pkg/gpu.partial
  cargo build --profile wasm-gpu --target wasm32-unknown-unknown --lib -p specdec --no-default-features --features wgpu,flex
  generate wasm-gpu pkg/gpu.partial
  mv pkg/gpu.partial pkg/gpu
fi
if [ "$which" = train ] || [ "$which" = all ]; then
  # The CPU module's profile: its features differ only above burn-flex (autodiff and optim turn on
  # burn's dispatch, tensor, core, nn and store again), so everything below, burn-flex and its
  # kernels included, is the CPU module's build, reused.
  rm -rf pkg/train pkg/train.partial
  cargo build --profile wasm --target wasm32-unknown-unknown --lib -p specdec --no-default-features --features flex,train
  generate wasm pkg/train.partial
  mv pkg/train.partial pkg/train
fi
