#!/usr/bin/env bash
# Installs what the build and the tests need on a fresh machine, and nothing that is already
# there. Sourced by serve.sh and test.sh; run alone with `bash scripts/setup.sh [--browser]`.
#   - the wasm32 Rust target (rustup)
#   - the pinned nightly toolchain with rust-src ($NIGHTLY, rustup): only the page's threaded CPU
#     modules need it (shared memory and atomics rebuild std: -Z build-std), and build-wasm.sh asks
#     for it (ensure_nightly) when it builds them; stable builds the rest
#   - wasm-bindgen-cli at exactly the version pinned in crate/Cargo.toml (cargo install)
#   - with --browser: Debian's chromium + chromium-driver and firefox-esr (apt; the tests drive
#     Firefox through puppeteer-core, which never downloads a browser) and the npm packages of tests/
#   - with --gpu: a Vulkan driver for native wgpu runs (apt: Mesa's lavapipe, a CPU Vulkan, so the
#     wgpu tests run on machines without a GPU; a real GPU's driver is used when there is one)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Each step says how long the script has run (bash's SECONDS), so a log gives every phase's time.
say() { printf '\033[1m==> %s\033[0m  [%dm%02ds]\n' "$*" $((SECONDS / 60)) $((SECONDS % 60)) >&2; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "need root to run: $*" >&2; return 1; fi
}

# The nightly the threaded modules are built with, pinned: a newer one may change the shared-memory
# linking that wasm-bindgen's thread support reads (rustc 1.97.0-nightly e50aa6fba).
NIGHTLY=nightly-2026-05-20

ensure_nightly() {
  if ! rustup component list --toolchain "$NIGHTLY" --installed 2>/dev/null | grep -q '^rust-src'; then
    say "installing the $NIGHTLY toolchain with rust-src (for the threaded wasm modules)"
    rustup toolchain install "$NIGHTLY" --profile minimal --component rust-src
  fi
}

ensure_rust() {
  command -v cargo >/dev/null || { echo "cargo is missing: install Rust with rustup first" >&2; exit 1; }
  for component in rustfmt clippy; do
    if ! rustup component list --installed 2>/dev/null | grep -q "^$component"; then
      say "adding the $component component"
      rustup component add "$component"
    fi
  done
  if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
    say "adding the wasm32-unknown-unknown target"
    rustup target add wasm32-unknown-unknown
  fi
  local want have
  want="$(sed -n 's/^wasm-bindgen = "=\([0-9.]*\)".*/\1/p' "$repo/crate/Cargo.toml")"
  have="$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" || true
  if [ "$have" != "$want" ]; then
    say "installing wasm-bindgen-cli $want (found: ${have:-none}); this takes a few minutes"
    cargo install wasm-bindgen-cli --version "$want" --force
  fi
}

ensure_browser() {
  local missing=()
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  [ -x /usr/bin/chromedriver ] || missing+=(chromium-driver)
  # The second browser engine of the tests (tests/firefox.test.mjs).
  [ -x /usr/bin/firefox-esr ] || missing+=(firefox-esr)
  if [ "${#missing[@]}" -gt 0 ]; then
    say "installing Debian's ${missing[*]}"
    as_root apt-get update -q
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q "${missing[@]}"
  fi
  command -v node >/dev/null || { echo "node is missing: install Node.js 20 or later" >&2; exit 1; }
  local stamp="$repo/tests/node_modules/.lock-stamp"
  if ! [ -f "$stamp" ] || ! cmp -s "$repo/tests/package-lock.json" "$stamp"; then
    say "installing the browser tests' npm packages (from the lock file)"
    (cd "$repo/tests" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund)
    cp "$repo/tests/package-lock.json" "$stamp"
  fi
}

ensure_vulkan() {
  if ! ls /usr/share/vulkan/icd.d/*.json >/dev/null 2>&1 || ! ldconfig -p | grep -q 'libvulkan.so.1'; then
    say "installing a Vulkan loader and Mesa's lavapipe (CPU Vulkan) for native wgpu"
    as_root apt-get update -q
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q libvulkan1 mesa-vulkan-drivers
  fi
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  ensure_rust
  for arg in "$@"; do
    case "$arg" in
      --browser) ensure_browser ;;
      --gpu) ensure_vulkan ;;
      *) echo "setup.sh: unknown option $arg (known: --browser, --gpu)" >&2; exit 2 ;;
    esac
  done
fi
