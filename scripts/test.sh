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
ensure_vulkan

say "format and lints"
cargo fmt --all --check
cargo clippy --all-targets -- -D warnings
# wasm32 as the two modules are built: the GPU module's features (also the wasm tests'), and the
# CPU module's.
cargo clippy --all-targets --target wasm32-unknown-unknown --no-default-features --features wgpu -- -D warnings
cargo clippy --lib --target wasm32-unknown-unknown --no-default-features --features flex,ndarray -- -D warnings

say "native tests (core, views, CLI)"
cargo test --workspace

say "the wasm module"
bash scripts/build-wasm.sh
bash scripts/size-budget.sh

say "wasm API tests in headless Chromium (WebGPU through SwiftShader)"
# The wasm profile and the GPU module's features: the tests run the code that ships, and burn is
# compiled for wasm once for both (2 cores: each compile of burn and wgpu takes a quarter hour).
(cd crate && CHROMEDRIVER=/usr/bin/chromedriver WASM_BINDGEN_TEST_TIMEOUT=300 \
  CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
  cargo test --profile wasm-gpu --target wasm32-unknown-unknown --no-default-features --features wgpu --test wasm)

say "browser tests of the page"
(cd tests && node --test --test-concurrency=1 ./*.test.mjs)
