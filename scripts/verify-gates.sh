#!/usr/bin/env bash
# `make verify-gates`: the feed quality gate on the full real files of ../shared/data (run
# `make build` first): each feed's files are imported (and the IP-to-ASN mappings also fetched from
# a local mirror), then copies truncated to 50%, emptied and without their largest range must be
# refused with the previous snapshot kept, and the truncated copy taken with --accept-drop.
# Prints "N as expected, M not"; exits non-zero when M > 0. Skipped (exit 0) when the data
# directory is absent. Usage: scripts/verify-gates.sh [data-dir]   (work files: var/verify-gates)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
data=${1:-$root/../shared/data}
if [ ! -d "$data" ]; then
  echo "verify-gates: $data is absent; skipped"
  exit 0
fi
node "$root/dist/test/builder/verify-gates-shared.js" --data "$(cd "$data" && pwd)" --work "$root/var/verify-gates"
