#!/usr/bin/env bash
# Imports every supported real file of ../shared/data with `builder import` into a scratch state
# and prints each summary (read, rejected, written). Usage: scripts/import-shared-data.sh [data-dir] [state-dir]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
data=${1:-$root/../shared/data}
state=${2:-$root/var/import-shared/state}
rm -rf "$state"
grep -v '^#' "$root/test/bench/shared-data-imports.txt" | while read -r kind files; do
  [ -n "$kind" ] || continue
  args=()
  for f in $files; do args+=("$data/$f"); done
  "$root/bin/builder.js" --state-dir "$state" import "$kind" "${args[@]}"
done
