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
# Apache with mod_auth_openidc: a relying party nobody here wrote, run privately by
# examples/demo/test/oidc-mod-auth-openidc.test.ts (no system service is started).
if [ ! -x /usr/sbin/apache2 ] || [ ! -f /usr/lib/apache2/modules/mod_auth_openidc.so ]; then
  echo "== install apache2 and libapache2-mod-auth-openidc (Debian packages)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y --no-install-recommends apache2 libapache2-mod-auth-openidc
fi

echo "== browser tests"
if [ "${1:-}" = --prebuilt ]; then npm run test:browser:prebuilt; else npm run test:browser; fi
