#!/usr/bin/env bash
# Runs a command (the test runner) with a PostgreSQL and a Redis for the shared-store tests.
# TEST_DATABASE_URL and TEST_REDIS_URL given: used as they are. Not given: a throwaway PostgreSQL
# (Debian's binaries under /usr/lib/postgresql/*/bin: initdb in a temporary directory, trust auth,
# a free loopback port, its unix socket in that directory, no fsync) and a throwaway redis-server
# (a free loopback port, no persistence) are started, and stopped and removed afterwards, also when
# the command fails or is interrupted. Messages go to stderr; the command's exit status is kept.
# Usage: scripts/with-test-stores.sh <command> [args…]
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: $0 <command> [args…]" >&2; exit 2; }

say() { echo "with-test-stores: $*" >&2; }
free_port() {
  node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}

TMP=""
PG_BIN=""
PG_DATA=""
REDIS_PID=""
AS_USER=()

cleanup() {
  local status=$?
  if [ -n "$PG_DATA" ] && [ -f "$PG_DATA/postmaster.pid" ]; then
    "${AS_USER[@]}" "$PG_BIN/pg_ctl" -D "$PG_DATA" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  if [ -n "$REDIS_PID" ]; then
    kill "$REDIS_PID" 2>/dev/null || true
    wait "$REDIS_PID" 2>/dev/null || true
  fi
  [ -n "$TMP" ] && rm -rf "$TMP"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ -z "${TEST_DATABASE_URL:-}" ] || [ -z "${TEST_REDIS_URL:-}" ]; then
  TMP=$(mktemp -d "${TMPDIR:-/tmp}/ipscope-test-stores.XXXXXX")
  chmod 755 "$TMP"
fi

if [ -z "${TEST_DATABASE_URL:-}" ]; then
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [ -x "$dir/initdb" ] && { PG_BIN=$dir; break; }
  done
  if [ -z "$PG_BIN" ] && command -v initdb >/dev/null; then PG_BIN=$(dirname "$(command -v initdb)"); fi
  [ -n "$PG_BIN" ] || {
    say "TEST_DATABASE_URL is not set and no PostgreSQL binaries were found (install Debian's postgresql)"
    exit 1
  }
  # PostgreSQL refuses to run as root: as root, the server runs as the postgres (else nobody) user.
  if [ "$(id -u)" -eq 0 ]; then
    user=postgres
    getent passwd postgres >/dev/null || user=nobody
    AS_USER=(runuser -u "$user" --)
    chown "$user" "$TMP"
  fi
  PG_DATA="$TMP/pg"
  PG_PORT=$(free_port)
  "${AS_USER[@]}" "$PG_BIN/initdb" -D "$PG_DATA" -U postgres -A trust -E UTF8 --locale=C --no-sync \
    >"$TMP/initdb.log" 2>&1 || { cat "$TMP/initdb.log" >&2; say "initdb failed"; exit 1; }
  "${AS_USER[@]}" "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$TMP/pg.log" -w -t 60 start \
    -o "-p $PG_PORT -k $TMP -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
    >/dev/null || { cat "$TMP/pg.log" >&2; say "PostgreSQL did not start"; exit 1; }
  "${AS_USER[@]}" "$PG_BIN/createdb" -h "$TMP" -p "$PG_PORT" -U postgres test
  export TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/test"
  say "throwaway PostgreSQL ($PG_BIN) at $TEST_DATABASE_URL"
fi

if [ -z "${TEST_REDIS_URL:-}" ]; then
  command -v redis-server >/dev/null || {
    say "TEST_REDIS_URL is not set and redis-server was not found (install Debian's redis-server)"
    exit 1
  }
  REDIS_PORT=$(free_port)
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$TMP" \
    --logfile "$TMP/redis.log" &
  REDIS_PID=$!
  for _ in $(seq 1 100); do
    redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break
    kill -0 "$REDIS_PID" 2>/dev/null || { cat "$TMP/redis.log" >&2; say "redis-server did not start"; exit 1; }
    sleep 0.1
  done
  redis-cli -p "$REDIS_PORT" ping >/dev/null || { say "redis-server did not answer"; exit 1; }
  export TEST_REDIS_URL="redis://127.0.0.1:$REDIS_PORT"
  say "throwaway Redis at $TEST_REDIS_URL"
fi

# Not exec: the trap above stops the stores once the command ends.
set +e
"$@"
status=$?
set -e
exit "$status"
