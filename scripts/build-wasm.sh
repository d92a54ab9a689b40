#!/usr/bin/env bash
# Builds the wasm module with the size profile and generates pkg/ with wasm-bindgen.
# (No wasm-pack: it would try to download wasm-bindgen and wasm-opt, which fails here.)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
target_dir="${CARGO_TARGET_DIR:-$repo/target}"
cargo build --profile wasm --target wasm32-unknown-unknown --lib -p specdec
rm -rf pkg
wasm-bindgen --target web --no-typescript --out-dir pkg "$target_dir/wasm32-unknown-unknown/wasm/specdec.wasm"
if command -v wasm-opt >/dev/null; then
  wasm-opt -Os --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext --enable-mutable-globals \
    pkg/specdec_bg.wasm -o pkg/specdec_bg.wasm
fi
printf 'pkg/specdec_bg.wasm: %s bytes (%s gzip)\n' "$(wc -c < pkg/specdec_bg.wasm)" "$(gzip -9c pkg/specdec_bg.wasm | wc -c)"
