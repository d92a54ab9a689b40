#!/usr/bin/env bash
# Runs every test: formatting and lints (native and wasm32), the native unit and CLI tests,
# the wasm API tests in headless Chromium (wasm-bindgen-test), and the browser tests of the page
# (playwright-core driving Debian's Chromium; firefox.test.mjs, in the same glob, puppeteer-core
# driving Debian's Firefox ESR). Installs what is missing first.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
source scripts/setup.sh
ensure_rust
ensure_browser
ensure_vulkan

say "format"
cargo fmt --all --check

# Lints: every build below compiles this workspace's crates with clippy's driver, which lints as
# it compiles, warnings denied (CLIPPY_ARGS is how `cargo clippy -- -D warnings` hands its flags
# to the driver). So the native tests lint every native target, the two modules' builds lint the
# library with each module's features on wasm32, and the wasm tests lint their own file, without
# three more passes that each check burn and wgpu again (a quarter hour on 2 cores).
RUSTC_WORKSPACE_WRAPPER="$(command -v clippy-driver)" || { echo "clippy-driver is missing: rustup component add clippy" >&2; exit 1; }
export RUSTC_WORKSPACE_WRAPPER
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"

say "native tests (core, views, CLI)"
cargo test --workspace
# The matmul's wasm tiling held to the naive product natively (the kernels crate alone: seconds).
cargo test -p specdec-kernels --features wasm-tiling

say "the wasm module"
bash scripts/build-wasm.sh
bash scripts/size-budget.sh

say "wasm API tests in headless Chromium (WebGPU through SwiftShader)"
# The GPU module's profile (wasm-gpu) and features: the tests run the code that ships, and burn is
# compiled for wasm once for both (2 cores: each compile of burn and wgpu takes a quarter hour).
(cd crate && CHROMEDRIVER=/usr/bin/chromedriver WASM_BINDGEN_TEST_TIMEOUT=300 \
  CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
  cargo test --profile wasm-gpu --target wasm32-unknown-unknown --no-default-features --features wgpu,flex --test wasm)

say "browser tests of the page"
(cd tests && node --test --test-concurrency=1 ./*.test.mjs)
