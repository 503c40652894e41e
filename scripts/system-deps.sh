#!/usr/bin/env bash
# Installs the Debian packages some tests need, when they are missing and we run as root.
# Elsewhere those tests skip with a reason; under CI=true they must run, so a failure here is fatal.
#   chromium       browser tests, static image export (Kaleido) and the PDF report (Playwright)
#   redis-server   the team cache
#   poppler-utils  pdftoppm/pdfinfo: the PDF report's pages rendered and checked
set -euo pipefail
need=()
for pkg in "$@"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "system-deps: missing ${need[*]} (not root: tests that need them will skip)" >&2
  [ "${CI:-}" = "true" ] && exit 1
  exit 0
fi
echo "system-deps: installing ${need[*]}" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
