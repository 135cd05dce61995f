# Ferry in a container: the page is built with Node, embedded into the shipped binary built with
# Rust, and only that binary ships, in a slim image running as an unprivileged user.
# Build: docker build -t ferry .   Run: docker run -p 3020:3020 -v ferry-data:/var/lib/ferry/data ferry

# 1. The demo page (apps/demo/dist) from the workspace's sources.
FROM node:20-bookworm-slim AS page
WORKDIR /src
COPY package.json package-lock.json ./
COPY packages/core/package.json packages/core/
COPY packages/react/package.json packages/react/
COPY apps/demo/package.json apps/demo/
COPY e2e/package.json e2e/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY packages packages
COPY apps/demo apps/demo
RUN npm run build

# 2. The shipped binary (the `dist` profile: fat LTO, one codegen unit), with the page from stage 1
#    inside it.
FROM rust:1.95-bookworm AS server
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY crates crates
COPY bench/tus/loadgen bench/tus/loadgen
COPY --from=page /src/apps/demo/dist apps/demo/dist
RUN cargo build --profile dist --locked -p ferry

# 3. The runtime: the binary, CA certificates (HTTPS to S3 and link imports), curl for the health check.
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --user-group --home-dir /var/lib/ferry --create-home ferry \
 && mkdir -p /var/lib/ferry/data \
 && chown ferry:ferry /var/lib/ferry/data
COPY --from=server /src/target/dist/ferry /usr/local/bin/ferry
USER ferry
WORKDIR /var/lib/ferry
ENV FERRY_LISTEN=0.0.0.0:3020 \
    FERRY_DATA_DIR=/var/lib/ferry/data
VOLUME ["/var/lib/ferry/data"]
EXPOSE 3020
# Checks the port of the default FERRY_LISTEN; change both together.
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
  CMD curl -fsS http://127.0.0.1:3020/health || exit 1
# SIGTERM: requests in flight get 10 s, so give `docker stop` a little more (-t 15).
STOPSIGNAL SIGTERM
ENTRYPOINT ["ferry"]
CMD ["serve"]
