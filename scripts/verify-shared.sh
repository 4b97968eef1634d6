#!/usr/bin/env bash
# `make verify-shared`: imports all of ../shared/data as `make import-shared` does (into
# var/verify-shared), builds a release and compares GET /v1/ip/{ip} for 50,000 addresses with the
# independent oracle of test/oracle (run `make build` first). Prints "N agree, M differ"; exits
# non-zero when M > 0. Skipped (exit 0) when the data directory is absent.
# Usage: scripts/verify-shared.sh [data-dir]   (COUNT=50000 and SEED=13 may be set; every difference
# is written to var/verify-shared/differences.json)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
data=${1:-$root/../shared/data}
dir=$root/var/verify-shared
if [ ! -d "$data" ]; then
  echo "verify-shared: $data is absent; skipped"
  exit 0
fi
data=$(cd "$data" && pwd)
rm -rf "$dir"
mkdir -p "$dir"
iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
start=$(date -u +%s)
echo "verify-shared: importing $data (log: var/verify-shared/import.log)"
"$root/scripts/import-shared-data.sh" "$data" "$dir/state" >"$dir/import.log"
end=$(($(date -u +%s) + 1))
"$root/bin/builder.js" --state-dir "$dir/state" --releases-dir "$dir/releases" release | tail -n 2
node "$root/dist/test/oracle/verify-shared.js" --data "$data" --releases "$dir/releases" --work "$dir" \
  --import-start "$(iso "$start")" --import-end "$(iso "$end")" --count "${COUNT:-50000}" --seed "${SEED:-13}" \
  --json "$dir/differences.json"
