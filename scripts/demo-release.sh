#!/usr/bin/env bash
# Builds the demo release from the bundled sample data (no network) into var/demo (or DEMO_DIR):
# the committed feed excerpts, the demo seed list and the generated observation rounds.
# Needs a built dist/ (make demo-release and make demo build first, once).
set -euo pipefail
cd "$(dirname "$0")/.."
DEMO="${DEMO_DIR:-var/demo}"
STATE="$DEMO/state"
RELEASES="$DEMO/releases"
builder() { ./bin/builder.js --state-dir "$STATE" --releases-dir "$RELEASES" "$@"; }
rm -rf "$STATE"
./demo/import-feeds.sh "$STATE" "$RELEASES"
builder import ip-location-db demo/data/asn/asn-ipv4.csv demo/data/asn/asn-ipv6.csv
builder import tranco demo/data/seed.csv
builder import observations demo/data/observations/round-*.ndjson
ASN_MAPPING=ip-location-db builder release --demo
