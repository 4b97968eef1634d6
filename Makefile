# The two commands a newcomer runs: `make demo` and `make test`. Both install what they need.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
NODE_MODULES := node_modules/.package-lock.json
PORT ?= 8080
DEMO_STATE := var/demo/state
DEMO_RELEASES := var/demo/releases
BENCH_DIR ?= var/bench

.PHONY: install build lint typecheck test demo demo-release bench bench-build import-shared clean

$(NODE_MODULES): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $(NODE_MODULES)

install: $(NODE_MODULES)

build: install
	npx tsc -p tsconfig.json

lint: install
	npx eslint .
	npx prettier --check .

typecheck: install
	npx tsc -p tsconfig.json --noEmit

# Lint, type check (the build is the type check), then every test; ends with "N passed, N failed".
test: install lint build
	npx tap --reporter=tap | node scripts/tap-summary.mjs

# Builds the demo release from the bundled sample data (no network).
demo-release: build
	rm -rf $(DEMO_STATE)
	./demo/import-feeds.sh $(DEMO_STATE) $(DEMO_RELEASES)
	./bin/builder.js --state-dir $(DEMO_STATE) --releases-dir $(DEMO_RELEASES) import ip-location-db demo/data/asn/asn-ipv4.csv demo/data/asn/asn-ipv6.csv
	./bin/builder.js --state-dir $(DEMO_STATE) --releases-dir $(DEMO_RELEASES) import tranco demo/data/seed.csv
	./bin/builder.js --state-dir $(DEMO_STATE) --releases-dir $(DEMO_RELEASES) import observations demo/data/observations/round-*.ndjson
	ASN_MAPPING=ip-location-db ./bin/builder.js --state-dir $(DEMO_STATE) --releases-dir $(DEMO_RELEASES) release --demo

demo: demo-release
	./bin/builder.js --releases-dir $(DEMO_RELEASES) inspect | head -40
	@echo
	@echo "Demo release built in $(DEMO_RELEASES). The API server arrives with the next milestone;"
	@echo "until then query the release offline, e.g.: ./bin/builder.js --releases-dir $(DEMO_RELEASES) inspect"

# Full-scale build: all of ../shared/data plus a generated seed of 1,000,000 domains, 3 rounds.
bench-build: build
	node dist/test/bench/bench-build.js --shared ../shared/data --dir $(BENCH_DIR) --domains $${DOMAINS:-1000000} --rounds 3

bench: bench-build

# Every supported real file of ../shared/data through `builder import` (counts for PROVENANCE.md).
import-shared: build
	scripts/import-shared-data.sh

clean:
	rm -rf dist var .tap
