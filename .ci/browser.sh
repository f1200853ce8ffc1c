#!/usr/bin/env bash
# Real-browser tests: the demo and service-web in Debian's chromium, driven by playwright-core,
# against the built service on loopback (examples/demo/test). Installs chromium when missing
# (needs root and the Debian archive), then runs `npm run test:browser` (builds first), or with
# --prebuilt `npm run test:browser:prebuilt` on the build already there (.ci/run builds once).
# Screenshots of every scenario land in test-results/browser/.
set -euo pipefail
cd "$(dirname "$0")/.."

CHROMIUM="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ ! -x "$CHROMIUM" ]; then
  echo "== install chromium (Debian package)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y --no-install-recommends chromium
fi
echo "== $("$CHROMIUM" --version 2>/dev/null || echo "chromium at $CHROMIUM")"

echo "== browser tests"
if [ "${1:-}" = --prebuilt ]; then npm run test:browser:prebuilt; else npm run test:browser; fi
