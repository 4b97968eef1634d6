#!/usr/bin/env bash
# Imports every bundled feed excerpt (test/fixtures/feeds/<source>/…) into the demo state.
# Usage: demo/import-feeds.sh <state-dir> <releases-dir>
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
for dir in "$root"/test/fixtures/feeds/*/; do
  kind=$(basename "$dir")
  [ "$kind" = tranco ] && continue   # the demo has its own seed list
  mapfile -t files < <(find "$dir" -maxdepth 1 -type f ! -name '*.md' | sort)
  [ ${#files[@]} -gt 0 ] || continue
  "$root/bin/builder.js" --state-dir "$1" --releases-dir "$2" import "$kind" "${files[@]}"
done
