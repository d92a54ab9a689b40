#!/usr/bin/env bash
# Runs every test: formatting and lints (native and wasm32), the native unit and CLI tests,
# the wasm API tests in headless Chromium (wasm-bindgen-test), and the browser tests of the page
# (playwright-core driving Debian's Chromium). Installs what is missing first.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
source scripts/setup.sh
ensure_rust
ensure_browser

say "format and lints"
cargo fmt --all --check
cargo clippy --all-targets -- -D warnings
cargo clippy --all-targets --target wasm32-unknown-unknown -- -D warnings

say "native tests (core, views, CLI)"
cargo test --workspace

say "wasm API tests in headless Chromium"
(cd crate && CHROMEDRIVER=/usr/bin/chromedriver \
  CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
  cargo test --target wasm32-unknown-unknown --test wasm)

say "browser tests of the page"
bash scripts/build-wasm.sh
(cd tests && node --test --test-concurrency=1 ./*.test.mjs)
