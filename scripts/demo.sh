#!/usr/bin/env bash
# `make demo`: serves the demo release (built by scripts/demo-release.sh when missing) with the
# demo key (created once, kept in $DEMO/demo.key) and the web console, and prints how to call the
# API and how to sign in to the console offline. PORT (default 8080), CONSOLE_PORT (default 8081)
# and HOST (default 127.0.0.1) are honoured.
set -euo pipefail
cd "$(dirname "$0")/.."
DEMO="${DEMO_DIR:-var/demo}"
PORT="${PORT:-8080}"
HOST="${HOST:-127.0.0.1}"
ACCOUNTS="$DEMO/accounts.sqlite"
CONSOLE_PORT="${CONSOLE_PORT:-8081}"
# http://localhost is a secure context for browsers, so the console's __Host-/Secure cookie works
# without TLS here (docs/decisions/0017-console.md).
export CONSOLE_URL="http://localhost:$CONSOLE_PORT"
export CONSOLE_OUTBOX="$DEMO/outbox"
export SMTP_URL=""
DEMO_EMAIL="demo@example.com"

KEY_FILE="$DEMO/demo.key"
server_cli() { ./bin/server.js --accounts-db "$ACCOUNTS" "$@"; }

# The demo workspace is on the plan "demo", far above what trying it by hand asks (the Free plan's
# 60 a minute is easy to reach with a loop): 6,000 requests a minute, 10,000,000 a month, pages of 1,000.
DEMO_PLAN="demo: 6,000 requests/minute, 10,000,000/month, pages up to 1,000"
server_cli plans set demo --per-minute 6000 --per-month 10000000 --max-page 1000 >/dev/null

# One key, kept across restarts (in $KEY_FILE, readable only by you); created on the first run.
KEY=""
if [ -s "$KEY_FILE" ] && [ -f "$ACCOUNTS" ]; then KEY=$(cat "$KEY_FILE"); fi
if [ -z "$KEY" ]; then
  KEY=$(server_cli keys create --workspace demo --project demo --label "make demo" | sed -n 's/^key: //p')
  [ -n "$KEY" ] || { echo "could not create the demo key" >&2; exit 1; }
  (umask 077 && printf '%s\n' "$KEY" > "$KEY_FILE")
fi
server_cli workspaces plan demo demo >/dev/null

# The invited demo user owns the demo workspace; a first sign-in link is printed below.
server_cli members add demo "$DEMO_EMAIL" --role owner > /dev/null
LINK=$(server_cli invite "$DEMO_EMAIL" --link | sed -n 's/^sign-in link: //p')
[ -n "$LINK" ] || { echo "could not invite the demo user" >&2; exit 1; }

STATE_DIR="$DEMO/state" ./bin/server.js --accounts-db "$ACCOUNTS" serve --host "$HOST" --port "$PORT" \
  --console-port "$CONSOLE_PORT" --releases-dir "$DEMO/releases" --log-level "${LOG_LEVEL:-warn}" \
  > "$DEMO/server.out" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; wait $SERVER 2>/dev/null || true' EXIT INT TERM
# One worker per core (WORKERS): on a busy machine they may take a while to start.
for _ in $(seq 1 600); do
  grep -q '^listening on ' "$DEMO/server.out" 2>/dev/null && break
  kill -0 $SERVER 2>/dev/null || { cat "$DEMO/server.out" >&2; exit 1; }
  sleep 0.1
done
URL=$(sed -n 's/^listening on //p' "$DEMO/server.out" | head -1)
[ -n "$URL" ] || { echo "the server did not start" >&2; exit 1; }
METRICS=$(sed -n 's/^metrics on //p' "$DEMO/server.out" | head -1)
cat <<INFO

ipscope demo (DEMO DATA: names under reserved example domains, real published ranges)
  API:   $URL/v1   (OpenAPI: $URL/v1/openapi.json, agent guide: $URL/llms-full.txt)
  MCP:   $URL/mcp
  Key:   $KEY   (kept in $KEY_FILE across restarts)
  Plan:  $DEMO_PLAN
${METRICS:+  Metrics: $METRICS (METRICS_PORT)
}
Console: $CONSOLE_URL   (also on http://127.0.0.1:$CONSOLE_PORT and http://[::1]:$CONSOLE_PORT)
  Sign in as $DEMO_EMAIL (invited, owner of the demo workspace) with this link (once, 15 minutes):
    $LINK
  Later links: ask for one at $CONSOLE_URL/sign-in; it lands in $CONSOLE_OUTBOX/ (one .eml file
  each) and in the log ($DEMO/server.out), as no SMTP_URL is set.

Try:
  export KEY=$KEY
  curl -H "Authorization: Bearer \$KEY" $URL/v1/ip/104.16.132.229
  curl -H "Authorization: Bearer \$KEY" "$URL/v1/ip/151.101.1.195/domains?include_ended=true"
  curl -H "Authorization: Bearer \$KEY" $URL/v1/domain/news.example/history
  curl -H "Authorization: Bearer \$KEY" $URL/v1/domain/news.example/hosting
  curl -H "Authorization: Bearer \$KEY" $URL/v1/asn/AS13335
  curl $URL/health
  npx builder query ip 104.16.132.229      # the same answer offline, from releases/CURRENT

Logs: $DEMO/server.out. Ctrl-C stops the server.
INFO
tail -n +2 -f "$DEMO/server.out" --pid=$SERVER &
wait $SERVER
