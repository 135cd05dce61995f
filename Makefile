# Ferry's entry points. `make run` and `make test` work on a fresh clone: they install the npm
# dependencies and build what they need first.

SHELL := /bin/bash
NPM_STAMP := node_modules/.package-lock.json
UI_STAMP := apps/demo/dist/index.html
UI_SOURCES := $(shell find packages apps/demo -path '*/node_modules' -prune -o -path '*/dist' -prune -o -type f -print)

.PHONY: run test deps ui server lint lint-rust lint-ts test-rust test-ts e2e bench clean

## run: build the page and the server, then serve on http://127.0.0.1:3020/
run: ui
	cargo build --release -p ferry
	./target/release/ferry serve

## test: every check and test suite: formatting, lints, types, unit, integration, end to end
test: lint test-rust test-ts e2e

deps: $(NPM_STAMP)

$(NPM_STAMP): package.json package-lock.json packages/*/package.json apps/demo/package.json e2e/package.json
	npm ci --no-audit --no-fund
	@touch $(NPM_STAMP)

ui: $(UI_STAMP)

$(UI_STAMP): $(NPM_STAMP) $(UI_SOURCES)
	npm run build

server:
	cargo build -p ferry -p ferry-testkit --bins

lint: lint-rust lint-ts

lint-rust:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings

lint-ts: deps
	npx tsc --noEmit -p tsconfig.json
	npx biome check .

test-rust:
	cargo test --workspace

test-ts: deps
	npx vitest run

e2e: deps ui server
	cd e2e && npx vitest run

## bench: side-by-side benchmarks (not part of test; see bench/README.md)
bench:
	@if [ -x bench/run ]; then bench/run; else echo "no benchmarks yet"; fi

clean:
	cargo clean
	rm -rf node_modules apps/demo/dist
