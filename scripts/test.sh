#!/usr/bin/env bash
# Runs every test: formatting and lints (native and wasm32), the native unit and CLI tests, and
# the browser tests (playwright-core driving Debian's Chromium: the page, and the wasm API on the
# modules that ship, wasm-api.test.mjs; firefox.test.mjs, in the same glob, puppeteer-core
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
# to the driver). So the native tests lint every native target and the two modules' builds lint
# the library with each module's features on wasm32, without more passes that each check burn and
# wgpu again (a quarter hour on 2 cores).
RUSTC_WORKSPACE_WRAPPER="$(command -v clippy-driver)" || { echo "clippy-driver is missing: rustup component add clippy" >&2; exit 1; }
export RUSTC_WORKSPACE_WRAPPER
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"

# The native tests' build and the wasm modules' build side by side: one build leaves a core idle
# whenever a crate compiles or links alone, and the two share nothing (cargo locks each profile's
# folder, not the target folder, so they do not wait for each other). The tests run after both,
# on a quiet machine: some of them time things.
say "building the native tests and the wasm modules, side by side"
wasm_log="$(mktemp)"
bash scripts/build-wasm.sh > "$wasm_log" 2>&1 &
wasm_build=$!
# A failed native build stops the wasm build too.
trap 'pkill -P "$wasm_build" 2>/dev/null; kill "$wasm_build" 2>/dev/null; rm -f "$wasm_log"' EXIT
cargo test --workspace --no-run
# The matmul's wasm tiling held to the naive product natively (the kernels crate alone: seconds).
cargo test -p specdec-kernels --features wasm-tiling --no-run
wasm_status=0
wait "$wasm_build" || wasm_status=$?
trap 'rm -f "$wasm_log"' EXIT
say "the wasm modules' build (it ran beside the native one)"
cat "$wasm_log"
[ "$wasm_status" = 0 ] || { echo "the wasm modules' build failed (its output is above)" >&2; exit 1; }

say "native tests (core, views, CLI)"
cargo test --workspace
cargo test -p specdec-kernels --features wasm-tiling

say "the wasm modules' sizes"
bash scripts/size-budget.sh

say "browser tests: the page, and the wasm API on the built modules"
(cd tests && node --test --test-concurrency=1 ./*.test.mjs)

say "every test passed"
