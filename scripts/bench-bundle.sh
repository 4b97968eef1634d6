#!/usr/bin/env bash
# Packs what `make bench-build` and `make bench-api` need on another x86-64 Linux machine that has
# neither npm nor a network (how the 16-core figures of docs/performance.md were taken): the node binary,
# the production node_modules (better-sqlite3's prebuilt binary), ../shared/data and wrk, into
# var/bench-bundle/ (git-ignored; about 45 MB). Copy the checkout with dist/ and var/bench-bundle/
# there, then run from its root:
#
#   bash var/bench-bundle/run.sh          # DOMAINS=1000000 SECS=5 RUNS=3 WORKER_COUNTS=1,2,4,8 by default
#
# It builds the full-scale release, then runs the workers section (--workers 1,2,4,8) and the
# per-core scenarios (REST and MCP; no metering section: it needs PostgreSQL and Redis).
set -euo pipefail
cd "$(dirname "$0")/.."
out=var/bench-bundle
rm -rf "$out"
mkdir -p "$out"
make build >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp package.json package-lock.json "$tmp"/
cp -a node_modules "$tmp"/
(cd "$tmp" && npm prune --omit=dev --no-audit --no-fund >/dev/null)
# better-sqlite3's sources and other platforms' binaries: on x86-64 Linux only
# prebuilds/linux-x64.node (glibc) or linuxmusl-x64.node is loaded.
sqlite="$tmp/node_modules/better-sqlite3"
rm -rf "$sqlite/deps" "$sqlite/src" "$sqlite/build"
find "$sqlite/prebuilds" -name '*.node' ! -name 'linux-x64.node' ! -name 'linuxmusl-x64.node' -delete
tar -C "$tmp" -cf - node_modules | xz -T0 -6 >"$out/node_modules.tar.xz"
tar -C ../shared -cf - data | xz -T0 -6 >"$out/shared-data.tar.xz"
xz -T0 -6 -c "$(readlink -f "$(command -v node)")" >"$out/node.xz"
wrk=$(command -v wrk) || { echo "wrk is missing: make bench-system-deps" >&2; exit 1; }
cp "$wrk" "$out/"
ldd "$wrk" | awk '/libluajit/ { print $3 }' | xargs -r cp -t "$out/"
cat >"$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# Runs on the other machine, from the checkout's root (see scripts/bench-bundle.sh).
set -euo pipefail
bundle=var/bench-bundle
bin=/tmp/ipscope-bench-bin
if [ ! -x "$bin/node" ]; then
  mkdir -p "$bin"
  xz -dc "$bundle/node.xz" >"$bin/node" && chmod +x "$bin/node"
  cp "$bundle"/wrk "$bundle"/lib*.so* "$bin/"
fi
[ -d node_modules/better-sqlite3 ] || tar -xJf "$bundle/node_modules.tar.xz"
[ -d /tmp/ipscope-shared/data ] || { mkdir -p /tmp/ipscope-shared && tar -xJf "$bundle/shared-data.tar.xz" -C /tmp/ipscope-shared; }
export PATH="$bin:$PATH" LD_LIBRARY_PATH="$bin"
nproc
node --version
node dist/test/bench/bench-build.js --shared /tmp/ipscope-shared/data --dir var/bench \
  --domains "${DOMAINS:-1000000}" --rounds 3
node dist/test/bench/bench-api.js --releases var/bench/releases --only-workers \
  --workers "${WORKER_COUNTS:-1,2,4,8}" --seconds "${SECS:-5}" --runs "${RUNS:-3}"
node dist/test/bench/bench-api.js --releases var/bench/releases --skip-metering --skip-workers \
  --seconds "${SECS:-5}" --runs "${RUNS:-3}"
RUN
du -sh "$out"
echo "then, on the other machine, from the checkout's root (with dist/ and $out/): bash $out/run.sh"
