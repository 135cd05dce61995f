# Ferry's entry points. `make run` and `make test` work on a fresh clone: they install the npm
# dependencies, provision the test tools and build what they need first.

SHELL := /bin/bash
NPM_STAMP := node_modules/.package-lock.json
UI_STAMP := apps/demo/dist/index.html
UI_SOURCES := $(shell find packages apps/demo -path '*/node_modules' -prune -o -path '*/dist' -prune -o -type f -print)

.PHONY: run test tools deps ui server release dist packages docs lint lint-rust lint-ts test-rust test-ts e2e bench clean

## run: build the page and the server (the page is embedded in it), then serve on http://127.0.0.1:3020/
run: release
	./target/release/ferry serve

## test: provision the tools, then every check and suite: formatting, lints, types, API docs,
## unit, integration, end to end (including the npm tarballs in an app outside the repository)
test: tools lint test-rust test-ts e2e

## tools: Chromium, redis-server, haproxy, ffmpeg, libvips-tools, ClamAV (apt) and Garage (built once into ~/.cache/ferry)
tools:
	@for ensure in scripts/ensure-*.sh; do "$$ensure" || exit 1; done

deps: $(NPM_STAMP)

$(NPM_STAMP): package.json package-lock.json packages/*/package.json apps/demo/package.json e2e/package.json
	npm ci --no-audit --no-fund
	@touch $(NPM_STAMP)

ui: $(UI_STAMP)

$(UI_STAMP): $(NPM_STAMP) $(UI_SOURCES)
	npm run build

# Every cargo build below comes after `ui`: `ferry` embeds apps/demo/dist when it compiles
# (crates/ferry/build.rs rebuilds it when the page changes).
# The binaries the end-to-end suite runs (target/debug/ferry, ferry-fakes, ferry-garage), built as
# `cargo test --workspace` builds them: the integration tests `serve` (ferry) and `garage`
# (ferry-testkit) need them, and the same invocation resolves the same features, so after
# `test-rust` nothing recompiles. (`cargo build -p ferry -p ferry-testkit --bins` resolved other
# features and rebuilt most crates a second time.)
server: ui
	cargo test --workspace --no-run --test serve --test garage

release: ui
	cargo build --release -p ferry

## dist: the binary that ships, as the Dockerfile and `cargo install --profile dist` build it, into
## target/dist/ferry (the `dist` profile: fully optimised whatever `release` becomes)
dist: ui
	cargo build --profile dist -p ferry

## packages: @ferry/core and @ferry/react built into their dist/ (npm pack does this itself)
packages: deps
	npm run build --workspace packages/core --workspace packages/react

## docs: the packages' API reference, generated from their types into docs/api/
docs: deps
	npx typedoc

lint: lint-rust lint-ts

lint-rust: ui
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings

lint-ts: deps
	npx tsc --noEmit -p tsconfig.json
	npx biome check .
	npx typedoc --emit none

# --no-fail-fast: one failing test binary does not hide the others' results.
test-rust: ui
	cargo test --workspace --no-fail-fast

test-ts: deps
	npx vitest run

e2e: deps ui server
	cd e2e && npx vitest run

## bench: side-by-side benchmarks (not part of test; see bench/README.md)
bench:
	@if [ -x bench/run ]; then bench/run; else echo "no benchmarks yet"; fi

clean:
	cargo clean
	rm -rf node_modules apps/demo/dist packages/*/dist docs/api
