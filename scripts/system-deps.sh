#!/usr/bin/env bash
# Installs the Debian packages the tests and benchmarks start for real (a DNS server, PostgreSQL,
# Redis, load generators) when they are missing. Usage: scripts/system-deps.sh <command:package>...
set -euo pipefail
missing=()
for pair in "$@"; do
  cmd=${pair%%:*}
  command -v "$cmd" >/dev/null 2>&1 && continue
  # Debian's postgresql keeps its binaries off PATH.
  compgen -G "/usr/lib/postgresql/*/bin/$cmd" >/dev/null && continue
  missing+=("${pair#*:}")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  echo "missing Debian packages: ${missing[*]} (install them with apt-get as root)" >&2
  exit 1
fi
echo "installing Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
