# The two commands a newcomer runs: `make demo` and `make test`. Both install what they need.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

# Every recipe runs with a supported Node first on PATH: scripts/node.sh prints nothing when the
# system's node will do, else the folder of the LTS it unpacked from the npm registry into .tools/
# (once); a native addon that npm ci compiles uses that Node's headers (npm_config_nodedir), not
# the system's (better-sqlite3 13 ships prebuilt Node-API binaries and compiles nothing).
NODE_HOME := $(shell scripts/node.sh)
ifneq ($(.SHELLSTATUS),0)
$(error scripts/node.sh could not provide a supported Node (see above))
endif
ifneq ($(NODE_HOME),)
export PATH := $(NODE_HOME)/bin:$(PATH)
export npm_config_nodedir := $(NODE_HOME)
endif
# node_modules is stamped with the ABI of the Node that installed it: another Node reinstalls it.
NODE_ABI := $(shell PATH="$(PATH)" node -p process.versions.modules)
NODE_MODULES := node_modules/.node-abi-$(NODE_ABI)
PORT ?= 8080
DEMO_RELEASES := var/demo/releases
BENCH_DIR ?= var/bench

# Debian packages the tests start for real (command:package).
# initdb: Debian keeps PostgreSQL's binaries under /usr/lib/postgresql/*/bin (scripts/system-deps.sh looks there).
TEST_SYSTEM_DEPS := knotd:knot redis-server:redis-server initdb:postgresql chromium:chromium mmdblookup:mmdb-bin dnsdbq:dnsdbq
BENCH_SYSTEM_DEPS := knotd:knot dnsperf:dnsperf wrk:wrk

.PHONY: system-deps bench-system-deps install build lint typecheck test bench-api bench-watch bench-bundle bench-bulk verify-mmdb demo demo-release bench bench-build bench-collect import-shared verify-shared verify-gates soak clean

$(NODE_MODULES): package.json package-lock.json
	@echo "npm ci with node $$(node --version) (modules ABI $(NODE_ABI))"
	npm ci --no-audit --no-fund
	@touch $(NODE_MODULES)

install: $(NODE_MODULES)

system-deps:
	scripts/system-deps.sh $(TEST_SYSTEM_DEPS)

bench-system-deps:
	scripts/system-deps.sh $(BENCH_SYSTEM_DEPS)

build: install
	npx tsc -p tsconfig.json

lint: install
	npx eslint .
	npx prettier --check .
	npx dpdm

typecheck: install
	npx tsc -p tsconfig.json --noEmit

# Lint, type check (the build is the type check), then every test; ends with "N passed, N failed".
# Without TEST_DATABASE_URL / TEST_REDIS_URL a throwaway PostgreSQL and Redis are started for the
# run and removed afterwards (scripts/with-test-stores.sh): no test is skipped.
test: install system-deps lint build
	@echo "tests on node $$(node --version) ($$(command -v node))"
	scripts/with-test-stores.sh npx tap --reporter=tap | node scripts/tap-summary.mjs

# The long reliability runs (test/reliability/profile.ts): 10 minutes of release swaps under 100
# keep-alive connections (twice bench-api's 50), 200 builder kills, 20 server kills; about 25 minutes.
soak: install system-deps build
	RELIABILITY=soak npx tap --reporter=tap --timeout=3600 --jobs=1 test/reliability/*.test.ts test/builder/release-kill.test.ts | node scripts/tap-summary.mjs

# Builds the demo release from the bundled sample data (no network).
demo-release: build
	scripts/demo-release.sh

# Builds the demo release if needed (one tsc run in all: no recursive make), points releases/CURRENT
# at it when releases/ has none (so the README's `npx builder query …` works as written), keeps the
# demo key across restarts, serves on PORT (default 8080), prints how to call it.
demo: build
	@test -f $(DEMO_RELEASES)/CURRENT || scripts/demo-release.sh
	@if [ ! -e releases/CURRENT ]; then \
	  cp "$(DEMO_RELEASES)/$$(cat $(DEMO_RELEASES)/CURRENT)" releases/ && cp $(DEMO_RELEASES)/CURRENT releases/CURRENT && \
	  echo "releases/CURRENT now names the demo release (for npx builder query and npx server serve)"; \
	fi
	scripts/demo.sh

# Full-scale build: all of ../shared/data plus a generated seed of 1,000,000 domains, 3 rounds.
# DAYS=30,90,365: simulated days instead (daily feed churn, a round and a release a day; figures at each day listed).
# RELEASE_EVERY=7 with DAYS: a release a week (and on the days listed); the feeds churn and a round runs every day.
bench-build: build
	node dist/test/bench/bench-build.js --shared ../shared/data --dir $(BENCH_DIR) --domains $${DOMAINS:-1000000} --rounds 3 $${DAYS:+--days $$DAYS} $${RELEASE_EVERY:+--release-every $$RELEASE_EVERY}

# Collector: Knot serving 1,000,000 generated domains on loopback, dnsperf baseline, one full round.
bench-collect: build bench-system-deps
	node dist/test/bench/bench-collect.js --domains $${DOMAINS:-1000000} --dir $(BENCH_DIR)/collect

# The API under load against a bare node:http server sending the same bytes (needs the bench-build release).
bench-api: build bench-system-deps
	@test -f $(BENCH_DIR)/releases/CURRENT || $(MAKE) bench-build
	node dist/test/bench/bench-api.js --releases $(BENCH_DIR)/releases

# Watchlists (issue 34): the events of the bench-build release and the next one (built under
# var/bench-watch from a copy of its state, a day's churn) for 1,000 projects × 100 entries, then
# 10,000 webhook deliveries to a receiver on loopback (with TEST_DATABASE_URL also on PostgreSQL).
bench-watch: build
	@test -f $(BENCH_DIR)/releases/CURRENT || $(MAKE) bench-build
	node dist/test/bench/bench-watch.js --from $(BENCH_DIR) --dir $${WATCH_DIR:-var/bench-watch} --shared ../shared/data

# The benches packed for another x86-64 machine without npm or network (scripts/bench-bundle.sh).
bench-bundle:
	bash scripts/bench-bundle.sh

# Bulk enrichment: IP inputs/s through `builder query --file` vs lookupIp in a loop (needs the bench-build release).
bench-bulk: build
	@test -f $(BENCH_DIR)/releases/CURRENT || $(MAKE) bench-build
	node dist/test/bench/bench-bulk.js --releases $(BENCH_DIR)/releases

# MMDB export of the full-scale release: time, size, and 10,000 addresses read back by mmdblookup
# and the npm maxmind reader compared with GET /v1/ip ("N agree"); needs the bench-build release.
verify-mmdb: build
	@test -f $(BENCH_DIR)/releases/CURRENT || $(MAKE) bench-build
	node dist/test/bench/verify-mmdb.js --releases $(BENCH_DIR)/releases --out $(BENCH_DIR)/ipscope.mmdb

bench: bench-build bench-api

# Every supported real file of ../shared/data through `builder import` (counts for PROVENANCE.md).
import-shared: build
	scripts/import-shared-data.sh

# All of ../shared/data imported and served; GET /v1/ip/{ip} for 50,000 addresses against the
# independent oracle (test/oracle): prints "N agree, M differ", fails when M > 0; skipped without the data.
verify-shared: build
	scripts/verify-shared.sh

# The feed quality gate on the full files of ../shared/data: copies truncated to 50%, emptied and
# without their largest range are refused, the previous snapshot kept; --accept-drop takes one.
# Prints "N as expected, M not"; skipped without the data.
verify-gates: build
	scripts/verify-gates.sh

clean:
	rm -rf dist var .tap
