#!/usr/bin/env bash
# Builds the playground and serves it on http://127.0.0.1:$PORT/ (default 8000).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$repo/scripts/setup.sh"
ensure_rust
bash "$repo/scripts/build-wasm.sh"
exec node "$repo/scripts/serve.mjs"
